"""Independent re-derivation of every answer of a built dataset folder.

The validator does not use the generator's operation code: it rebuilds the transformed
coordinates with its own Rodrigues rotations, then *recovers* the operation from before/after
coordinates (centroid shifts, Kabsch rotation fitted to the atoms) and compares it with the stored
answer. H-bond answers are recomputed from freshly read structures, T8 centring moves from the
named atoms' coordinates, T7 answers by undoing the recorded displacement. It also checks the
schema, option distinctness, letter and axis balance, and that no complex is in two splits.
"""
from __future__ import annotations

import json
import logging
import math
import re
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from .. import scoring
from ..chemistry.hbonds import detect_hbonds, format_pocket_answer, format_residue_answer
from ..chemistry.structure import load_complex
from ..core.registry import answer_format
from .manifest import read_manifest
from .sources import discover
from .cluster import check_workers
from .parquet import SPLIT_ORDER

log = logging.getLogger(__name__)

_AXIS = {"x": np.array([1.0, 0, 0]), "y": np.array([0, 1.0, 0]), "z": np.array([0, 0, 1.0])}
_OP = re.compile(r"^(move|roll) ([xyz]) (-?\d+)$")
COLUMNS = ("id", "task", "split", "pdb_id", "images", "image_views", "question", "options", "answer",
           "answer_format", "metadata")


@dataclass
class ValidationReport:
    ok: bool = True
    checked: int = 0
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    per_task: dict = field(default_factory=dict)

    def fail(self, text: str) -> None:
        self.ok = False
        self.problems.append(text)


def _rodrigues(axis: str, angle_deg: float) -> np.ndarray:
    k = _AXIS[axis]
    a = math.radians(angle_deg)
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + math.sin(a) * kx + (1 - math.cos(a)) * kx @ kx


def _parse(ops: list[str] | str) -> list[tuple[str, str, int]]:
    items = ops.split(", ") if isinstance(ops, str) else ops
    out = []
    for text in items:
        m = _OP.match(text.strip())
        if not m:
            raise ValueError(f"bad operation {text!r}")
        out.append((m.group(1), m.group(2), int(m.group(3))))
    return out


def _apply(coords: np.ndarray, ops, pivot: np.ndarray) -> np.ndarray:
    """Rigid motion by ``ops``; the pivot (model centre) travels with the model."""
    xyz, centre = coords.copy(), pivot.copy()
    for verb, axis, value in ops:
        if verb == "move":
            xyz = xyz + _AXIS[axis] * value
            centre = centre + _AXIS[axis] * value
        else:
            rot = _rodrigues(axis, value)
            xyz = (xyz - centre) @ rot.T + centre
    return xyz


def _kabsch(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    a, b = before - before.mean(0), after - after.mean(0)
    u, _, vt = np.linalg.svd(a.T @ b)
    d = np.sign(np.linalg.det(vt.T @ u.T))
    return vt.T @ np.diag([1, 1, d]) @ u.T


def _recover_roll(before: np.ndarray, after: np.ndarray) -> tuple[str, int] | None:
    """Axis and whole-degree angle of the rotation taking ``before`` to ``after``."""
    rot = _kabsch(before, after)
    angle = math.degrees(math.acos(max(-1.0, min(1.0, (np.trace(rot) - 1) / 2))))
    if angle < 1e-6:
        return None
    axis_vec = np.array([rot[2, 1] - rot[1, 2], rot[0, 2] - rot[2, 0], rot[1, 0] - rot[0, 1]])
    k = int(np.argmax(np.abs(axis_vec)))
    if np.abs(axis_vec).max() < 1e-9 or np.sort(np.abs(axis_vec))[1] > 1e-6 * np.abs(axis_vec).max():
        return None
    return "xyz"[k], int(round(angle * np.sign(axis_vec[k])))


class _Structures:
    def __init__(self, source: str | None, structures: str | None = None):
        self.source, self.structures, self.refs, self.cache = source, structures, None, {}

    def get(self, pdb_id: str):
        if pdb_id not in self.cache:
            if self.refs is None:
                self.refs = {r.pdb_id: r for r in discover(self.source, self.structures)}
            cx = load_complex(self.refs[pdb_id], pocket_cutoff=self.pocket_cutoff)
            self.cache[pdb_id] = (cx, detect_hbonds(cx))
        return self.cache[pdb_id]

    pocket_cutoff = 10.0


def validate_dataset(folder: str | Path, source: str | None = None, structures: str | None = None,
                     workers: int = 1) -> ValidationReport:
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
    setup = (source or manifest.get("source") or manifest["config"].get("source"),
             structures or manifest.get("structures"), float(manifest["config"].get("pocket_cutoff", 10.0)))
    # light pass: ids, complexes, answers and axes of every row, and where each row group is
    light: dict[tuple[str, str], list[dict]] = {}
    groups: list[tuple[str, str, str, int, int, frozenset]] = []
    for task in manifest["counts"]:
        columns = ["id", "pdb_id", "answer", "answer_format"] + (["metadata"] if task in ("translation", "rotation")
                                                                 else [])
        for split in SPLIT_ORDER:
            rows = light.setdefault((task, split), [])
            for path in sorted((folder / task).glob(f"{split}-*.parquet")):
                shard = pq.ParquetFile(path)
                for g in range(shard.num_row_groups):
                    part = shard.read_row_group(g, columns=columns).to_pylist()
                    groups.append((task, split, str(path), g, len(rows), frozenset(r["pdb_id"] for r in part)))
                    rows.extend(part)
    found = _check_all(groups, setup, workers)
    split_of: dict[str, set[str]] = defaultdict(set)
    for task in manifest["counts"]:
        letters: Counter = Counter()
        axes: Counter = Counter()
        n = 0
        for split in SPLIT_ORDER:
            expected = manifest["counts"][task].get(split, 0)
            seen_ids: set[str] = set()
            rows = light[(task, split)]
            for pos, row in enumerate(rows):
                if row["id"] in seen_ids:
                    report.fail(f"{task}/{split}: repeated id {row['id']}")
                seen_ids.add(row["id"])
                if split != "tiny":
                    split_of[row["pdb_id"]].add(split)
                    n += 1
                    if row["answer_format"] == "multiple_choice":
                        letters[row["answer"]] += 1
                    if task in ("translation", "rotation"):
                        axes[json.loads(row["metadata"])["operations"][0].split()[1]] += 1
                for problem in found[(task, split, pos)]:
                    report.fail(problem)
                report.checked += 1
            if len(rows) != expected:
                report.fail(f"{task}/{split}: {len(rows)} rows, manifest says {expected}")
        report.per_task[task] = {"questions": n, "letters": dict(letters), "axes": dict(axes)}
        _balance(task, letters, 4, report)
        _balance(task, axes, len(axes) or 1, report)
    for pdb_id, splits in split_of.items():
        if len(splits) > 1:
            report.fail(f"complex {pdb_id} is in several splits: {sorted(splits)}")
    return report


def _row_problems(row: dict, structures: "_Structures") -> list[str]:
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


_WORKER: dict = {}


def _init_worker(setup: tuple) -> None:
    source, structures, cutoff = setup
    _WORKER["structures"] = _Structures(source, structures)
    _WORKER["structures"].pocket_cutoff = cutoff


def _check_job(job: tuple[frozenset, list[tuple[str, str, str, int, int]]]) -> list[tuple[tuple, list[str]]]:
    """Problems of the rows of one run of complexes, read from the row groups that hold them."""
    complexes, groups = job
    structures = _WORKER["structures"]
    structures.cache.clear()  # complexes of one job are never another's
    out = []
    for task, split, path, g, first in groups:
        rows = pq.ParquetFile(path).read_row_group(g).to_pylist()
        for k, row in enumerate(rows):
            if row["pdb_id"] in complexes:
                out.append(((task, split, first + k), _row_problems(row, structures)))
    return out


def _check_all(groups: list[tuple], setup: tuple, workers: int) -> dict[tuple, list[str]]:
    """Problems of every row, keyed by (task, split, position), from ``workers`` processes."""
    ids = sorted(set().union(*(g[5] for g in groups))) if groups else []
    # two runs of complexes per worker: few row groups are read twice (at the runs' edges)
    size = max(1, -(-len(ids) // (2 * workers))) if workers > 1 else max(1, len(ids))
    jobs = []
    for start in range(0, len(ids), size):
        chunk = frozenset(ids[start:start + size])
        jobs.append((chunk, [g[:5] for g in groups if g[5] & chunk]))
    found: dict[tuple, list[str]] = {}
    if workers <= 1 or len(jobs) <= 1:
        _init_worker(setup)
        try:
            results = [_check_job(job) for job in jobs]
        finally:
            _WORKER.clear()
    else:
        with ProcessPoolExecutor(max_workers=workers, initializer=_init_worker, initargs=(setup,)) as pool:
            results = list(pool.map(_check_job, jobs))
    for result in results:
        found.update(result)
    return found


def _balance(task: str, counts: Counter, k: int, report: ValidationReport) -> None:
    """Letters/axes should be near uniform: a problem when one share is off by more than 4
    standard deviations of a uniform draw (and by more than 2 questions)."""
    n = sum(counts.values())
    if n == 0 or k <= 1:
        return
    expect = n / k
    sd = math.sqrt(n * (1 / k) * (1 - 1 / k))
    for key, c in counts.items():
        if abs(c - expect) > max(4 * sd, 2):
            report.fail(f"{task}: {key} appears {c} times of {n}, expected about {expect:.1f}")
    if len(counts) < k and n >= 4 * k:
        report.warnings.append(f"{task}: only {sorted(counts)} appear among {n} questions")


def _check_row(row: dict, structures: _Structures, report: ValidationReport) -> None:
    for col in COLUMNS:
        if col not in row:
            report.fail(f"{row.get('id')}: missing column {col}")
            return
    rid, task = row["id"], row["task"]
    meta = json.loads(row["metadata"])
    if len(row["images"]) != len(row["image_views"]) or not row["images"]:
        report.fail(f"{rid}: {len(row['images'])} images but {len(row['image_views'])} view names")
    if any(not img["bytes"] or img["bytes"][:8] != b"\x89PNG\r\n\x1a\n" for img in row["images"]):
        report.fail(f"{rid}: an image is not a PNG")
    if row["answer_format"] != answer_format(task):
        report.fail(f"{rid}: answer_format {row['answer_format']}")
    cx, hbonds = structures.get(row["pdb_id"])
    screen = cx.coords - (cx.coords.min(0) + cx.coords.max(0)) / 2.0
    pivot = (screen.min(0) + screen.max(0)) / 2.0
    if task in ("translation", "rotation", "zooming"):
        ops = _parse(meta["operations"])
        after = _apply(screen, ops, pivot)
        shift = after.mean(0) - screen.mean(0)
        if task == "rotation":
            got = _recover_roll(screen, after)
            text = f"roll {got[0]} {got[1]}" if got else None
        else:
            k = int(np.argmax(np.abs(shift)))
            text = f"move {'xyz'[k]} {int(round(shift[k]))}"
        if text != row["answer"]:
            report.fail(f"{rid}: recovered {text!r} from coordinates, stored answer {row['answer']!r}")
    elif task == "docking":
        lig = screen[cx.is_ligand]
        lpivot = (lig.min(0) + lig.max(0)) / 2.0
        displaced = _apply(lig, _parse(meta["displacement"]), lpivot)
        moved_pivot = _apply(lpivot[None], [op for op in _parse(meta["displacement"]) if op[0] == "move"], lpivot)[0]
        restored = _apply(displaced, _parse(row["answer"]), moved_pivot)
        if np.abs(restored - lig).max() > 1e-6:
            report.fail(f"{rid}: the answer does not restore the ligand (max error {np.abs(restored - lig).max():.3g} Å)")
    elif task == "interaction_location":
        m = re.match(r"^(\S+) (\S+) (\S+) (\S+), (.+)$", meta["hbond"])
        res_name, number, atom, chain, lig_atom = m.groups()
        prot = [i for i in range(cx.n_atoms) if not cx.is_ligand[i] and cx.res_names[i] == res_name
                and f"{cx.res_numbers[i]}{cx.ins_codes[i]}" == number and cx.atom_names[i] == atom and cx.chain_ids[i] == chain]
        ligs = [i for i in range(cx.n_atoms) if cx.is_ligand[i] and cx.atom_names[i] == lig_atom]
        if len(prot) != 1 or len(ligs) != 1:
            report.fail(f"{rid}: named bond atoms not found uniquely")
            return
        mid = (screen[prot[0], :2] + screen[ligs[0], :2]) / 2.0
        want = [int(-math.copysign(math.floor(abs(v) + 0.5), v)) for v in mid]
        letter = "ABCD".index(row["answer"])
        if row["options"][letter] != f"move x {want[0]}, move y {want[1]}":
            report.fail(f"{rid}: centring move is {want}, option {row['answer']} says {row['options'][letter]}")
        if len(set(row["options"])) != 4:
            report.fail(f"{rid}: options not distinct")
    elif task in ("translation_rotation", "rotation_rotation"):
        opts = [tuple(o) for o in meta["option_operations"]]
        if len(set(opts)) != 4:
            report.fail(f"{rid}: option operations not distinct")
        letter = "ABCD".index(row["answer"])
        if list(opts[letter]) != meta["operations"]:
            report.fail(f"{rid}: option {row['answer']} is not the true operation pair")
        digests = {img["bytes"] for img in row["images"][-4:]}
        if len(digests) != 4:
            report.fail(f"{rid}: two option images are identical")
    elif task == "pocket_ligand":
        if format_pocket_answer(hbonds) != row["answer"]:
            report.fail(f"{rid}: recomputed H-bonds differ from the answer")
    elif task == "residue_ligand":
        r = meta["residue"]
        bonds = [b for b in hbonds if b.chain == r["chain"] and b.res_number == r["number"] and b.ins_code == r["ins_code"]]
        if format_residue_answer(bonds) != row["answer"]:
            report.fail(f"{rid}: recomputed residue H-bonds differ from the answer")
