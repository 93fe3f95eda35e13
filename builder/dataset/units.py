"""One unit of build work: the questions and images of one complex, written atomically with a
status file that marks it complete. Never raises for bad input.

The status file also records what the unit's output depends on besides the configuration (whose
hash names the work folder): the sha256 of each of the complex's input files (``inputs``), the
``key`` of its split and T5 partner list, and a digest of the files of every other complex it
read (``read``, the T5 targets). A rerun reuses a unit only while all of these still hold
(``resume.reuse_problem``), so a changed input file is rebuilt, never shipped stale.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..chemistry.hbonds import DEFAULT_HBOND_MODE
from ..chemistry.structure import load_complex
from ..core.atomic import write_text_atomic
from ..core.errors import MisiError, TaskError
from ..core.records import ComplexRef
from ..core.rows import Row, parse_metadata
from ..scene.cache import RenderCache
from ..scoring.kinds import kind_of
from ..store.parquet import write_rows_atomic
from ..store.sources import file_checksums
from ..tasks import generator, room_of
from ..tasks.annotation import annotate
from ..tasks.base import TaskContext
from .config import BuildConfig

log = logging.getLogger(__name__)

#: Marks the skip reason of a raw entry whose file was absent (a later build retries it).
MISSING_STRUCTURE = "structure file not found"


@dataclass(frozen=True)
class UnitResult:
    """Outcome of one complex unit (also its status file)."""

    pdb_id: str
    split: str
    ok: bool
    counts: dict = field(default_factory=dict)
    skipped_tasks: dict = field(default_factory=dict)
    error: str = ""
    inputs: dict = field(default_factory=dict)
    #: what reading the complex left out or relabelled (``ReadReport.as_dict``)
    reading: dict = field(default_factory=dict)
    n_images_rendered: int = 0
    seconds: float = 0.0
    #: :func:`unit_key` of the split and partner list the unit was made with.
    key: str = ""
    #: {pdb id: :func:`files_digest`} of every other complex the unit read (T5 targets).
    read: dict = field(default_factory=dict)
    #: :func:`complex_facts` of the complex (the shared factors of ``scoring.factors``)
    facts: dict = field(default_factory=dict)


def complex_facts(complex_) -> dict:
    """Per-complex facts the shared factors bin by (``builder/scoring/factors.yaml``): ligand
    heavy atoms, pocket residues and the protein chains they come from (counts)."""
    protein = ~complex_.is_ligand
    return {
        "ligand_heavy_atoms": int(complex_.is_ligand.sum()),
        "pocket_residues": len(complex_.residues),
        "chains": len({str(c) for c in complex_.chain_ids[protein]}),
    }


def files_digest(files: dict) -> str:
    """One sha256 over a complex's {file name: sha256} (``sources.file_checksums``)."""
    return hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest()


def unit_key(pdb_id: str, splits: dict[str, str]) -> str:
    """What a unit's questions depend on in the plan: its split and the complexes of that split it
    may pair with (T5), as one sha256."""
    split = splits[pdb_id]
    partners = [p for p in sorted(splits) if splits[p] == split and p != pdb_id]
    return hashlib.sha256(json.dumps([pdb_id, split, partners]).encode()).hexdigest()


class AnnotationCache:
    """Annotations of complexes read in this process (a unit's own and T5 targets; the audit's)."""

    def __init__(
        self,
        refs: dict[str, ComplexRef],
        pocket_cutoff: float,
        image_size: int,
        hbonds: str = DEFAULT_HBOND_MODE,
    ):
        self.refs, self.cache, self.failures = refs, {}, {}
        self.pocket_cutoff, self.image_size = float(pocket_cutoff), int(image_size)
        self.hbonds = hbonds

    def get(self, pdb_id: str):
        if pdb_id in self.failures:
            raise self.failures[pdb_id]
        if pdb_id not in self.cache:
            try:
                if pdb_id not in self.refs:
                    raise MisiError(f"complex {pdb_id} is not in the structure source")
                cx = load_complex(self.refs[pdb_id], pocket_cutoff=self.pocket_cutoff)
                self.cache[pdb_id] = annotate(cx, self.image_size, self.hbonds)
            except MisiError as exc:
                self.failures[pdb_id] = exc
                raise
        return self.cache[pdb_id]


def generate_unit(
    pdb_id: str, refs: dict[str, ComplexRef], splits: dict[str, str], cfg: BuildConfig
):
    """Questions and images of one complex: (rows, UnitResult). Never raises for bad input."""
    start = time.perf_counter()
    split = splits[pdb_id]
    key = unit_key(pdb_id, splits)
    read = _read_unit_complex(pdb_id, refs, split, key, cfg)
    if isinstance(read, UnitResult):  # the complex cannot be read: the unit is a skip
        return [], read
    inputs, annotations, ann = read

    partners = [p for p in sorted(splits) if splits[p] == split and p != pdb_id]
    cache = RenderCache()
    rows, counts, skipped = [], {}, {}
    for task in cfg.tasks:
        ctx = TaskContext.for_task(
            task,
            ann,
            split,
            int(cfg.seed),
            cfg.profile,
            partners=partners,
            load_partner=annotations.get,
            decoys=cfg.decoys,
        )
        try:
            instances = generator(task)(ctx)
            task_rows = [_row(inst, split, annotations, cache) for inst in instances]
        except MisiError as exc:  # TaskError and input errors of a T5 target: the task is skipped
            skipped[task] = str(exc)
            continue
        except Exception as exc:  # keep the build going; the reason lands in the manifest
            log.exception("task %s failed on %s", task, pdb_id)
            skipped[task] = f"{type(exc).__name__}: {exc}"
            continue
        if not task_rows:
            skipped.setdefault(task, "no question could be sampled (e.g. no hydrogen bond)")
        rows.extend(task_rows)
        counts[task] = len(task_rows)
    return rows, UnitResult(
        pdb_id,
        split,
        True,
        counts=counts,
        skipped_tasks=skipped,
        inputs=inputs,
        reading=ann.complex.read_report.as_dict(),
        n_images_rendered=cache.misses,
        seconds=round(time.perf_counter() - start, 3),
        key=key,
        read=_read_digests(annotations, pdb_id),
        facts=complex_facts(ann.complex),
    )


def _read_unit_complex(
    pdb_id: str, refs: dict[str, ComplexRef], split: str, key: str, cfg: BuildConfig
) -> UnitResult | tuple[dict, AnnotationCache, object]:
    """A unit's complex read: (checksums of its input files, the unit's annotation cache, its
    annotation), or the failed :class:`UnitResult` saying why it cannot be read."""
    inputs = {}
    ref = refs[pdb_id]
    if ref.kind == "raw" and not ref.path.exists():
        return UnitResult(
            pdb_id,
            split,
            False,
            error=f"{ref.describe()}: {MISSING_STRUCTURE} in "
            f"{ref.path.parent} (put the entry there, or build with --fetch)",
            key=key,
        )
    if ref.problem:  # found by discovery (e.g. a folder name that is not UTF-8)
        return UnitResult(pdb_id, split, False, error=ref.problem)
    try:
        inputs = file_checksums(refs[pdb_id])
    except OSError as exc:
        return UnitResult(
            pdb_id, split, False, error=f"{refs[pdb_id].path}: cannot read ({exc})", key=key
        )
    annotations = AnnotationCache(refs, cfg.pocket_cutoff, cfg.image_size, cfg.hbonds)
    try:
        return inputs, annotations, annotations.get(pdb_id)
    except MisiError as exc:
        return UnitResult(pdb_id, split, False, error=str(exc), inputs=inputs, key=key)
    except Exception as exc:  # a bug or an unforeseen input problem: recorded, never fatal
        log.exception("unexpected failure reading %s", pdb_id)
        return UnitResult(
            pdb_id,
            split,
            False,
            error=f"{refs[pdb_id].describe()}: {type(exc).__name__}: {exc}",
            inputs=inputs,
            key=key,
        )


def _read_digests(annotations: AnnotationCache, pdb_id: str) -> dict[str, str]:
    """{pdb id: files digest} of the other complexes a unit read (a file that cannot be read now
    records an empty digest, which no later state matches: the unit is redone)."""
    out = {}
    for other in sorted(set(annotations.cache) | set(annotations.failures)):
        if other == pdb_id or other not in annotations.refs:
            continue
        try:
            out[other] = files_digest(file_checksums(annotations.refs[other]))
        except OSError:
            out[other] = ""
    return out


def _row(inst, split: str, annotations: AnnotationCache, cache) -> dict:
    """The stored row of one question (through the row record, so every row fits its schema
    and its task's metadata type)."""
    images = []
    for spec in inst.images:
        cx = annotations.get(spec.pdb_id).complex
        images.append(cache.get(cx, spec.request))
    row = Row(
        id=inst.qid,
        task=inst.task,
        split=split,
        pdb_id=inst.pdb_id,
        images=tuple(images),
        image_views=tuple(s.view_name for s in inst.images),
        question=inst.question,
        options=tuple(inst.options),
        answer=inst.answer,
        answer_format=kind_of(inst.task).answer_format,
        metadata=parse_metadata(inst.metadata_json, inst.task),
    )
    _check_contracts(row)
    return row.to_row()


def _check_contracts(row: Row) -> None:
    """A row its task's answer kind refuses (options against metadata) or with a metadata field
    neither the kind's metadata type nor the room's ``metadata_fields`` declares: a
    :class:`TaskError` naming the contract of docs/extending.md it breaks."""
    meta = row.metadata
    undeclared = sorted(set(meta.extra) - set(room_of(row.task).metadata_fields))
    if undeclared:
        raise TaskError(
            f"{row.id}: metadata {', '.join(undeclared)} declared by neither "
            f"{type(meta).__name__} nor the room's metadata_fields (contract metadata-fields)"
        )
    problems = kind_of(row.task).row_problems(
        {"id": row.id, "options": row.options, "answer": row.answer}, meta
    )
    if problems:
        raise TaskError(f"{problems[0]} (contract options)")


#: What a unit write that failed (a full disk) leaves: the units finished before are kept.
_UNIT_HINT = (
    "the units finished before are kept; free space and run the same command again to resume"
)


def run_unit(args) -> UnitResult:
    pdb_id, refs, splits, cfg, work = args
    rows, result = generate_unit(pdb_id, refs, splits, cfg)
    if result.ok:
        write_rows_atomic(rows, work / f"{pdb_id}.parquet", _UNIT_HINT)
    write_json_atomic(work / f"{pdb_id}.status.json", asdict(result))
    return result


def write_json_atomic(path: Path, data: dict) -> None:
    """A unit's status file, whole or not at all (:func:`..core.atomic.write_atomic`)."""
    write_text_atomic(path, json.dumps(data, sort_keys=True, indent=1), _UNIT_HINT)
