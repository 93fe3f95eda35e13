"""Dataset build: complexes -> questions -> rendered images -> Parquet shards, card, manifest.

Work is split by complex. Each complex is one unit that writes its rows to
``<out>/.work/<config hash>/complexes/<pdbid>.parquet`` and then a status file (the completion
marker), both atomically; a rerun skips units whose marker exists, so a killed build resumes
without redoing finished complexes. Units depend only on (inputs, configuration, seed), never on
worker count or order, and the merge reads them in PDB-id order: one worker, many workers and a
resumed build give byte-identical shards.

Cluster use: run ``build --num-shards K --shard-index I --no-merge`` on K machines (each does the
complexes whose position modulo K is I), then ``build --merge-only`` once.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Sequence

from .errors import MisiError
from .records import ComplexRef
from .sources import assign_splits, discover, file_checksums

log = logging.getLogger(__name__)

DEFAULT_OUT = Path("misi-bench")
BUILDER_VERSION = "0.1.0"


@dataclass(frozen=True)
class BuildConfig:
    """Everything that determines a build's output (hashed into ``config_hash``)."""

    source: str = "samples"
    tasks: tuple[str, ...] = ()
    seed: int = 0
    limit: int | None = None
    split_file: str | None = None
    image_size: int = 512
    pocket_cutoff: float = 10.0
    tiny_per_task: int = 50
    max_shard_bytes: int = 256 * 1024 * 1024

    def __post_init__(self) -> None:
        from .tasks import TASKS  # noqa: PLC0415

        tasks = tuple(self.tasks) or TASKS
        unknown = [t for t in tasks if t not in TASKS]
        if unknown:
            raise MisiError(f"unknown task(s): {', '.join(unknown)}; expected some of {', '.join(TASKS)}")
        object.__setattr__(self, "tasks", tuple(t for t in TASKS if t in tasks))
        if self.seed is None or int(self.seed) < 0:
            raise MisiError(f"seed must be a non-negative integer, got {self.seed!r}")
        if not 16 <= int(self.image_size) <= 4096:
            raise MisiError(f"image size must be 16..4096 px, got {self.image_size}")

    def generation_fields(self) -> dict:
        from .tasks.base import load_params, load_templates  # noqa: PLC0415

        data = asdict(self)
        data.pop("max_shard_bytes")
        data["source"] = "samples" if self.source == "samples" else "folder"
        data["template_version"] = load_templates()["version"]
        data["params_version"] = load_params()["version"]
        data["builder_version"] = BUILDER_VERSION
        from .render import RENDER_VERSION  # noqa: PLC0415

        data["render_version"] = RENDER_VERSION
        from .write import sha256_file  # noqa: PLC0415

        data["split_file"] = sha256_file(Path(self.split_file)) if self.split_file else None
        return data

    @property
    def config_hash(self) -> str:
        text = json.dumps(self.generation_fields(), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


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
    n_images_rendered: int = 0
    seconds: float = 0.0


# ---------------------------------------------------------------------------- per complex


class _AnnotationCache:
    """Annotations of complexes read in this process (the unit's own and T5 targets)."""

    def __init__(self, refs: dict[str, ComplexRef], cfg: BuildConfig):
        self.refs, self.cfg, self.cache, self.failures = refs, cfg, {}, {}

    def get(self, pdb_id: str):
        from .structure import load_complex  # noqa: PLC0415
        from .tasks.base import annotate  # noqa: PLC0415

        if pdb_id in self.failures:
            raise self.failures[pdb_id]
        if pdb_id not in self.cache:
            try:
                cx = load_complex(self.refs[pdb_id], pocket_cutoff=self.cfg.pocket_cutoff)
                self.cache[pdb_id] = annotate(cx, self.cfg.image_size)
            except MisiError as exc:
                self.failures[pdb_id] = exc
                raise
        return self.cache[pdb_id]


def generate_unit(pdb_id: str, refs: dict[str, ComplexRef], splits: dict[str, str], cfg: BuildConfig):
    """Questions and images of one complex: (rows, UnitResult). Never raises for bad input."""
    from .render import RenderCache  # noqa: PLC0415
    from .tasks import generator  # noqa: PLC0415
    from .tasks.base import TaskContext, load_params, load_templates  # noqa: PLC0415

    start = time.perf_counter()
    split = splits[pdb_id]
    inputs = {}
    try:
        inputs = file_checksums(refs[pdb_id])
    except OSError as exc:
        return [], UnitResult(pdb_id, split, False, error=f"{refs[pdb_id].path}: cannot read ({exc})")
    annotations = _AnnotationCache(refs, cfg)
    try:
        ann = annotations.get(pdb_id)
    except MisiError as exc:
        return [], UnitResult(pdb_id, split, False, error=str(exc), inputs=inputs)
    except Exception as exc:  # a bug or an unforeseen input problem: recorded, never fatal
        log.exception("unexpected failure reading %s", pdb_id)
        return [], UnitResult(pdb_id, split, False, error=f"{refs[pdb_id].describe()}: {type(exc).__name__}: {exc}",
                              inputs=inputs)
    params = load_params()

    partners = [p for p in sorted(splits) if splits[p] == split and p != pdb_id]
    cache = RenderCache()
    rows, counts, skipped = [], {}, {}
    for task in cfg.tasks:
        ctx = TaskContext(ann=ann, split=split, seed=int(cfg.seed), params=params["tasks"][task],
                          choice=params["choice"], template_version=load_templates()["version"],
                          params_version=params["version"], partners=partners, load_partner=annotations.get,
                          image_size=cfg.image_size)
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
    return rows, UnitResult(pdb_id, split, True, counts=counts, skipped_tasks=skipped, inputs=inputs,
                            n_images_rendered=cache.misses, seconds=round(time.perf_counter() - start, 3))


def _row(inst, split: str, annotations: _AnnotationCache, cache) -> dict:
    images = []
    for spec in inst.images:
        cx = annotations.get(spec.pdb_id).complex
        images.append({"bytes": cache.get(cx, spec.request), "path": None})
    return {
        "id": inst.qid, "task": inst.task, "split": split, "pdb_id": inst.pdb_id, "images": images,
        "image_views": [s.view_name for s in inst.images], "question": inst.question,
        "options": list(inst.options), "answer": inst.answer, "answer_format": inst.answer_format,
        "metadata": inst.metadata_json,
    }


def _run_unit(args) -> UnitResult:
    pdb_id, refs, splits, cfg, work = args
    from .write import write_rows_atomic  # noqa: PLC0415

    rows, result = generate_unit(pdb_id, refs, splits, cfg)
    if result.ok:
        write_rows_atomic(rows, work / f"{pdb_id}.parquet")
    _write_json_atomic(work / f"{pdb_id}.status.json", asdict(result))
    return result


def _write_json_atomic(path: Path, data: dict) -> None:
    tmp = path.with_suffix(path.suffix + f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(data, sort_keys=True, indent=1), encoding="utf-8")
    os.replace(tmp, path)


# ---------------------------------------------------------------------------- the build


def plan(cfg: BuildConfig) -> tuple[dict[str, ComplexRef], dict[str, str]]:
    refs = discover(cfg.source)
    if cfg.limit is not None:
        refs = refs[: int(cfg.limit)]
    by_id = {r.pdb_id: r for r in refs}
    return by_id, assign_splits(sorted(by_id), int(cfg.seed), cfg.split_file)


def work_dir(out: Path, cfg: BuildConfig) -> Path:
    return Path(out) / ".work" / cfg.config_hash / "complexes"


def build_dataset(source: str | Path = "samples", out: str | Path = DEFAULT_OUT, tasks: Sequence[str] = (),
                  seed: int = 0, limit: int | None = None, split_file: str | Path | None = None,
                  workers: int = 1, image_size: int = 512, pocket_cutoff: float = 10.0,
                  num_shards: int = 1, shard_index: int = 0, merge: bool = True, merge_only: bool = False,
                  validate: bool = True, tiny_per_task: int = 50, progress: bool = True) -> dict:
    """Build the dataset folder ``out`` (SPEC section 8) and return its manifest.

    ``num_shards``/``shard_index`` restrict the generation to one shard of the complexes (run the
    merge afterwards with ``merge_only=True``). ``workers`` processes run complexes in parallel.
    """
    cfg = BuildConfig(source=str(source), tasks=tuple(tasks), seed=int(seed), limit=limit,
                      split_file=str(split_file) if split_file else None, image_size=int(image_size),
                      pocket_cutoff=float(pocket_cutoff), tiny_per_task=int(tiny_per_task))
    if not (1 <= num_shards and 0 <= shard_index < num_shards):
        raise MisiError(f"shard index {shard_index} is not in 0..{num_shards - 1}")
    out = Path(out)
    refs, splits = plan(cfg)
    work = work_dir(out, cfg)
    work.mkdir(parents=True, exist_ok=True)
    if not merge_only:
        mine = [p for k, p in enumerate(sorted(refs)) if k % num_shards == shard_index]
        todo = [p for p in mine if not (work / f"{p}.status.json").exists()]
        log.info("build %s: %d complexes in this shard, %d already done, %d workers",
                 cfg.config_hash, len(mine), len(mine) - len(todo), workers)
        _run_units(todo, refs, splits, cfg, work, workers, progress)
    if not merge and not merge_only:
        return {}
    missing = [p for p in sorted(refs) if not (work / f"{p}.status.json").exists()]
    if missing:
        raise MisiError(f"cannot merge: {len(missing)} complexes not generated yet (e.g. {missing[0]}); "
                        "run the remaining shards first")
    from .write import merge_units  # noqa: PLC0415

    manifest = merge_units(out, work, cfg, refs, splits)
    if validate:
        from .validate import validate_dataset  # noqa: PLC0415

        report = validate_dataset(out, source=cfg.source)
        manifest["validation"] = {"ok": report.ok, "checked": report.checked, "problems": report.problems[:50]}
        from .write import write_manifest  # noqa: PLC0415

        write_manifest(out, manifest)
        if not report.ok:
            raise MisiError(f"{out}: validation failed: {report.problems[:3]}")
    return manifest


def _run_units(todo: list[str], refs, splits, cfg, work: Path, workers: int, progress: bool) -> None:
    from tqdm.auto import tqdm  # noqa: PLC0415

    jobs = [(p, refs, splits, cfg, work) for p in todo]
    bar = tqdm(total=len(jobs), desc="complexes", unit="cx", disable=not progress or not jobs)
    try:
        if workers <= 1 or len(jobs) <= 1:
            for job in jobs:
                _report(_run_unit(job))
                bar.update()
        else:
            with ProcessPoolExecutor(max_workers=workers) as pool:
                for result in pool.map(_run_unit, jobs, chunksize=1):
                    _report(result)
                    bar.update()
    finally:
        bar.close()


def _report(result: UnitResult) -> None:
    if not result.ok:
        log.warning("skipped %s: %s", result.pdb_id, result.error)
    for task, reason in result.skipped_tasks.items():
        log.info("%s: no %s questions: %s", result.pdb_id, task, reason)


