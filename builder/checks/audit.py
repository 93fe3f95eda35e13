"""Audit a built dataset folder: do the pictures carry exactly one answer?

Reads only the folder (shards + manifest) and the input structures named by its manifest, and
checks, per task:

1. **Reproduction**: every image of a question, re-rendered from its metadata and gold answer
   (``tasks.replay``), equals the stored image pixel for pixel. Any mismatch is a defect.
2. **Uniqueness** (T1, T2, T3, T7: the task's finite answer space; T5, T6, T8: the options): the
   picture of every other candidate differs from the gold answer's picture by at least
   ``audit_checks.MARGIN_BLOCKS`` visibly different blocks (``audit_checks.image_distance``).
3. **Legibility** (T4, T8, T9): the labels an H-bond answer needs (T4: both atom names; T8:
   the named bond's residue label and ligand atom name; T9: each bond's residue label and
   ligand atom name), each legible (``audit_checks.legible_keys``: no other label and no ligand
   stick over its box, its glyphs intact) in at least one of the question's views. Reported per
   task and per view; the share of answer-bearing labels legible in at least one view must
   reach :data:`LEGIBLE_LABEL_FLOOR`.
4. **Rotamers** (T4, T8, T9; a robustness figure, not a defect): the share of H-bond answers that
   depend on where a rotatable hydrogen (OH, SH, NH3+) was modelled: a bond of the answer that
   vanishes, or a bond that would join it, when that hydrogen is turned to its best rotamer
   (``chemistry.hbond_rotamers.rotamer_sensitive``, in the build's ``--hbonds`` mode).

``misi-bench audit`` prints the report; ``misi-bench build`` runs checks 1-2 on a sample of
questions and records the summary in the manifest.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..chemistry.hbond_rotamers import rotamer_sensitive
from ..core.constants import BUILDER_VERSION
from ..core.errors import MisiError
from ..core.registry import TASK_NAMES
from ..core.rows import parse_metadata
from ..scene.cache import RenderCache
from ..scene.raster import label_layout, ligand_mask, render_image, render_rows
from ..scene.requests import RENDER_VERSION
from ..store.cluster import available_cpus, check_workers
from ..store.identity_split import split_problems
from ..store.manifest import read_manifest
from ..store.parquet import iter_config_rows
from ..store.progress import shown as progress_shown
from ..store.runner import JobRunner, Setup
from ..tasks import replay, room_of
from .audit_checks import (
    MARGIN_BLOCKS,
    StoredPictures,
    block_means,
    decode,
    image_block_means,
    legible_keys,
    margin_summary,
)
from .audit_findings import LEGIBLE_LABEL_FLOOR, RowAudit, TaskAudit, add_row
from .audit_margins import Margins
from .audit_rows import RowChunk, plan_chunks, read_chunk, release, select
from .check_structures import StructureSource
from .declared import AUDIT_CHECKS, CHECK_BY_NAME, FAILED, RAN, applying, not_run

log = logging.getLogger(__name__)

#: The audit's checks (``declared.AUDIT_CHECKS``); which run on a task's questions is the
#: task's declaration (``declared.declared``: its answer kind's defaults, its room's own).
CHECKS = AUDIT_CHECKS


#: Memory for rendered pixel arrays shared between questions (front/left/top views, candidates).
CACHE_BYTES = 768 * 1024 * 1024


@dataclass
class AuditReport:
    folder: str
    split: str
    checks: tuple[str, ...]
    tasks: dict[str, TaskAudit] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """No reproduction defect, no ambiguous question, no error, and every task's share of
        answer-bearing labels legible in at least one view at :data:`LEGIBLE_LABEL_FLOOR` or
        above."""
        return not self.problems and all(
            not (t.mismatched or t.ambiguous or t.errors)
            and (t.label_share is None or t.label_share >= LEGIBLE_LABEL_FLOOR)
            for t in self.tasks.values()
        )

    def summary(self) -> dict:
        out = {
            "ok": self.ok,
            "split": self.split,
            "checks": list(self.checks),
            "seconds": round(self.seconds, 1),
            "margin_blocks": MARGIN_BLOCKS,
            "problems": self.problems,
            "tasks": {t: a.summary() for t, a in self.tasks.items()},
        }
        return out

    def outcomes(self) -> dict[tuple[str, str], str]:
        """``(task, check) -> ran | failed | not run (why)`` for the checks this audit ran on the
        tasks they apply to (``declared.status`` adds the ones that do not apply)."""
        out: dict[tuple[str, str], str] = {}
        for task, a in self.tasks.items():
            for check in self.checks:
                if task in applying([task], check):
                    out[(task, check)] = _outcome(check, a)
        return out

    def format_text(self) -> str:
        lines = [
            f"audit of {self.folder} ({self.split} split; {', '.join(self.checks)}): "
            f"{'ok' if self.ok else 'PROBLEMS'} in {self.seconds:.1f} s"
        ]
        lines += [f"problem: {p}" for p in self.problems]
        for task, a in self.tasks.items():
            parts = [
                f"{a.reproduced}/{a.questions} reproduced"
                if "reproduction" in self.checks
                else f"{a.questions} questions"
            ]
            if a.checked_unique:
                m = margin_summary(a.margins)
                parts.append(
                    f"{a.unique}/{a.checked_unique} unique ({100 * a.unique / a.checked_unique:.1f}%), "
                    f"runner-up margin min {m['min']} / p5 {m['p5']:.0f} / median {m['median']:.0f} blocks"
                )
            if a.answers_with_labels:
                parts.append(
                    f"{a.legible}/{a.answers_with_labels} answers legible "
                    f"({100 * a.legible / a.answers_with_labels:.1f}%)"
                )
            if a.labels_needed:
                parts.append(
                    f"{a.labels_legible}/{a.labels_needed} answer labels legible in some view "
                    f"({100 * a.labels_legible / a.labels_needed:.1f}%, floor "
                    f"{100 * LEGIBLE_LABEL_FLOOR:.0f}%)"
                )
            if a.hbond_answers:
                parts.append(
                    f"{len(a.rotamer_dependent)}/{a.hbond_answers} answers depend on a modelled "
                    f"rotatable H ({100 * len(a.rotamer_dependent) / a.hbond_answers:.1f}%)"
                )
            lines.append(f"  {task:22s} " + "; ".join(parts))
            for check in self.checks:
                found = CHECK_BY_NAME[check].applies_to(task)
                if not found.applies:
                    lines.append(f"    {check}: not applicable ({found.reason})")
            for label, ids in (
                ("mismatch", a.mismatched),
                ("ambiguous", a.ambiguous),
                ("illegible", a.illegible),
                ("error", a.errors),
            ):
                if ids:
                    lines.append(
                        f"    {label}: {', '.join(ids[:20])}{' ...' if len(ids) > 20 else ''}"
                    )
        return "\n".join(lines)


class _Auditor(Margins):
    """Shared state of one audit: structures, rendered pixels (LRU), block means."""

    def __init__(
        self,
        manifest: dict,
        source: str | None,
        structures: str | None = None,
        cache_bytes: int = CACHE_BYTES,
    ):
        # the checks' own reading path (``check_structures``), never the generator's cache
        self.annotations = StructureSource.of(manifest, source, structures).annotations()
        self.pixels = RenderCache(
            cache_bytes, render=lambda cx, req: np.asarray(render_image(cx, req))
        )
        self.means = RenderCache(cache_bytes // 8, render=self._means)
        self.rotamer_cache: dict[str, tuple[set, set]] = {}
        #: decoded stored images by content, least recently used first
        self.decoded: dict[bytes, np.ndarray] = {}
        self.decoded_bytes = 0
        #: block means of a batch of candidates, for the means cache to take (``Margins``)
        self.batched: dict = {}
        #: whether a check applies to a task (``declared``), asked once per pair
        self.applies: dict[tuple[str, str], bool] = {}

    def _means(self, complex_, request) -> np.ndarray:
        """Block means of a request's picture: from its cached pixels, else rendered for the means
        alone (answer-space candidates: most are seen once, so their pixels are not kept)."""
        if (complex_, request) in self.pixels:
            return block_means(self.pixels.get(complex_, request))
        if request in self.batched:
            return self.batched[request]
        return image_block_means(*render_rows(complex_, request), height=request.camera.size)

    def rotamer_bonds(self, pdb_id: str) -> tuple[set, set]:
        """(answer bonds that vanish, bonds that appear) at the best rotamers of the complex's
        modelled rotatable hydrogens, as ``HBond.pocket_text()`` strings."""
        if pdb_id not in self.rotamer_cache:
            ann = self.load(pdb_id)
            self.rotamer_cache[pdb_id] = rotamer_sensitive(ann.complex, ann.hbond_mode)
        return self.rotamer_cache[pdb_id]

    def decode(self, png: bytes) -> np.ndarray:
        """Pixels of a stored PNG, decoded once per distinct content (questions of a complex
        share views: 39 % of the stored images of the samples' test split are repeats)."""
        found = self.decoded.pop(png, None)
        if found is None:
            found = decode(png)
            self.decoded_bytes += found.nbytes
            while self.decoded and self.decoded_bytes > self.pixels.max_bytes // 4:
                self.decoded_bytes -= self.decoded.pop(next(iter(self.decoded))).nbytes
        self.decoded[png] = found
        return found

    def load(self, pdb_id: str):
        return self.annotations.get(pdb_id)

    def render(self, spec_pdb: str, request) -> np.ndarray:
        return self.pixels.get(self.load(spec_pdb).complex, request)

    def render_means(self, spec_pdb: str, request) -> np.ndarray:
        return self.means.get(self.load(spec_pdb).complex, request)

    def audit_row(self, row: dict, checks: Sequence[str]) -> RowAudit:
        """The findings of one question; a check that cannot run is itself a finding (``error``)."""
        out = RowAudit(str(row.get("id")))
        try:
            self._check_row(row, checks, out)
        except MisiError as exc:
            out.error = f"{row['id']}: {exc}"
        except Exception as exc:  # a check that cannot run is itself a finding
            log.exception("audit of %s failed", row.get("id"))
            out.error = f"{row.get('id')}: {type(exc).__name__}: {exc}"
        return out

    def _check_row(self, row: dict, checks: Sequence[str], out: RowAudit) -> None:
        """Run on one question each of ``checks`` that applies to its task (``ROW_CHECKS``: how
        each check runs on a row; ``declared``: whether it applies)."""
        specs = replay.question_images(row, self.load)
        stored = StoredPictures([img["bytes"] for img in row["images"]], self.decode)
        out.counted = True
        for check in checks:
            key = (row["task"], check)
            if key not in self.applies:
                self.applies[key] = bool(applying([row["task"]], check))
            if self.applies[key]:
                ROW_CHECKS[check](self, row, specs, stored, out)

    def _reproduce(self, row: dict, specs, stored, out: RowAudit) -> None:
        """Every stored picture equals its re-rendering, pixel for pixel."""
        out.reproduced = len(specs) == len(stored) and all(
            np.array_equal(self.render(s.pdb_id, s.request), px) for s, px in zip(specs, stored)
        )

    def _unique(self, row: dict, specs, stored, out: RowAudit) -> None:
        """The runner-up candidate's margin from the gold answer's picture (blocks)."""
        out.margin = self.margin(replay.answer_space(row, specs, self.load), stored)

    def _rotamers(self, row: dict, specs, stored, out: RowAudit) -> None:
        """Whether the answer's bonds change at the best rotamers of modelled rotatable H."""
        vanish, appear = self.rotamer_bonds(row["pdb_id"])
        meta = parse_metadata(row["metadata"], row["task"])
        out.rotamer_dependent = bool(room_of(row["task"]).hbond_scope(row, meta, vanish | appear))

    def _check_legibility(self, row: dict, specs, stored, out: RowAudit) -> None:
        """The question's answer-bearing labels legible in each view and in at least one."""
        needed = self.needed_labels(row)
        if not needed:
            return
        seen: set = set()
        cx = self.load(row["pdb_id"]).complex
        for spec, px in zip(specs, stored):
            req = spec.request
            found = needed & legible_keys(px, label_layout(cx, req), ligand_mask(cx, req))
            n, total = out.view_labels.get(req.view, (0, 0))
            out.view_labels[req.view] = (n + len(found), total + len(needed))
            seen |= found
        out.legible = needed <= seen
        out.labels_needed, out.labels_legible = len(needed), len(needed & seen)

    def needed_labels(self, row: dict) -> set[tuple[str, int]]:
        """Label keys an H-bond answer needs (the task room's ``needed_labels``: T4 both atom
        names of each bond; T9 the residue label and the ligand atom name of each bond)."""
        return room_of(row["task"]).needed_labels(
            row, parse_metadata(row["metadata"], row["task"]), self.load(row["pdb_id"])
        )


#: How each audit check runs on one question: ``(auditor, row, image plan, stored pictures,
#: findings)``; a new audit check is a ``declared.CHECKS`` entry and a row function here.
ROW_CHECKS = {
    "reproduction": _Auditor._reproduce,
    "uniqueness": _Auditor._unique,
    "legibility": _Auditor._check_legibility,
    "rotamers": _Auditor._rotamers,
}


def _outcome(check: str, a: TaskAudit) -> str:
    """What one audit check found on one task's sampled questions."""
    if not a.questions:
        return not_run("no question of the task was sampled")
    if check == "reproduction":
        return FAILED if a.mismatched or a.errors else RAN
    if check == "uniqueness":
        if not a.checked_unique:
            return not_run("no sampled question had an answer space")
        return FAILED if a.ambiguous else RAN
    if check == "legibility":
        if a.label_share is None:
            return not_run("no sampled answer names a label")
        return FAILED if a.label_share < LEGIBLE_LABEL_FLOOR else RAN
    return RAN  # rotamers: a figure, not a defect


def _version_problems(manifest: dict) -> list[str]:
    cfg = manifest.get("config", {})
    out = []
    if str(cfg.get("render_version")) != RENDER_VERSION:
        out.append(
            f"built with render version {cfg.get('render_version')}, this code renders version {RENDER_VERSION}"
        )
    if str(cfg.get("builder_version", manifest.get("builder_version"))) != BUILDER_VERSION:
        out.append(
            f"built with builder version {cfg.get('builder_version')}, this code is {BUILDER_VERSION}"
        )
    return out


def select_rows(
    folder: Path, task: str, split: str, limit: int | None, sample: int | None
) -> Iterable[dict]:
    """Rows of one config/split: all, the first ``limit``, or ``sample`` spread over the ids."""
    return select(iter_config_rows(folder, task, split), limit, sample)


def audit_dataset(
    folder: str | Path,
    configs: Sequence[str] | None = None,
    split: str = "test",
    limit: int | None = None,
    checks: Sequence[str] = CHECKS,
    sample: int | None = None,
    source: str | None = None,
    progress: bool = False,
    structures: str | None = None,
    workers: int | None = None,
    split_check: bool = True,
) -> AuditReport:
    """Audit a built folder (see the module docstring). ``split_check``: repeat the identity
    split's test-train alignment check (``identity_split.split_problems``; the build's own
    audit leaves it to the validation it has just run). ``limit``: at most N questions per config;
    ``sample``: N questions spread evenly over each config's ids; ``source``: where to read the
    structures (default: the manifest's source); ``structures``: the entries folder of an ``ids:``
    source (default: the one the manifest names); ``workers``: processes checking questions in
    parallel (default: every CPU this process may use; the report is the same for any count)."""
    start = time.perf_counter()
    workers = available_cpus() if check_workers(workers) is None else int(workers)
    folder = Path(folder)
    unknown = [c for c in checks if c not in CHECKS]
    if unknown:
        raise MisiError(f"unknown audit check(s) {unknown}; expected some of {', '.join(CHECKS)}")
    try:
        manifest = read_manifest(folder)
    except (OSError, ValueError) as exc:
        raise MisiError(f"{folder}: no readable manifest.json ({exc})") from None
    tasks = [t for t in TASK_NAMES if t in manifest["counts"] and (not configs or t in configs)]
    bad = [c for c in configs or () if c not in manifest["counts"]]
    if bad:
        raise MisiError(
            f"{folder}: no config(s) {', '.join(bad)}; the build has {', '.join(manifest['counts'])}"
        )
    found = _version_problems(manifest)
    if split_check:  # the identity split's check
        found += split_problems(manifest, StructureSource.of(manifest, source, structures).refs())
    report = AuditReport(str(folder), split, tuple(checks), problems=found)
    report.tasks.update((task, TaskAudit()) for task in tasks)
    total = sum(manifest["counts"][t].get(split, 0) for t in tasks)
    jobs = (
        (task, chunk)
        for task in tasks
        for chunk in plan_chunks(folder, task, split, limit, sample, CHUNK_ROWS)
    )
    setup = Setup(
        _AuditWorker, ((manifest, source, structures), tuple(checks), _cache_bytes(workers))
    )
    with progress_shown(progress), JobRunner(workers, setup) as runner:
        found_rows = runner.map(
            _audit_chunk,
            jobs,
            "audit",
            total=total if sample is None and limit is None else None,
            unit="q",
            size=lambda result: len(result[1]),
            label=_chunk_label,
        )
        for task, found in found_rows:
            for row in found:
                add_row(report.tasks[task], row)
    report.seconds = time.perf_counter() - start
    return report


# ---------------------------------------------------------------------------- parallel audit

#: Questions of one complex and config go to a worker together (they share renders); the
#: worker reads them itself (``audit_rows``).
CHUNK_ROWS = 16


def _cache_bytes(workers: int) -> int:
    """The render cache of each of ``workers`` processes (one process: :data:`CACHE_BYTES`)."""
    return CACHE_BYTES if workers <= 1 else max(CACHE_BYTES // workers, 192 * 1024 * 1024)


class _AuditWorker:
    """An audit worker's state: its auditor (structures, render caches) and the checks to run."""

    def __init__(self, setup: tuple, checks: tuple[str, ...], cache_bytes: int):
        self.auditor = _Auditor(*setup, cache_bytes=cache_bytes)
        self.checks = checks

    def close(self) -> None:
        """Forget the open shard files (an in-process run: a later one reads them afresh)."""
        release()


def _audit_chunk(worker: _AuditWorker, job: tuple[str, RowChunk]) -> tuple[str, list[RowAudit]]:
    task, chunk = job
    return task, [worker.auditor.audit_row(row, worker.checks) for row in read_chunk(chunk)]


def _chunk_label(job: tuple[str, RowChunk]) -> str:
    task, chunk = job
    return (
        f"{task} {Path(chunk.path).name} row group {chunk.group} "
        f"rows {chunk.positions[0]}..{chunk.positions[-1]}"
    )
