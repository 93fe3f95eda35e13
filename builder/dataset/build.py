"""Dataset build: complexes -> questions -> rendered images -> Parquet shards, card, manifest.

Work is split by complex. Each complex is one unit that writes its rows to
``<out>/.work/<config hash>/complexes/<pdbid>.parquet`` and then a status file (the completion
marker), both atomically; a rerun reuses a finished unit only while the sha256 of its input files
(and of the complexes it read) are those its status records (``resume.reuse_problem``), so a killed
build resumes without redoing finished complexes and a changed input is rebuilt. Units depend only
on (inputs, configuration, seed), never on worker count or order, and the merge reads them in
PDB-id order: one worker, many workers and a resumed build give byte-identical shards.

The merge writes the new release into a staging folder beside the current one; it is validated
and audited there and switched in only then (``publish``), so a failed merge, validation or audit
leaves the previous release as it was. Build and merge hold the folder's writer lock (``lock``).

Cluster use: run ``build --num-shards K --shard-index I --no-merge`` on K machines (each does the
complexes whose position modulo K is I), then ``build --merge-only`` once; under Slurm see
``cluster`` (shard from the array task) and ``slurm`` (the job script).
"""

from __future__ import annotations

import json
import logging
from contextlib import nullcontext
from dataclasses import asdict
from pathlib import Path

from ..core.errors import MisiError
from ..core.profiles import LEGACY_PROFILE
from ..core.records import ComplexRef
from ..store.cluster import missing_units_message
from ..store.id_list import default_structures_dir, is_id_source
from ..store.identity_split import IDENTITY_SPLIT
from ..store.progress import shown as progress_shown
from ..store.runner import JobRunner, Setup
from ..store.sources import SPLITS, assign_splits, discover
from ..tasks.data import task_data
from .archive import fetch_entries
from .config import BuildConfig, BuildOptions
from .identity_build import fetch_before_identity_split, identity_draw
from .lock import command_line, folder_lock
from .pipeline import DEFAULT_STEPS, BuildState, run_steps
from .publish import recover, staging_dir
from .resume import Checksums, finished, skipped_units, stale_units
from .units import MISSING_STRUCTURE, UnitResult, run_unit, unit_key, write_json_atomic

log = logging.getLogger(__name__)


# ---------------------------------------------------------------------------- the build


def plan(cfg: BuildConfig, out: Path | None = None) -> tuple[dict[str, ComplexRef], dict[str, str]]:
    """The build's complexes (after ``limit``) and their split: a split file's, else the rule
    ``cfg.split`` draws (``identity30``: :mod:`.identity_split`, from the sequences of all the
    build's complexes, cached in ``<out>/.work/``; ``hash``: ``sources.assign_splits``). The
    same in every shard, resume and merge of one configuration."""
    refs = discover(cfg.source, cfg.structures)
    if cfg.limit is not None:
        refs = refs[: int(cfg.limit)]
    by_id = {r.pdb_id: r for r in refs}
    if cfg.split_file is None and cfg.split == IDENTITY_SPLIT:
        return by_id, identity_draw(cfg, by_id, out)
    splits = assign_splits(sorted(by_id), int(cfg.seed), cfg.split_file)
    left_out = {p for p, s in splits.items() if s not in SPLITS}
    if left_out:  # a split list's val complexes and those no list names (docs/inputs.md)
        log.info("split file %s leaves out %d complexes", cfg.split_file, len(left_out))
        by_id = {p: r for p, r in by_id.items() if p not in left_out}
        splits = {p: s for p, s in splits.items() if p in by_id}
    return by_id, splits


def _lacks_structure(work: Path, ref: ComplexRef) -> bool:
    """A raw entry whose file is absent and whose unit has not run, or was skipped for that."""
    if ref.kind != "raw" or ref.path.exists():
        return False
    status = work / f"{ref.pdb_id}.status.json"
    return not status.exists() or MISSING_STRUCTURE in json.loads(
        status.read_text(encoding="utf-8")
    ).get("error", "")


def _fetch_missing(
    options: BuildOptions, refs: dict[str, ComplexRef], splits: dict[str, str], pending, work: Path
) -> None:
    """Download the pending entries that the structures folder lacks; an entry that cannot be had
    is recorded as a skipped complex (with the reason) without stopping the build."""
    cfg = options.config
    folder = Path(cfg.structures).expanduser() if cfg.structures else default_structures_dir()
    fetched = fetch_entries(pending, folder, options.mirror, options.fetch_policy, options.progress)
    for pdb_id, result in fetched.items():
        if result.error:
            failed = UnitResult(
                pdb_id,
                splits[pdb_id],
                False,
                error=f"{refs[pdb_id].describe()}: {MISSING_STRUCTURE}; fetch failed: {result.error}",
                key=unit_key(pdb_id, splits),
            )
            write_json_atomic(work / f"{pdb_id}.status.json", asdict(failed))


def work_dir(out: Path, cfg: BuildConfig) -> Path:
    return Path(out) / ".work" / cfg.config_hash / "complexes"


#: Marker of the profile a (possibly unfinished) build in ``.work/<config hash>/`` was made with.
PROFILE_MARKER = "profile"


def check_profile_of_folder(out: Path, cfg: BuildConfig) -> None:
    """Refuse to build, resume or merge into ``out`` with another profile than the one its
    finished build (manifest) or unfinished builds (``.work/*/profile``) were made with."""
    out = Path(out)
    found: dict[str, str] = {}
    manifest = out / "manifest.json"
    if manifest.exists():
        try:
            found[str(manifest)] = json.loads(manifest.read_text(encoding="utf-8")).get(
                "profile", LEGACY_PROFILE
            )
        except (OSError, ValueError):
            pass
    for marker in sorted((out / ".work").glob(f"*/{PROFILE_MARKER}")):
        if not (out / ".work" / marker.parent.name / "done").exists():
            found[str(marker.parent)] = marker.read_text(encoding="utf-8").strip()
    for where, profile in found.items():
        if profile != cfg.profile:
            raise MisiError(
                f"{out}: holds a build of profile {profile!r} ({where}); this build is {cfg.profile!r}: "
                f"build with --profile {profile} to resume it, or into another --out folder"
            )


def build_dataset(options: BuildOptions | None = None, /, **changes) -> dict:
    """Build the dataset folder ``options.out`` (layout: docs/architecture.md) and return its
    manifest ({} for a shard run that does not merge). ``options``: one :class:`BuildOptions`
    (what is built and how the run goes); ``changes``: its fields (or its ``BuildConfig``'s) by
    name, applied on top (``build_dataset(source="samples", out=..., limit=4)``).

    ``options.audit`` runs the reproduction, uniqueness, legibility and rotamer checks of
    ``misi-bench audit`` on ``audit_sample`` questions per config (test split; train when a
    config has no test question) and records the summary under ``manifest["audit"]``; a question
    whose images do not reproduce fails the build, an ambiguous one is logged as a warning, and
    a task whose answer-bearing labels are legible in fewer than ``LEGIBLE_LABEL_FLOOR`` of
    their questions' pictures fails the build. The ``profile`` is part of the
    build's identity: a folder holding a build of another profile is refused. A ``balanced``
    decoys build fails when an options-only rule beats chance by more than
    :data:`blind.MAX_EXCESS` (``blind.options_only_gate``).
    """
    options = BuildOptions.of(options, **changes) if changes else options or BuildOptions()
    with progress_shown(options.progress):
        with folder_lock(options.out, command_line()) if options.locked else nullcontext():
            refs, splits, work = _prepare(options)
            if not options.merge_only:
                splits = _generate(options, refs, splits, work)
            if not options.merge and not options.merge_only:
                return {}
            _check_mergeable(options, refs, splits, work)
            _check_test_split(options, refs, splits, work)
            with folder_lock(options.out, command_line()):
                recover(options.out)
                return _merge_check_publish(options, work, refs, splits)


def _prepare(options: BuildOptions) -> tuple[dict[str, ComplexRef], dict[str, str], Path]:
    """Checks before any work (a locked run first finishes an interrupted switch), then the plan
    (complexes and splits) and the work folder, marked with the build's profile."""
    cfg = options.config
    if options.locked:
        recover(options.out)
    check_profile_of_folder(options.out, cfg)
    _check_profile_covers_tasks(cfg)
    fetch_before_identity_split(options)
    refs, splits = plan(cfg, options.out)
    work = work_dir(options.out, cfg)
    work.mkdir(parents=True, exist_ok=True)
    splits = settle_splits(cfg, refs, splits, work)  # around the skips a run before recorded
    (work.parent / PROFILE_MARKER).write_text(cfg.profile + "\n", encoding="utf-8")
    return refs, splits, work


def _check_mergeable(options: BuildOptions, refs, splits, work: Path) -> None:
    """Refuse to merge while a unit is missing, or (merging units built elsewhere) was built
    from other inputs than those now in the source."""
    missing = [p for p in sorted(refs) if not (work / f"{p}.status.json").exists()]
    if missing:
        raise MisiError(missing_units_message(sorted(refs), missing, options.num_shards))
    check = options.merge_only or options.num_shards > 1
    stale = stale_units(work, refs, splits) if check else {}
    if stale:
        first = next(iter(stale))
        raise MisiError(
            f"{options.out}: {len(stale)} unit(s) were built from other inputs than those now in "
            f"the source ({first}: {stale[first]}); build their shards again, then merge"
        )


def _generate(options: BuildOptions, refs, splits, work: Path) -> dict[str, str]:
    """Run the units of this shard that are not finished (or may not be reused); when complexes
    turn out to be skipped, the split is drawn again around them (:func:`settle_splits`) and the
    units it changes are run again. Returns the split the units were made with."""
    cfg = options.config
    shard, count = options.shard_index, options.num_shards
    mine = [p for k, p in enumerate(sorted(refs)) if k % count == shard]
    if options.fetch and is_id_source(cfg.source):
        pending = [p for p in mine if _lacks_structure(work, refs[p])]
        _fetch_missing(options, refs, splits, pending, work)
    sums = Checksums(refs)
    todo = [p for p in mine if not finished(work, refs[p], splits, sums)]
    log.info(
        "build %s: %d complexes in this shard, %d already done, %d workers",
        cfg.config_hash,
        len(mine),
        len(mine) - len(todo),
        options.workers,
    )
    _run_units(todo, refs, splits, cfg, work, options.workers)
    for _ in range(len(refs)):  # each round only adds skips; one round is the rule
        settled = settle_splits(cfg, refs, splits, work)
        if settled == splits:
            break
        moved = sorted(p for p in settled if settled[p] != splits[p])
        log.info("split drawn again around skipped complexes: %s", ", ".join(moved[:10]))
        splits = settled
        todo = [p for p in mine if not finished(work, refs[p], splits, sums)]
        _run_units(todo, refs, splits, cfg, work, options.workers)
    return splits


def settle_splits(cfg: BuildConfig, refs, splits: dict[str, str], work: Path) -> dict[str, str]:
    """The split drawn around the complexes whose units are recorded as skipped (so a skipped
    complex takes no test slot: ``sources.assign_splits``); a split file's split as it is."""
    if cfg.split_file is not None:
        return splits
    skipped = skipped_units(work, refs, Checksums(refs))
    if cfg.split == IDENTITY_SPLIT:
        return identity_draw(cfg, refs, work.parent.parent.parent, frozenset(skipped))
    return assign_splits(sorted(refs), int(cfg.seed), skipped=frozenset(skipped))


def _check_test_split(options: BuildOptions, refs, splits: dict[str, str], work: Path) -> None:
    """Refuse a merge whose test split would be empty because every complex planned for it was
    skipped (a split file's test list; a drawn split with fewer than four readable complexes is
    only logged: it draws no minimum)."""
    cfg = options.config
    skipped = skipped_units(work, refs, Checksums(refs))
    planned = [p for p in sorted(refs) if splits[p] == "test"]
    if not planned or any(p not in skipped for p in planned):
        return
    why = "; ".join(f"{p}: {skipped[p][:200]}" for p in planned[:3])
    if cfg.split_file is not None:
        raise MisiError(
            f"{cfg.split_file}: every complex it puts in test was skipped ({len(planned)}: {why}): "
            "the build would have no test split; nothing was merged (fix those complexes or "
            "name others in test)"
        )
    log.warning(
        "no test split: only %d complexes could be read (a drawn split puts at least two in "
        "test from four on); skipped: %s",
        len(refs) - len(skipped),
        why,
    )


def _merge_check_publish(options: BuildOptions, work: Path, refs, splits) -> dict:
    """Merge into a staging folder beside the current release, check it there, then switch it
    in: the steps of ``pipeline.DEFAULT_STEPS``, one loop. Any failure leaves the current release
    of ``out`` untouched."""
    staged = staging_dir(options.out, options.config.config_hash)
    state = BuildState(options, work, refs, splits, staged)
    return run_steps(DEFAULT_STEPS, state)


def _check_profile_covers_tasks(cfg: BuildConfig) -> None:
    """One clear error before any work when a requested task's data file is missing or lacks
    the build's profile (``tasks.data`` checks each file when it reads it)."""
    for task in cfg.tasks:
        task_data(task).profile(cfg.profile)


def _run_units(todo: list[str], refs, splits, cfg, work: Path, workers: int) -> None:
    """Run the units ``todo`` (PDB ids) on ``workers`` processes, reporting each as it ends."""
    with JobRunner(workers, Setup(_unit_plan, (refs, splits, cfg, work))) as runner:
        for result in runner.map(_unit_job, todo, "complexes", unit="cx"):
            _report(result)


def _unit_plan(refs, splits, cfg, work: Path) -> tuple:
    """A build worker's state: what every unit reads besides its PDB id."""
    return refs, splits, cfg, work


def _unit_job(plan: tuple, pdb_id: str) -> UnitResult:
    return run_unit((pdb_id, *plan))


def _report(result: UnitResult) -> None:
    if not result.ok:
        log.warning("skipped %s: %s", result.pdb_id, result.error)
    for task, reason in result.skipped_tasks.items():
        log.info("%s: no %s questions: %s", result.pdb_id, task, reason)
