"""Which shard of the complexes this process builds, and with how many workers, on a cluster.

A build is split into K shards by position: complex number k (in PDB-id order) belongs to shard
``k % K``. Under a Slurm job array (``sbatch --array``) the shard comes from the environment
Slurm sets for each array task, so one job script serves every task:

* ``--num-shards K`` given, ``--shard-index`` not: the shard is ``SLURM_ARRAY_TASK_ID`` (must be
  ``0..K-1``). This is what ``misi-bench slurm-script`` writes, because it stays right when a
  single failed task is re-submitted alone (``sbatch --array=1``).
* neither given: K is the array's size (``SLURM_ARRAY_TASK_COUNT``, which must equal
  ``SLURM_ARRAY_TASK_MAX - SLURM_ARRAY_TASK_MIN + 1``) and the shard is
  ``SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN``.
* outside an array, or with both flags: the flags (default: one shard).

The worker count defaults to ``SLURM_CPUS_PER_TASK`` (the CPUs Slurm gave the task), else 1.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ..core.errors import MisiError
from .runner import run_jobs

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ShardChoice:
    """The shard a build process generates: ``index`` of ``count``, and where that came from."""

    count: int
    index: int
    origin: str  # "flags", "slurm" or "default"

    @property
    def from_slurm(self) -> bool:
        return self.origin == "slurm"


def _env_int(env: Mapping[str, str], name: str) -> int | None:
    value = env.get(name, "").strip()
    if not value:
        return None
    try:
        return int(value)
    except ValueError:
        raise MisiError(f"environment variable {name}={value!r} is not an integer") from None


def choose_shard(
    num_shards: int | None = None,
    shard_index: int | None = None,
    env: Mapping[str, str] | None = None,
) -> ShardChoice:
    """The shard to build from the ``--num-shards``/``--shard-index`` flags (None when not given)
    and, inside a Slurm array task, the ``SLURM_ARRAY_TASK_*`` variables of ``env``."""
    env = os.environ if env is None else env
    task_id = _env_int(env, "SLURM_ARRAY_TASK_ID")
    if shard_index is not None or task_id is None:
        count = 1 if num_shards is None else int(num_shards)
        choice = ShardChoice(
            count,
            0 if shard_index is None else int(shard_index),
            "default" if num_shards is None and shard_index is None else "flags",
        )
    elif num_shards is not None:
        choice = ShardChoice(int(num_shards), task_id, "slurm")
    else:
        low = _env_int(env, "SLURM_ARRAY_TASK_MIN") or 0
        high = _env_int(env, "SLURM_ARRAY_TASK_MAX")
        count = _env_int(env, "SLURM_ARRAY_TASK_COUNT")
        if high is None or count is None or count != high - low + 1:
            raise MisiError(
                f"Slurm array task {task_id}: the array is not a contiguous range "
                f"(SLURM_ARRAY_TASK_MIN={low}, MAX={high}, COUNT={count}); pass --num-shards K "
                "and use array indices 0..K-1"
            )
        choice = ShardChoice(count, task_id - low, "slurm")
    if not (choice.count >= 1 and 0 <= choice.index < choice.count):
        where = " (from SLURM_ARRAY_TASK_ID)" if choice.from_slurm else ""
        raise MisiError(f"shard index {choice.index}{where} is not in 0..{choice.count - 1}")
    if choice.from_slurm:
        log.info(
            "Slurm array task %s of job %s: building shard %d of %d",
            task_id,
            env.get("SLURM_ARRAY_JOB_ID", "?"),
            choice.index,
            choice.count,
        )
    return choice


def check_workers(workers: int | None, what: str = "--workers") -> int | None:
    """``workers`` unchanged when it is None or a positive count; MisiError naming ``what`` for
    zero or a negative count."""
    if workers is not None and int(workers) < 1:
        raise MisiError(f"{what} must be a positive number of worker processes, got {workers}")
    return None if workers is None else int(workers)


def available_cpus() -> int:
    """CPUs this process may run on (its affinity mask, e.g. a Slurm allocation), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - platforms without affinity masks
        return max(1, os.cpu_count() or 1)


def default_workers(workers: int | None = None, env: Mapping[str, str] | None = None) -> int:
    """``workers`` if given, else the CPUs Slurm gave this task (``SLURM_CPUS_PER_TASK``), else 1.
    Zero or a negative count is an error (MisiError)."""
    if workers is not None:
        return int(check_workers(workers))
    env = os.environ if env is None else env
    cpus = _env_int(env, "SLURM_CPUS_PER_TASK")
    if cpus:
        log.info("using %d workers (SLURM_CPUS_PER_TASK)", cpus)
        return max(1, cpus)
    return 1


def shard_members(ids: Sequence[str], num_shards: int) -> dict[int, list[str]]:
    """Shard number -> the PDB ids it generates (ids in PDB-id order, as the build splits them)."""
    shards: dict[int, list[str]] = {}
    for k, pdb_id in enumerate(sorted(ids)):
        shards.setdefault(k % num_shards, []).append(pdb_id)
    return shards


def missing_units_message(all_ids: Sequence[str], missing: Sequence[str], num_shards: int) -> str:
    """Why a merge refuses to run: which shards (of ``num_shards``) and complexes are not done."""
    gone = set(missing)
    lines = [f"cannot merge: {len(gone)} of {len(all_ids)} complexes are not generated yet"]
    if num_shards > 1:
        bad = {
            s: [p for p in ids if p in gone]
            for s, ids in shard_members(all_ids, num_shards).items()
        }
        bad = {s: ids for s, ids in bad.items() if ids}
        lines.append(
            f"; missing shard(s) {','.join(str(s) for s in sorted(bad))} of {num_shards}: "
        )
        lines.append("; ".join(f"shard {s}: {_some(ids)}" for s, ids in sorted(bad.items())))
        lines.append(
            f". Re-run those shards (with a `misi-bench slurm-script` script: bash SCRIPT "
            f"{','.join(str(s) for s in sorted(bad))}); finished complexes are kept"
        )
    else:
        lines.append(
            f": {_some(sorted(gone))}. Run the remaining shards first; finished complexes are kept"
        )
    return "".join(lines)


def _some(ids: Sequence[str], shown: int = 8) -> str:
    more = f" and {len(ids) - shown} more" if len(ids) > shown else ""
    return ", ".join(ids[:shown]) + more


def pool_map(runner, fn: Callable, items: Sequence, desc: str | None = None) -> list:
    """``fn`` over ``items`` in order on ``runner`` (a ``runner.JobRunner``, whose workers it
    uses when it has several and there is more than one item), or in this process when None. The
    result is the same either way. ``desc``: the name of the stage's progress bar over the items
    (drawn when a build shows its bars, ``progress.shown``)."""
    return run_jobs(runner, fn, items, desc)
