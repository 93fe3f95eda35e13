"""Re-derivation of every answer of a built dataset folder.

The validator does not use the generator's operation code: each task's check (``check`` of its
room in ``builder/tasks/<name>.py``) rebuilds the transformed coordinates with the validator's own
Rodrigues rotations (``builder.tasks.recover``), then *recovers* the operation from before/after
coordinates (centroid shifts, Kabsch rotation fitted to the atoms) and compares it with the stored
answer. H-bond answers are recomputed from structures read afresh on the checks' own path
(``check_structures``: never the generator's cache), with the same detector as the
generator (``chemistry.hbonds``: this checks the answers follow from the coordinates, not the
detector itself; PLIP checks that, ``hbond_report``), T8 centring moves from the
named atoms' coordinates, T7 answers by undoing the recorded displacement. It also checks the
schema, option distinctness, letter and axis balance, that no complex is in two splits, that no
test complex reaches 30% identity to a train complex in an identity-split build
(``identity_split.split_problems``), and that every shard file is the one the manifest lists,
byte for byte (sha256), with no unlisted shard.
"""

from __future__ import annotations

import logging
import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq

from .. import scoring
from ..core.registry import TASK_NAMES
from ..core.rows import Row, RowError, parse_metadata
from ..operations.language import parse_operations
from ..scene.png import PNG_SIGNATURE
from ..scoring.kinds import kind_of
from ..store.cluster import check_workers
from ..store.identity_split import split_problems
from ..store.manifest import read_manifest, shard_problems
from ..store.parquet import SPLIT_ORDER, config_row_groups
from ..store.runner import JobRunner, Setup
from ..tasks import room_of
from ..tasks.room import CheckSubject
from .build_warnings import reading_warnings
from .check_structures import CheckStructures, StructureSource
from .declared import CHECKS, FAILED, RAN, applying

log = logging.getLogger(__name__)


@dataclass
class ValidationReport:
    ok: bool = True
    checked: int = 0
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    per_task: dict = field(default_factory=dict)
    #: the (task, check) pairs that found a problem (``declared.CHECKS`` names)
    failed: set = field(default_factory=set)

    def fail(self, text: str, task: str | None = None, check: str | None = None) -> None:
        self.ok = False
        self.problems.append(text)
        if task is not None and check is not None:
            self.failed.add((task, check))

    def outcomes(self) -> dict[tuple[str, str], str]:
        """``(task, check) -> ran | failed`` for the validation's checks on the tasks they
        apply to (``declared.status`` adds the ones that do not apply)."""
        return {
            (task, check.name): FAILED if (task, check.name) in self.failed else RAN
            for task in self.per_task
            for check in CHECKS
            if check.stage == "validation" and applying([task], check.name)
        }


def validate_dataset(
    folder: str | Path, source: str | None = None, structures: str | None = None, workers: int = 1
) -> ValidationReport:
    """Check every row of a built folder; ``source`` (``samples`` or a PDBbind root) lets the
    validator re-read the structures (default: the source recorded in the manifest).

    ``workers`` processes check the rows: each job is a run of consecutive complexes (PDB-id
    order) and reads only the row groups that hold their rows, so every structure is read once;
    the report lists the same problems in the same order whatever the count."""
    folder = Path(folder)
    report = ValidationReport()
    check_workers(workers)
    try:
        manifest = read_manifest(folder)
    except (OSError, ValueError) as exc:
        report.fail(f"{folder}: no readable manifest.json ({exc})")
        return report
    for problem in shard_problems(folder, manifest):  # every byte as built, nothing extra
        report.fail(problem)
    report.warnings.extend(reading_warnings(manifest))  # atoms the build's reading lost
    setup = StructureSource.of(manifest, source, structures)
    # light pass: ids, complexes, answers and axes of every row, and where each row group is
    light: dict[tuple[str, str], list[dict]] = {}
    groups: list[tuple[str, str, str, int, int, frozenset]] = []
    for task in manifest["counts"]:
        balanced_axes = task in TASK_NAMES and room_of(task).balanced_axes
        columns = ["id", "pdb_id", "answer", "answer_format"] + (
            ["metadata"] if balanced_axes else []
        )
        for split in SPLIT_ORDER:
            rows = light.setdefault((task, split), [])
            for path, g, part in config_row_groups(folder, task, split, columns):
                groups.append(
                    (task, split, str(path), g, len(rows), frozenset(r["pdb_id"] for r in part))
                )
                rows.extend(part)
    found = _check_all(groups, setup, workers)
    split_of: dict[str, set[str]] = defaultdict(set)
    for task in manifest["counts"]:
        letters: Counter = Counter()
        axes: Counter = Counter()
        balanced_axes = task in TASK_NAMES and room_of(task).balanced_axes
        lettered = task in TASK_NAMES and kind_of(task).carries_options
        n = 0
        for split in SPLIT_ORDER:
            expected = manifest["counts"][task].get(split, 0)
            seen_ids: set[str] = set()
            rows = light[(task, split)]
            for pos, row in enumerate(rows):
                if row["id"] in seen_ids:
                    report.fail(f"{task}/{split}: repeated id {row['id']}", task, "answers")
                seen_ids.add(row["id"])
                if split != "tiny":
                    split_of[row["pdb_id"]].add(split)
                    n += 1
                    if lettered:
                        letters[row["answer"]] += 1
                    if balanced_axes:
                        axes[_first_axis(row, task)] += 1
                for problem in found[(task, split, pos)]:
                    report.fail(problem, task, "answers")
                report.checked += 1
            if len(rows) != expected:
                report.fail(f"{task}/{split}: {len(rows)} rows, manifest says {expected}")
        report.per_task[task] = {"questions": n, "letters": dict(letters), "axes": dict(axes)}
        _balance(task, letters, 4, report, "letter_balance")
        _balance(task, axes, len(axes) or 1, report, "axis_balance")
    for pdb_id, splits in split_of.items():
        if len(splits) > 1:
            report.fail(f"complex {pdb_id} is in several splits: {sorted(splits)}")
    for problem in split_problems(manifest, setup.refs()):  # the identity split's check
        report.fail(problem)
    return report


def _row_problems(row: dict, structures: CheckStructures) -> list[str]:
    """Problems of one row: its checks, then its gold answer's score."""
    mine = ValidationReport()
    try:
        _check_row(row, structures, mine)
    except Exception as exc:  # a check that cannot run is itself a problem
        mine.fail(f"{row.get('id')}: check failed: {type(exc).__name__}: {exc}")
    gold = scoring.score_prediction(row["task"], row["answer"], row["answer"], row["metadata"])
    if gold["score"] != 1.0 or gold["exact"] != 1.0:
        mine.fail(f"{row['id']}: gold answer scores {gold['score']}")
    return mine.problems


class _Checker:
    """A validation worker's state: the build's structure source, its complexes discovered once."""

    def __init__(self, setup: StructureSource):
        self.setup = setup
        self.refs = setup.refs()


def _check_job(
    checker: _Checker, job: tuple[frozenset, list[tuple[str, str, str, int, int]]]
) -> list[tuple[tuple, list[str]]]:
    """Problems of the rows of one run of complexes, read from the row groups that hold them."""
    complexes, groups = job
    structures = checker.setup.annotations(checker.refs)  # one job's complexes are its own
    out = []
    for task, split, path, g, first in groups:
        rows = pq.ParquetFile(path).read_row_group(g).to_pylist()
        for k, row in enumerate(rows):
            if row["pdb_id"] in complexes:
                out.append(((task, split, first + k), _row_problems(row, structures)))
    return out


def _job_label(job: tuple) -> str:
    ids = sorted(job[0])
    return f"complexes {ids[0]}..{ids[-1]}" if len(ids) > 1 else f"complex {ids[0]}"


def _check_all(groups: list[tuple], setup: StructureSource, workers: int) -> dict[tuple, list[str]]:
    """Problems of every row, keyed by (task, split, position), from ``workers`` processes."""
    ids = sorted(set().union(*(g[5] for g in groups))) if groups else []
    # two runs of complexes per worker: few row groups are read twice (at the runs' edges)
    size = max(1, -(-len(ids) // (2 * workers))) if workers > 1 else max(1, len(ids))
    jobs = []
    for start in range(0, len(ids), size):
        chunk = frozenset(ids[start : start + size])
        jobs.append((chunk, [g[:5] for g in groups if g[5] & chunk]))
    found: dict[tuple, list[str]] = {}
    with JobRunner(workers, Setup(_Checker, (setup,))) as runner:
        for result in runner.map(_check_job, jobs, "validation", label=_job_label):
            found.update(result)
    return found


def _balance(task: str, counts: Counter, k: int, report: ValidationReport, check: str) -> None:
    """Letters/axes should be near uniform: a problem when one share is off by more than 4
    standard deviations of a uniform draw (and by more than 2 questions)."""
    n = sum(counts.values())
    if n == 0 or k <= 1:
        return
    expect = n / k
    sd = math.sqrt(n * (1 / k) * (1 - 1 / k))
    for key, c in counts.items():
        if abs(c - expect) > max(4 * sd, 2):
            report.fail(
                f"{task}: {key} appears {c} times of {n}, expected about {expect:.1f}", task, check
            )
    if len(counts) < k and n >= 4 * k:
        report.warnings.append(f"{task}: only {sorted(counts)} appear among {n} questions")


def _check_row(row: dict, structures: CheckStructures, report: ValidationReport) -> None:
    try:
        meta = Row.from_row(row).metadata
    except RowError as exc:  # names the column or metadata field
        report.fail(str(exc))
        return
    rid, task = row["id"], row["task"]
    if len(row["images"]) != len(row["image_views"]) or not row["images"]:
        report.fail(f"{rid}: {len(row['images'])} images but {len(row['image_views'])} view names")
    if any(not img["bytes"] or not img["bytes"].startswith(PNG_SIGNATURE) for img in row["images"]):
        report.fail(f"{rid}: an image is not a PNG")
    if row["answer_format"] != kind_of(task).answer_format:
        report.fail(f"{rid}: answer_format {row['answer_format']}")
    for problem in kind_of(task).row_problems(row, meta):  # the options against the metadata
        report.fail(problem)
    ann = structures.get(row["pdb_id"])
    cx, hbonds = ann.complex, ann.hbonds
    screen = cx.coords - (cx.coords.min(0) + cx.coords.max(0)) / 2.0
    pivot = (screen.min(0) + screen.max(0)) / 2.0
    for problem in room_of(task).check(row, meta, CheckSubject(cx, hbonds, screen, pivot)):
        report.fail(problem)


def _first_axis(row: dict, task: str) -> str:
    """The screen axis of a single-operation row's gold operation (the balance of T1-T3)."""
    meta = parse_metadata(row["metadata"], task)
    return parse_operations(meta.operations[0])[0].axis
