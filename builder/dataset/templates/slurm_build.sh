#!/bin/bash
#SBATCH --job-name=@JOB_NAME@
#SBATCH --array=0-@LAST_SHARD@
#SBATCH --cpus-per-task=@CPUS@
#SBATCH --time=@TIME@
#SBATCH --output=@LOG_DIR@/%x-%A_%a.out
#SBATCH --export=ALL
@EXTRA_SBATCH@
# MiSI-Bench cluster build (template version @TEMPLATE_VERSION@), written by `misi-bench slurm-script`
# (misi-bench @PACKAGE_VERSION@). Source @SOURCE_TEXT@ -> @OUT_TEXT@, @SHARDS@ shards.
#
#   bash THIS_FILE         submit the @SHARDS@ build shards as a job array, then one job that starts only
#                          when every shard succeeded (--dependency=afterok): the merge@PUSH_NOTE@
#   bash THIS_FILE 1,4     re-submit only shards 1 and 4 (failed, cancelled or out of time), then the
#                          merge again; finished complexes are kept, so a shard resumes where it stopped
#   sbatch THIS_FILE       the shards alone (array task I builds shard I)
#   bash THIS_FILE --merge run the merge here and now (it refuses, naming the missing shards, if any
#                          shard is unfinished)
# A shard that fails cancels the merge waiting for it (--kill-on-invalid-dep=yes).
set -euo pipefail

MISI=(@MISI@)
SOURCE=@SOURCE@
OUT=@OUT@
SHARDS=@SHARDS@
BUILD_ARGS=(@BUILD_ARGS@)

if [ -n "${SLURM_ARRAY_TASK_ID:-}" ]; then
    # one array task: shard SLURM_ARRAY_TASK_ID, with SLURM_CPUS_PER_TASK workers
    exec "${MISI[@]}" build --source "$SOURCE" --out "$OUT" --num-shards "$SHARDS" --no-merge --quiet ${BUILD_ARGS[@]+"${BUILD_ARGS[@]}"}
fi

if [ "${1:-}" = "--merge" ]; then
    "${MISI[@]}" build --source "$SOURCE" --out "$OUT" --num-shards "$SHARDS" --merge-only --quiet ${BUILD_ARGS[@]+"${BUILD_ARGS[@]}"}
@PUSH_COMMAND@
    exit 0
fi

SELF=$(readlink -f "${BASH_SOURCE[0]}")
mkdir -p @LOG_DIR_Q@
array_job=$(sbatch --parsable --array="${1:-0-@LAST_SHARD@}" "$SELF")
array_job=${array_job%%;*}
merge_job=$(sbatch --parsable --job-name=@JOB_NAME@-merge --dependency=afterok:"$array_job" \
    --kill-on-invalid-dep=yes --cpus-per-task=@CPUS@ --time=@MERGE_TIME@ --output=@LOG_DIR_Q@/%x-%j.out --export=ALL \
    @MERGE_SBATCH@--wrap="$(printf '%q ' bash "$SELF" --merge)")
merge_job=${merge_job%%;*}
echo "shards ${1:-0-@LAST_SHARD@}: array job $array_job; merge: job $merge_job (after the shards succeed)"
echo "array_job=$array_job merge_job=$merge_job"
