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

import contextlib
import functools
import inspect
import json
import logging
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from tqdm.auto import tqdm

from ..chemistry.hbonds import DEFAULT_HBOND_MODE
from ..core.constants import DEFAULT_IMAGE_SIZE
from ..core.errors import MisiError
from ..core.profiles import DEFAULT_PROFILE, LEGACY_PROFILE, check_profile
from ..core.records import ComplexRef
from ..tasks.data import task_data
from . import blind
from .archive import FetchPolicy, fetch_entries
from .audit import audit_dataset
from .build_warnings import log_validity_warnings
from .cluster import missing_units_message
from .config import DEFAULT_OUT, BuildConfig
from .id_list import default_structures_dir, is_id_source
from .lock import command_line, folder_lock
from .manifest import write_manifest
from .merge import merge_units
from .progress import enabled as progress_enabled
from .progress import shown as progress_shown
from .publish import discard, recover, staging_dir, switch
from .resume import Checksums, finished, stale_units
from .sources import SPLITS, assign_splits, discover
from .units import MISSING_STRUCTURE, UnitResult, run_unit, unit_key, write_json_atomic
from .validate import validate_dataset
from .workers import process_pool

log = logging.getLogger(__name__)

#: Questions per config that the build's audit checks (see ``build_dataset``).
AUDIT_SAMPLE = 4
#: Fetch settings when a caller gives none (a frozen dataclass: safe to share as a default).
DEFAULT_FETCH_POLICY = FetchPolicy()

# ---------------------------------------------------------------------------- the build


def plan(cfg: BuildConfig) -> tuple[dict[str, ComplexRef], dict[str, str]]:
    refs = discover(cfg.source, cfg.structures)
    if cfg.limit is not None:
        refs = refs[: int(cfg.limit)]
    by_id = {r.pdb_id: r for r in refs}
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
    cfg: BuildConfig,
    refs: dict[str, ComplexRef],
    splits: dict[str, str],
    pending: list[str],
    work: Path,
    mirror: str | None,
    policy: FetchPolicy,
    progress: bool,
) -> None:
    """Download the pending entries that the structures folder lacks; an entry that cannot be had
    is recorded as a skipped complex (with the reason) without stopping the build."""
    folder = Path(cfg.structures).expanduser() if cfg.structures else default_structures_dir()
    for pdb_id, result in fetch_entries(pending, folder, mirror, policy, progress).items():
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


def _with_stage_bars(fn):
    """Show the merge, validation and audit bars (``progress.shown``) when ``progress`` is on."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        bound = inspect.signature(fn).bind(*args, **kwargs)
        bound.apply_defaults()
        with progress_shown(bound.arguments["progress"]):
            return fn(*args, **kwargs)

    return run


@_with_stage_bars
def build_dataset(
    source: str | Path = "samples",
    out: str | Path = DEFAULT_OUT,
    tasks: Sequence[str] = (),
    seed: int = 0,
    limit: int | None = None,
    split_file: str | Path | None = None,
    workers: int = 1,
    image_size: int = DEFAULT_IMAGE_SIZE,
    pocket_cutoff: float = 10.0,
    num_shards: int = 1,
    shard_index: int = 0,
    merge: bool = True,
    merge_only: bool = False,
    validate: bool = True,
    tiny_per_task: int = 50,
    progress: bool = True,
    structures: str | Path | None = None,
    fetch: bool = False,
    mirror: str | None = None,
    fetch_policy: FetchPolicy = DEFAULT_FETCH_POLICY,
    audit: bool = True,
    audit_sample: int = AUDIT_SAMPLE,
    hbonds: str = DEFAULT_HBOND_MODE,
    decoys: str = "paper",
    profile: str = DEFAULT_PROFILE,
) -> dict:
    """Build the dataset folder ``out`` (SPEC section 8) and return its manifest.

    ``num_shards``/``shard_index`` restrict the generation to one shard of the complexes (run the
    merge afterwards with ``merge_only=True``). ``workers`` processes run complexes in parallel.
    For an ``ids:LIST.csv`` source, ``structures`` is the folder of entries (default
    ``$MISI_BENCH_STRUCTURES`` or ``~/.cache/misi-bench/pdb``) and ``fetch`` downloads the missing
    ones of this shard from ``mirror`` (default: the PDB archive's file service) first.
    ``audit`` runs the reproduction and uniqueness checks of ``misi-bench audit`` on
    ``audit_sample`` questions per config (test split; train when a config has no test question)
    and records the summary under ``manifest["audit"]``; a question whose images do not
    reproduce fails the build, an ambiguous one is logged as a warning. ``profile`` (``paper``
    or ``explicit``, see ``builder.core.profiles``) selects prompts, parameters and scoring; it is
    part of the build's identity, and a folder holding a build of another profile is refused.
    reproduce fails the build, an ambiguous one is logged as a warning.
    ``decoys``: how the choice tasks draw their options (``paper`` or ``balanced``, see
    ``tasks.decoys``); a ``balanced`` build fails when an options-only rule beats chance by more
    than :data:`blind.MAX_EXCESS` (``blind.options_only_gate``).
    """
    cfg = BuildConfig(
        source=str(source),
        tasks=tuple(tasks),
        seed=int(seed),
        limit=limit,
        split_file=str(split_file) if split_file else None,
        image_size=int(image_size),
        pocket_cutoff=float(pocket_cutoff),
        tiny_per_task=int(tiny_per_task),
        structures=str(structures) if structures else None,
        hbonds=str(hbonds),
        decoys=str(decoys),
        profile=check_profile(profile),
    )
    if not (1 <= num_shards and 0 <= shard_index < num_shards):
        raise MisiError(f"shard index {shard_index} is not in 0..{num_shards - 1}")
    out = Path(out)
    # cluster shard runs (--num-shards K --no-merge) write only their own units, atomically, and
    # may run at once; everything else, and every merge, holds the folder's writer lock
    locked = num_shards == 1 or merge_only
    with folder_lock(out, command_line()) if locked else contextlib.nullcontext():
        if locked:
            recover(out)
        check_profile_of_folder(out, cfg)
        _check_profile_covers_tasks(cfg)
        refs, splits = plan(cfg)
        work = work_dir(out, cfg)
        work.mkdir(parents=True, exist_ok=True)
        (work.parent / PROFILE_MARKER).write_text(cfg.profile + "\n", encoding="utf-8")
        if not merge_only:
            _generate(
                cfg,
                refs,
                splits,
                work,
                num_shards,
                shard_index,
                workers,
                progress,
                fetch,
                mirror,
                fetch_policy,
            )
        if not merge and not merge_only:
            return {}
        missing = [p for p in sorted(refs) if not (work / f"{p}.status.json").exists()]
        if missing:
            raise MisiError(missing_units_message(sorted(refs), missing, num_shards))
        stale = stale_units(work, refs, splits) if merge_only or num_shards > 1 else {}
        if stale:
            first = next(iter(stale))
            raise MisiError(
                f"{out}: {len(stale)} unit(s) were built from other inputs than those now in the "
                f"source ({first}: {stale[first]}); build their shards again, then merge"
            )
        with folder_lock(out, command_line()):
            recover(out)
            return _merge_check_publish(
                out, work, cfg, refs, splits, max(1, int(workers)), validate, audit, audit_sample
            )


def _generate(
    cfg, refs, splits, work, num_shards, shard_index, workers, progress, fetch, mirror, policy
) -> None:
    """Run the units of this shard that are not finished (or may not be reused)."""
    mine = [p for k, p in enumerate(sorted(refs)) if k % num_shards == shard_index]
    if fetch and is_id_source(cfg.source):
        pending = [p for p in mine if _lacks_structure(work, refs[p])]
        _fetch_missing(cfg, refs, splits, pending, work, mirror, policy, progress)
    sums = Checksums(refs)
    todo = [p for p in mine if not finished(work, refs[p], splits, sums)]
    log.info(
        "build %s: %d complexes in this shard, %d already done, %d workers",
        cfg.config_hash,
        len(mine),
        len(mine) - len(todo),
        workers,
    )
    _run_units(todo, refs, splits, cfg, work, workers, progress)


def _merge_check_publish(
    out: Path, work: Path, cfg, refs, splits, workers: int, validate, audit, audit_sample
) -> dict:
    """Merge into a staging folder beside the current release, validate and audit it there, then
    switch it in (``publish``). Any failure leaves the current release of ``out`` untouched."""
    staged = staging_dir(out, cfg.config_hash)
    try:
        manifest = merge_units(staged, work, cfg, refs, splits, workers=workers)
        (work.parent / "done").write_text(cfg.config_hash + "\n", encoding="utf-8")
        if validate:
            report = validate_dataset(staged, source=cfg.source, workers=workers)
            manifest["validation"] = {
                "ok": report.ok,
                "checked": report.checked,
                "problems": report.problems[:50],
            }
            write_manifest(staged, manifest)
            if not report.ok:
                raise MisiError(
                    f"{out}: validation failed: {report.problems[:3]}; nothing was published "
                    f"(the rejected build is in {staged})"
                )
        if audit:
            manifest["audit"] = _audit_sample(staged, manifest, cfg, audit_sample, workers)
            write_manifest(staged, manifest)
            broken = [
                i
                for t in manifest["audit"]["tasks"].values()
                for i in t["mismatched"] + t["errors"]
            ]
            if broken:
                raise MisiError(
                    f"{out}: audit: stored images do not reproduce: {broken[:3]} (see "
                    f"{staged / 'manifest.json'}); nothing was published"
                )
            _options_only_check(staged, manifest, cfg)
    except OSError as exc:  # e.g. a full disk: free the staged files, keep the old release
        discard(staged)
        raise MisiError(
            f"{out}: the merge failed ({exc.strerror or exc}); the previous build in {out} "
            "is unchanged"
        ) from exc
    switch(out, staged)
    return manifest


def _check_profile_covers_tasks(cfg: BuildConfig) -> None:
    """One clear error before any work when a requested task's data file is missing or lacks
    the build's profile (``tasks.data`` checks each file when it reads it)."""
    for task in cfg.tasks:
        task_data(task).profile(cfg.profile)


def _options_only_check(out: Path, manifest: dict, cfg: BuildConfig) -> None:
    """The audit's options-only check (``blind.options_only_gate``). A ``balanced`` build records
    it under ``manifest["audit"]["options_only"]`` and fails when a rule beats chance by more than
    ``blind.MAX_EXCESS``; a ``paper`` build only logs it (its manifest stays as it always was)."""
    data = blind.read_blind(out)
    if not data:
        return
    gate = blind.options_only_gate(data)
    for task, worst in gate["worst"].items():
        log.info(
            "options only, %s: best rule %s scores %.1f%% on %s (chance 25%%)",
            task,
            worst["rule"],
            100 * worst["score"],
            worst["split"],
        )
    log_validity_warnings(out, manifest)  # the ones above chance again, as WARNING lines
    if cfg.decoys == "paper":
        return
    manifest["audit"]["options_only"] = gate
    manifest["audit"]["ok"] = manifest["audit"]["ok"] and gate["ok"]
    write_manifest(out, manifest)
    if not gate["ok"]:
        raise MisiError(
            f"{out}: audit: options-only rules beat chance in a balanced build: {gate['problems'][:3]}"
        )


def _audit_sample(
    out: Path, manifest: dict, cfg: BuildConfig, sample: int, workers: int = 1
) -> dict:
    """Reproduction and uniqueness checks on ``sample`` questions per config (summary dict; no
    timings, so that the manifest stays byte-identical between runs)."""
    summary: dict = {"sample_per_config": int(sample), "tasks": {}, "problems": [], "ok": True}
    seconds = 0.0
    for split in ("test", "train"):
        configs = [
            t
            for t in cfg.tasks
            if manifest["counts"][t].get(split)
            and t not in summary["tasks"]
            and (split == "test" or not manifest["counts"][t].get("test"))
        ]
        if not configs:
            continue
        report = audit_dataset(
            out,
            configs=configs,
            split=split,
            checks=("reproduction", "uniqueness", "rotamers"),
            progress=progress_enabled(),
            sample=sample,
            source=cfg.source,
            workers=max(1, int(workers)),
        )
        part = report.summary()
        for task, value in part["tasks"].items():
            summary["tasks"][task] = {"split": split, **value}
        summary["problems"] += part["problems"]
        summary["ok"] = summary["ok"] and part["ok"]
        seconds += report.seconds
    log.info(
        "audit of %d sampled questions: %.1f s",
        sum(t["questions"] for t in summary["tasks"].values()),
        seconds,
    )
    ambiguous = [i for t in summary["tasks"].values() for i in t.get("ambiguous", [])]
    if ambiguous:
        log.warning(
            "audit: %d sampled questions are ambiguous: %s",
            len(ambiguous),
            ", ".join(ambiguous[:10]),
        )
    return summary


def _run_units(
    todo: list[str], refs, splits, cfg, work: Path, workers: int, progress: bool
) -> None:
    jobs = [(p, refs, splits, cfg, work) for p in todo]
    bar = tqdm(total=len(jobs), desc="complexes", unit="cx", disable=not progress or not jobs)
    try:
        if workers <= 1 or len(jobs) <= 1:
            for job in jobs:
                _report(run_unit(job))
                bar.update()
        else:
            with process_pool(workers) as pool:
                for result in pool.map(run_unit, jobs, chunksize=1):
                    _report(result)
                    bar.update()
    finally:
        bar.close()


def _report(result: UnitResult) -> None:
    if not result.ok:
        log.warning("skipped %s: %s", result.pdb_id, result.error)
    for task, reason in result.skipped_tasks.items():
        log.info("%s: no %s questions: %s", result.pdb_id, task, reason)
