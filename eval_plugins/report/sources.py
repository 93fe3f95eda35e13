"""Result files -> per-column scores (percent), and the chance levels of a build folder.

Recognised inputs (by content, not by name):

- our score report: the JSON of ``misi-bench score --json-out`` (``{"report": {...}}``) or a bare
  aggregate report (``{"scale": "0-1", "tasks": ...}``, which VLMEvalKit's ``*_report.json`` is);
- lmms-eval's ``*_results.json`` and lm-eval's ``results_*.json`` (``results`` keyed by
  ``misi_<task>`` / ``tiny_misi_<task>``, metrics ``score,none``, ``score_positive,none``...);
- VLMEvalKit's ``<model>_<dataset>_acc.csv`` (rows ``task,n,score,exact``);
- a ``misi-bench eval`` run folder (``run.json`` + ``report.json``; its ``report.json`` alone
  works too): labelled with the run's model, split from its selection, intervals from its
  per-question scores;
- a folder: every recognised file under it.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ...builder.core.errors import MisiError
from ...builder.core.registry import TASK_NAMES, TASK_SPECS
from ...builder.scoring import T9_PAPER_EXACT, paper_exact_columns
from .intervals import (
    HARNESS_BLOCK,
    HEADLINE,
    Interval,
    column_intervals,
    counts_of_aggregate,
    intervals_of_block,
    vlm_intervals,
)
from .reference import (
    COLUMNS,
    HALF_SUBSETS,
    TASK_COLUMN,
    average_all_tasks,
    paper_average,
)

#: The random baseline is drawn this many times per question (its expected score, less noise).
RANDOM_DRAWS = 20
_VLM_FILE_RE = re.compile(r"^(?P<model>.+?)_(?P<data>MiSI(?:_[a-z_]+)?)_(?:acc\.csv|report\.json)$")
_HARNESS_FILE_GLOBS = (
    "*_results.json",
    "results_*.json",
    "*_MiSI*_report.json",
    "*_MiSI*_acc.csv",
    "*.score.json",
)


@dataclass(frozen=True)
class ModelResult:
    """Scores of one model on one split: ``scores`` column -> percent (None = not in the file)."""

    label: str
    source: str
    path: str
    split: str | None
    scores: dict[str, float | None] = field(default_factory=dict)
    n: int | None = None
    #: The build profile the result was scored on, when the file records it (None: unknown).
    profile: str | None = None
    #: Column -> number of questions scored (absent when the file does not say).
    counts: dict[str, int] = field(default_factory=dict)
    #: Column -> 95% interval in percent (see :mod:`.intervals`).
    intervals: dict[str, Interval] = field(default_factory=dict)
    #: T9 exact match in percent, (the paper's way: complexes with at least one H-bond, ours:
    #: every complex), when the file has both (a ``misi-bench score`` report); else None.
    t9_exact: tuple[float | None, float | None] | None = None
    #: Exact match per paper column (0-1; T9 the paper's way), when the file is a score report.
    exact: dict[str, float | None] | None = None
    #: The per-question entries (``per_item``) of a score report or eval run: what the margin
    #: above the blind floor is paired on (empty for harness files).
    per_item: tuple = ()

    @property
    def paper_average(self) -> float | None:
        """The paper's eight-column headline average (None when a column is missing)."""
        return paper_average(self.scores)

    @property
    def average_all(self) -> float | None:
        """Macro mean over the tasks present (T4 as one task)."""
        return average_all_tasks(self.scores)


class ImpossibleScore(MisiError):
    """A score cell outside 0-1 (0-100%), infinite or NaN: no scorer writes it, so the file is
    refused rather than drawn or averaged (:func:`read_result` names the file and the cell)."""

    def __init__(self, cell: str, value) -> None:
        super().__init__(f"{cell} holds {value!r}: a score must be between 0 and 1 (0-100%)")
        self.cell, self.value = cell, value


def _pct(value, cell: str = "a score") -> float | None:
    """A 0-1 score cell in percent (None when absent or not a number); a number outside 0-1,
    infinite or NaN is refused (:class:`ImpossibleScore`): a NaN task dropped from the averages
    showed the others' mean as the model's."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    if not 0.0 <= number <= 1.0:  # NaN too: a task with no score is left out, never NaN
        raise ImpossibleScore(cell, value)
    return 100.0 * number


def _empty() -> dict[str, float | None]:
    return {c: None for c in COLUMNS}


def from_aggregate(report: Mapping) -> tuple[dict[str, float | None], int | None]:
    """Columns from a :func:`misi_bench.builder.scoring.aggregate` report (0-1 scale)."""
    scores = _empty()
    tasks = report.get("tasks") or {}
    for task, row in tasks.items():
        if task in TASK_COLUMN:
            scores[TASK_COLUMN[task]] = _pct(row.get("score"), f"tasks.{task}.score")
    for sub, col in HALF_SUBSETS.items():
        cell = f"subsets.{sub}.score"
        scores[col] = _pct((report.get("subsets") or {}).get(sub, {}).get("score"), cell)
    return scores, report.get("n")


def t9_exact_of(report: Mapping) -> tuple[float | None, float | None] | None:
    """(T9 exact match the paper's way, ours) in percent from a score report, None without T9."""
    task = next((s.name for s in TASK_SPECS for r in s.readings if r[1] == T9_PAPER_EXACT), None)
    row = (report.get("tasks") or {}).get(task) or {}
    if "exact" not in row:
        return None
    return (
        _pct(row.get(T9_PAPER_EXACT), f"tasks.{task}.{T9_PAPER_EXACT}"),
        _pct(row.get("exact"), f"tasks.{task}.exact"),
    )


def _harness_results(data: Mapping, path: Path, label: str | None) -> list[ModelResult]:
    """lmms-eval / lm-eval results JSON: one :class:`ModelResult` per split present."""
    results = data.get("results") or {}
    source = "lmms-eval" if "lmms_eval_version" in data else "lm-eval"
    config = data.get("config") or {}
    model_args = config.get("model_args")
    if isinstance(model_args, str):
        model_args = dict(kv.split("=", 1) for kv in model_args.split(",") if "=" in kv)
    name = label or str(config.get("model") or data.get("model_name") or path.stem)
    if not label and isinstance(model_args, Mapping):
        for key in ("pretrained", "model", "model_version", "response", "answer"):
            if model_args.get(key):
                name = f"{name} ({model_args[key]})"
                break
    out = []
    for prefix, split in (("misi_", "test"), ("tiny_misi_", "tiny")):
        found = {t: results[prefix + t] for t in TASK_NAMES if prefix + t in results}
        if not found:
            continue
        scores = _empty()
        for task, row in found.items():
            if task in TASK_COLUMN:
                cell = f"results.{prefix}{task}.score,none"
                scores[TASK_COLUMN[task]] = _pct(row.get("score,none"), cell)
        for (
            spec
        ) in TASK_SPECS:  # a task's halves (T4+ and T4-) from its score_positive/score_negative
            if spec.halves is not None:
                row = found.get(spec.name, {})
                for sign, word in (("+", "positive"), ("-", "negative")):
                    cell = f"results.{prefix}{spec.name}.score_{word},none"
                    scores[f"T{spec.number}{sign}"] = _pct(row.get(f"score_{word},none"), cell)
        n_samples = data.get("n-samples") or {}
        counts = {
            TASK_COLUMN[t]: int((n_samples.get(prefix + t) or {}).get("effective", 0))
            for t in found
            if t in TASK_COLUMN and (n_samples.get(prefix + t) or {}).get("effective")
        }
        n = sum(counts.values()) or None
        suffix = " [tiny]" if split == "tiny" and not label else ""
        out.append(
            ModelResult(
                name + suffix,
                source,
                str(path),
                split,
                scores,
                n,
                counts=counts,
                intervals=intervals_of_block((data.get(HARNESS_BLOCK) or {}).get(split)),
            )
        )
    return out


def _vlm_csv(path: Path, label: str | None) -> ModelResult:
    with path.open(newline="", encoding="utf-8") as fh:
        rows = {r["task"]: r for r in csv.DictReader(fh)}
    report = {
        "tasks": {t: {"score": rows[t]["score"]} for t in TASK_NAMES if t in rows},
        "subsets": {s: {"score": rows[s]["score"]} for s in HALF_SUBSETS if s in rows},
    }
    try:
        scores, _ = from_aggregate(report)
    except ImpossibleScore as exc:  # the table's own names: its row and column
        row = exc.cell.split(".")[1]
        raise ImpossibleScore(f"row {row}, column score", exc.value) from None
    counts = {
        TASK_COLUMN[t]: int(rows[t]["n"]) for t in TASK_NAMES if t in rows and rows[t].get("n")
    }
    counts.update(
        {HALF_SUBSETS[s]: int(rows[s]["n"]) for s in HALF_SUBSETS if s in rows and rows[s].get("n")}
    )
    n = sum(int(rows[t]["n"]) for t in TASK_NAMES if t in rows and rows[t].get("n")) or None
    return _vlm_result(path, label, scores, n, counts, vlm_intervals(rows))


def _vlm_result(
    path: Path, label: str | None, scores, n, counts=None, intervals=None
) -> ModelResult:
    from ..vlmevalkit.datasets import parse_name  # noqa: PLC0415  (no harness import)

    m = _VLM_FILE_RE.match(path.name)
    split = None
    if m:
        try:
            split = parse_name(m["data"])[1]
        except KeyError:
            split = None
    name = label or (m["model"] if m else path.stem)
    counts = dict(counts or {})
    return ModelResult(
        name,
        "VLMEvalKit",
        str(path),
        split,
        scores,
        n,
        counts=counts,
        intervals=dict(intervals or {}),
    )


def _score_result(
    data: Mapping, report: Mapping, path: Path, label: str, source: str, split: str | None
) -> ModelResult:
    """A result from an aggregate report (``misi-bench score`` JSON or an ``eval`` run's)."""
    scores, n = from_aggregate(report)
    counts = counts_of_aggregate(report)
    per_item = data.get("per_item") if isinstance(data.get("per_item"), list) else None
    intervals = intervals_of_block(report.get("intervals")) or column_intervals(per_item)
    return ModelResult(
        label,
        source,
        str(path),
        split,
        scores,
        n,
        report.get("profile") or data.get("profile"),
        counts,
        intervals,
        t9_exact_of(report),
        paper_exact_columns(report),
        tuple(per_item or ()),
    )


def _eval_run(data: Mapping, path: Path, label: str | None) -> ModelResult:
    """A ``misi-bench eval`` run's ``report.json``: the run's model and split."""
    settings = data.get("settings") if isinstance(data.get("settings"), Mapping) else {}
    selection = data.get("selection") if isinstance(data.get("selection"), Mapping) else {}
    name = label or str(settings.get("model") or path.parent.name)
    split = selection.get("split")
    return _score_result(
        data, data["report"], path, name, "misi-bench eval", None if split is None else str(split)
    )


def _eval_reports(folder: Path) -> list[Path]:
    """The ``report.json`` of every ``eval`` run folder (one with ``run.json``) under ``folder``."""
    return sorted(
        p.parent / "report.json"
        for p in folder.rglob("run.json")
        if (p.parent / "report.json").is_file()
    )


def read_result(
    path: str | Path, label: str | None = None, split: str | None = None
) -> list[ModelResult]:
    """The model results in one file or folder (see the module docstring for the formats). A
    score outside 0-100% refuses the file, naming it and the cell (:class:`ImpossibleScore`)."""
    path = Path(path)
    if path.is_dir():
        files = sorted({f for g in _HARNESS_FILE_GLOBS for f in path.rglob(g)})
        # VLMEvalKit writes both <model>_<data>_report.json and _acc.csv: read the report only
        files = [
            f
            for f in files
            if not (
                f.name.endswith("_acc.csv")
                and f.with_name(f.name.removesuffix("_acc.csv") + "_report.json") in files
            )
        ]
        files += [f for f in _eval_reports(path) if f not in files]
        out = [r for f in files for r in read_result(f, label, split)]
        if not out:
            raise MisiError(
                f"{path}: no result files found (looked for {', '.join(_HARNESS_FILE_GLOBS)} "
                "and misi-bench eval run folders: run.json + report.json)"
            )
        return out
    if not path.is_file():
        raise MisiError(f"{path}: no such result file")
    try:
        return _read_file(path, label, split)
    except ImpossibleScore as exc:
        raise MisiError(f"{path}: {exc}; the file is not drawn or averaged") from None


def _read_file(path: Path, label: str | None, split: str | None) -> list[ModelResult]:
    """The model results of one result file (:func:`read_result`)."""
    if path.suffix == ".csv":
        try:
            return [_vlm_csv(path, label)]
        except (KeyError, ValueError, csv.Error) as exc:
            raise MisiError(f"{path}: not a VLMEvalKit MiSI accuracy table ({exc})") from None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise MisiError(f"{path}: cannot read a JSON result file ({exc})") from None
    if not isinstance(data, Mapping):
        raise MisiError(f"{path}: not a result file (top level is not an object)")
    if isinstance(data.get("report"), Mapping) and "tasks" in data["report"]:
        if "run_key" in data and isinstance(data.get("settings"), Mapping):
            return [_eval_run(data, path, label)]
        name = label or path.name.removesuffix(".json").removesuffix(".score")
        return [_score_result(data, data["report"], path, name, "misi-bench score", split)]
    if "tasks" in data and "scale" in data:
        if _VLM_FILE_RE.match(path.name):
            from dataclasses import replace  # noqa: PLC0415

            scores, n = from_aggregate(data)
            vlm = _vlm_result(
                path,
                label,
                scores,
                n,
                counts_of_aggregate(data),
                intervals_of_block(data.get("intervals")),
            )
            return [replace(vlm, profile=data.get("profile"))]
        return [_score_result(data, data, path, label or path.stem, "misi-bench score", split)]
    if isinstance(data.get("results"), Mapping):
        out = _harness_results(data, path, label)
        if out:
            return out
        raise MisiError(
            f"{path}: a harness results file without MiSI tasks (expected misi_<task> keys)"
        )
    raise MisiError(
        f"{path}: not a recognised result file (score report, lmms-eval/lm-eval results JSON, "
        "VLMEvalKit acc.csv or report.json)"
    )


def merge_results(results: list[ModelResult]) -> list[ModelResult]:
    """One result per (label, source, split): per-task files of one model (VLMEvalKit's
    ``MiSI_<task>`` runs, say) fill each other's missing columns; the first file wins a clash."""
    merged: dict[tuple, ModelResult] = {}
    for res in results:
        key = (res.label, res.source, res.split)
        if key not in merged:
            merged[key] = res
            continue
        old = merged[key]
        scores = {
            k: old.scores.get(k) if old.scores.get(k) is not None else v
            for k, v in res.scores.items()
        }
        per_item = old.per_item + res.per_item if old.per_item and res.per_item else ()
        if per_item:  # resampled together: the complexes of both files
            intervals = column_intervals(per_item)
        else:  # each file's own columns; no headline interval from a part of the questions
            intervals = {**res.intervals, **old.intervals}
            intervals.pop(HEADLINE, None)
        merged[key] = ModelResult(
            old.label,
            old.source,
            f"{old.path}; {res.path}",
            old.split,
            scores,
            (old.n or 0) + (res.n or 0) or None,
            old.profile if old.profile == res.profile else None,
            {**res.counts, **old.counts},
            intervals,
            old.t9_exact or res.t9_exact,
            {**(res.exact or {}), **(old.exact or {})} or None,
            per_item,
        )
    return list(merged.values())
