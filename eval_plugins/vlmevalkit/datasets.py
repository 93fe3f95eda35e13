"""VLMEvalKit dataset classes for MiSI-Bench, built on first use (``vlmeval`` is imported lazily)."""

from __future__ import annotations

import json
import math
import os
import os.path as osp
import sys
from collections.abc import Sequence

from misi_bench.builder.core.registry import TASK_BY_NAME
from misi_bench.builder.scoring.bootstrap import complex_of
from misi_bench.eval_plugins import preflight
from misi_bench.eval_plugins._torch_compat import ensure_torchvision_importable
from misi_bench.eval_plugins.common import (
    TASKS,
    TEST_SPLIT,
    TINY_SPLIT,
    build_config_hash,
    call_main,
    load_split,
    score_doc_raw,
    to_pil_rgb,
)
from misi_bench.eval_plugins.preflight import PreflightError, option_values

GROUP = "MiSI"
TINY_SUFFIX = "_tiny"


def _names(task: str | None) -> list[str]:
    base = GROUP if task is None else f"{GROUP}_{task}"
    return [base, base + TINY_SUFFIX]


#: Every dataset name we register, task datasets first, then the two groups.
DATASET_NAMES: tuple[str, ...] = tuple(n for t in (*TASKS, None) for n in _names(t))


def parse_name(name: str) -> tuple[str | None, str]:
    """``(task or None for the group, split)`` of one of our dataset names."""
    if name not in DATASET_NAMES:
        raise KeyError(f"not a MiSI-Bench dataset name: {name!r}")
    split = TEST_SPLIT
    if name.endswith(TINY_SUFFIX):
        name, split = name[: -len(TINY_SUFFIX)], TINY_SPLIT
    task = None if name == GROUP else name[len(GROUP) + 1 :]
    return task, split


_CLASSES: dict[str, type] = {}
#: ``(dataset name, prediction file)`` of every :meth:`evaluate` call in this process (for the
#: launcher's check that each requested model x dataset pair was scored).
EVALUATED: list[tuple[str, str]] = []


def dataset_classes() -> dict[str, type]:
    """``{class name: class}``: one class per task (``MiSI_translation`` ...) and the group
    class ``MiSIBench`` (``MiSI``). Requires ``vlmeval``."""
    if _CLASSES:
        return _CLASSES
    import pandas as pd
    from vlmeval.dataset.image_base import ImageBaseDataset
    from vlmeval.smp import LMUDataRoot

    class MiSIBench(ImageBaseDataset):
        """All nine MiSI-Bench tasks (``MiSI``, ``MiSI_tiny``); the per-task classes narrow it."""

        TYPE = "VQA"
        MODALITY = "IMAGE"
        DATASET_URL = {}
        DATASET_MD5 = {}
        TASK: str | None = None
        #: our prompts are complete; models must not rewrite them
        force_use_dataset_prompt = True

        @classmethod
        def supported_datasets(cls):
            return _names(cls.TASK)

        @classmethod
        def report_primary_metric(cls, metrics):
            """The headline of VLMEvalKit's run summary: ``paper_average`` (the row of the
            ``_acc`` table), or the task's ``score`` for a one-task dataset (no paper average),
            never whichever row VLMEvalKit would pick by itself."""
            return primary_metric(metrics, cls.TASK)

        def __init__(self, dataset: str = GROUP, **kwargs):
            _task, split = parse_name(dataset)
            self.dataset_name = dataset
            self.split = split
            self.img_root = osp.join(LMUDataRoot(), "images", "MiSI", split)
            self.skip_noimg = False
            self.meta_only = True
            self.data = self.load_data(dataset)
            self.post_build(dataset)

        def load_data(self, dataset):
            """Rows of our Parquet data (data location: ``misi_bench.hub_repo_id()``), images
            written once as PNG files under ``$LMUData/images/MiSI/<split>/``."""
            task, split = parse_name(dataset)
            return pd.DataFrame.from_records(
                _records(load_split(task or "all", split), self.img_root)
            )

        def build_prompt(self, line):
            """Every image of the row in prompt order, then the row's question text."""
            if isinstance(line, int):
                line = self.data.iloc[line]
            paths = line["image_path"]
            paths = json.loads(paths) if isinstance(paths, str) and paths.startswith("[") else paths
            paths = [paths] if isinstance(paths, str) else list(paths)
            msgs = [{"type": "image", "value": p} for p in paths]
            msgs.append({"type": "text", "value": line["question"]})
            return msgs

        def evaluate(self, eval_file, **judge_kwargs):
            """Score with the one MiSI-Bench scorer (no judge model). Writes
            ``<eval_file>_score.<fmt>`` (per-row metrics) and ``<eval_file>_acc.<fmt>`` (one row
            per task and subset, then ``paper_average`` (the paper's eight-column average),
            ``average_all_tasks`` and ``average_headline_tasks``; 0-1 scale) and
            returns the latter as a DataFrame."""
            EVALUATED.append((self.dataset_name, str(eval_file)))
            return _evaluate(self.data, eval_file)

    _CLASSES["MiSIBench"] = MiSIBench
    for task in TASKS:
        name = f"MiSI_{task}"
        _CLASSES[name] = type(
            name, (MiSIBench,), {"TASK": task, "__doc__": f"MiSI-Bench task {task}."}
        )
    return _CLASSES


def _evaluate(ours, eval_file):
    """``MiSIBench.evaluate`` on our rows ``ours`` (a DataFrame): writes the ``_score`` table,
    the ``_acc`` table and the ``_report`` JSON next to ``eval_file``; returns the ``_acc``
    table."""
    import pandas as pd
    from misi_bench.builder.scoring import aggregate, report_intervals
    from vlmeval.smp import dump, get_intermediate_file_path

    data = _read_predictions(eval_file)
    by_index = {str(i): r for i, r in zip(ours["index"], ours.to_dict("records"))}
    rows, per_item = _score_rows(data, by_index)
    for key in ("score", "exact"):
        data[key] = [m[key] for _, m in rows]
    dump(data, get_intermediate_file_path(eval_file, "_score"))
    report = aggregate(rows)
    report["intervals"] = report_intervals(per_item)
    acc = pd.DataFrame(_acc_table(report))
    dump(acc, get_intermediate_file_path(eval_file, "_acc"))
    with open(get_intermediate_file_path(eval_file, "_report", "json"), "w") as fh:
        json.dump(report, fh, indent=2)
    return acc


def _records(ds, img_root: str) -> list[dict]:
    """One VLMEvalKit record per row of a split (options and image views as JSON text), its
    images written once as ``<img_root>/<id>_<j>.png``."""
    os.makedirs(img_root, exist_ok=True)
    build = build_config_hash()  # kept in the prediction tables; `score` checks it
    records = []
    for k, row in enumerate(ds.cast_column("images", _raw_images(ds))):
        paths = []
        for j, image in enumerate(row["images"]):
            path = osp.join(img_root, f"{row['id']}_{j}.png")
            if not osp.exists(path):
                _write_image(image, path)
            paths.append(path)
        records.append(
            {
                "index": k,
                "id": row["id"],
                "task": row["task"],
                "category": row["task"],
                "pdb_id": row["pdb_id"],
                "question": row["question"],
                "answer": row["answer"],
                "answer_format": row["answer_format"],
                "options": json.dumps(list(row["options"] or [])),
                "image_views": json.dumps(list(row["image_views"] or [])),
                "metadata": row["metadata"],
                "image_path": paths,
                "config_hash": build or "",
            }
        )
    return records


def _score_rows(data, by_index: dict) -> tuple[list[tuple[str, dict]], list[dict]]:
    """``(task, metrics)`` of each prediction line, scored against our own row of its index
    (gold fields come from our rows, not from the spreadsheet round-trip), and the per-question
    entries (id, task, complex, metrics) the intervals resample."""
    rows, per_item = [], []
    for _, line in data.iterrows():
        ref = by_index.get(str(line["index"]), line)
        options = ref.get("options")
        doc = {
            "task": ref["task"],
            "answer": str(ref["answer"]),
            "metadata": ref.get("metadata"),
            "options": json.loads(options) if isinstance(options, str) else options,
        }
        prediction = line.get("prediction")
        missing = prediction is None or (isinstance(prediction, float) and math.isnan(prediction))
        metrics = score_doc_raw(doc, "" if missing else str(prediction))
        rows.append((doc["task"], metrics))
        unit = ref.get("pdb_id") or complex_of({"id": ref.get("id"), "metadata": doc["metadata"]})
        per_item.append(
            {"id": str(ref.get("id")), "task": doc["task"], "complex": unit, "metrics": metrics}
        )
    return rows, per_item


def _acc_table(report: dict) -> list[dict]:
    """The ``_acc`` table (0-1 scale): one row per task (and per half of a task with halves),
    then ``paper_average``, ``average_all_tasks`` and ``average_headline_tasks``; with the
    report's intervals (the scorer's one method) as columns ``ci95_low``, ``ci95_high`` and
    ``se`` (:func:`_with_intervals`)."""
    return _with_intervals(_acc_rows(report), report.get("intervals") or {})


#: ``_acc`` row name -> the statistic of the intervals block (T4's halves by column key).
_SUBSET_STAT = {
    sub: f"T{spec.number}_{word}"
    for spec in TASK_BY_NAME.values()
    if spec.halves is not None
    for sub, word in zip(spec.half_names(), ("positive", "negative"))
}


def _with_intervals(table: list[dict], block: dict) -> list[dict]:
    """Each ``_acc`` row with its statistic's ``ci95_low``, ``ci95_high`` and ``se`` (None
    where the block has none)."""
    stats = block.get("statistics") or {}
    for row in table:
        cell = stats.get(_SUBSET_STAT.get(row["task"], row["task"])) or {}
        low, high = cell.get("ci95") or (None, None)
        row.update({"ci95_low": low, "ci95_high": high, "se": cell.get("se")})
    return table


def _acc_rows(report: dict) -> list[dict]:
    """The ``_acc`` rows without intervals."""
    table = []
    for task, t in report["tasks"].items():
        table.append({"task": task, "n": t["n"], "score": t["score"], "exact": t["exact"]})
        if TASK_BY_NAME.get(task) is not None and TASK_BY_NAME[task].halves is not None:
            for sub, s in report["subsets"].items():
                table.append({"task": sub, "n": s["n"], "score": s["score"], "exact": s["exact"]})
    headline_n = sum(
        t["n"] for name, t in report["tasks"].items() if name not in report["headline_excluded"]
    )
    table.append(
        {"task": "paper_average", "n": headline_n, "score": report["paper_average"], "exact": None}
    )
    counts = {"average_all_tasks": report["n"], "average_headline_tasks": headline_n}
    table += [
        {"task": name, "n": n, "score": report[name], "exact": None} for name, n in counts.items()
    ]
    return table


def primary_metric(metrics, task: str | None) -> dict[str, float]:
    """``{name: value}`` of the headline among VLMEvalKit's flattened ``_acc`` metrics (keys
    ``task=<row>|score``): ``paper_average`` when it has a value, else ``task``'s ``score``."""
    if not isinstance(metrics, dict):
        return {}
    for name in ("paper_average", task):
        value = metrics.get(f"task={name}|score") if name else None
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value == value:
            return {"paper_average" if name == "paper_average" else f"{name} score": value}
    return {}


def _read_predictions(eval_file: str):
    """The prediction file, with every cell as written (pandas would read the answers ``None``
    and ``NA`` as missing values)."""
    import pandas as pd

    if eval_file.endswith(".xlsx"):
        return pd.read_excel(eval_file, dtype=str, keep_default_na=False)
    if eval_file.endswith(".tsv"):
        return pd.read_csv(eval_file, sep="\t", dtype=str, keep_default_na=False)
    from vlmeval.smp import load

    return load(eval_file)


def _raw_images(ds):
    import datasets

    return datasets.List(datasets.Image(decode=False))


def _write_image(image, path: str) -> None:
    """Write one stored image (``{"bytes", "path"}``) as a PNG file (atomically)."""
    tmp = f"{path}.tmp{os.getpid()}"
    data = image.get("bytes") if isinstance(image, dict) else None
    if data and data[:8] == b"\x89PNG\r\n\x1a\n":
        with open(tmp, "wb") as fh:
            fh.write(data)
    else:
        to_pil_rgb(image).save(tmp, format="PNG")
    os.replace(tmp, path)


def register() -> list[str]:
    """Add the MiSI-Bench classes to VLMEvalKit's registries (idempotent); returns their names.

    ``vlmeval.dataset.build_dataset`` walks ``DATASET_CLASSES`` and asks each class for its
    ``supported_datasets()``, so appending to that list (and to ``SUPPORTED_DATASETS``, which
    the runner's argument help and ``vlmutil`` read) is enough.
    """
    ensure_torchvision_importable()
    import vlmeval.dataset as vd

    for cls in dataset_classes().values():
        if cls not in vd.DATASET_CLASSES:
            vd.DATASET_CLASSES.append(cls)
        if not hasattr(vd, cls.__name__):  # `--config` files name dataset classes by attribute
            setattr(vd, cls.__name__, cls)
    for name in DATASET_NAMES:
        if name not in vd.SUPPORTED_DATASETS:
            vd.SUPPORTED_DATASETS.append(name)
    return list(DATASET_NAMES)


def _config(argv: Sequence[str]) -> dict:
    path = (option_values(argv, "--config") or [None])[-1]
    if path is None:
        return {}
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError) as exc:
        raise PreflightError(
            f"--config {path}: cannot read it as JSON ({exc}): fix the file"
        ) from None


def _requested_data(argv: Sequence[str]) -> list[str]:
    """Dataset names of ``--data`` or of the ``--config`` file's ``data`` entries (their
    ``dataset`` value, else the key)."""
    data = _config(argv).get("data") or {}
    return (option_values(argv, "--data") or []) + [
        str(v.get("dataset", k)) if isinstance(v, dict) else k for k, v in data.items()
    ]


def _requested_models(argv: Sequence[str]) -> list[str]:
    return (option_values(argv, "--model") or []) + list(_config(argv).get("model") or {})


def run(argv: Sequence[str] | None = None) -> int:
    """Register, then run VLMEvalKit's runner (``vlmeval.run.main``) in this process.

    ``argv`` is what would follow ``python run.py`` (e.g. ``["--data", "MiSI", "--model",
    "Qwen2.5-VL-7B-Instruct"]``). The MiSI names in ``--data`` must exist and the data location
    must resolve before the run; after it (unless ``--mode infer``), every requested model x MiSI
    dataset pair must have been scored (VLMEvalKit logs a failed pair and goes on). Returns the
    exit status (2: launch refused, 1: a pair not scored).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        expected = preflight.expand_requested(
            _requested_data(argv),
            list(DATASET_NAMES),
            {},
            ours=lambda name: name.lower().startswith("misi"),
        )
        where = preflight.check_data_location() if expected else ""
    except preflight.PreflightError as exc:
        return preflight.fail("vlmevalkit", exc)
    register()
    from vlmeval import run as vrun

    start = len(EVALUATED)
    code = call_main("vlmeval-run", argv, vrun.main)
    if code or not expected or (preflight.option_values(argv, "--mode") or ["all"])[-1] == "infer":
        return code
    done = {(name, osp.basename(path)) for name, path in EVALUATED[start:]}
    pairs = [(m, d) for m in _requested_models(argv) for d in expected]
    absent = [
        f"{m} x {d}" for m, d in pairs if not any(n == d and f.startswith(f"{m}_") for n, f in done)
    ]
    if absent:
        hint = "then rerun those pairs (--reuse keeps finished predictions)"
        return preflight.fail(
            "vlmevalkit",
            preflight.missing_message(hint, absent, [f"{m} x {d}" for m, d in pairs], where),
            code=1,
        )
    return 0
