"""Prediction folders: what ``misi-bench score --predictions DIR`` reads.

* an lmms-eval ``--log_samples`` output folder: every ``*_samples_[tiny_]misi_<config>.jsonl``
  below it (lmms-eval nests them under the model's name); when one config has several files
  (several runs) the newest by name (lmms-eval's names begin with the date) is read and the
  others are named in :attr:`PredictionSource.notes`; likewise lm-eval's
  ``samples_[tiny_]misi_<config>_<date>.jsonl`` (read by each logged row's own id);
* a VLMEvalKit work dir: the prediction tables ``<model>_MiSI[_<config>][_tiny].xlsx`` (or
  ``.tsv`` / ``.csv``) below it, without VLMEvalKit's own ``_score`` / ``_acc`` outputs;
* a ``misi-bench eval`` run folder: its ``predictions.jsonl`` (with the build's config hash
  that the run's ``report.json`` records, also when ``RUN_DIR/predictions.jsonl`` is passed).

Each file is read by :func:`.predictions.read_predictions` (so with its bounds). A folder with
none of these raises :class:`.predictions.PredictionFileError` naming what it holds; so does a
folder whose logs come from two models (named by the harness's results file of each run, else by
the folder the harness nests a model's files in), which would be scored as one.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from pathlib import Path

from ..core.registry import TASK_NAMES
from .predictions import MAX_FILE_BYTES, PredictionFile, PredictionFileError, read_predictions

__all__ = ["PredictionSource", "read_prediction_source"]

_LMMS_RE = re.compile(r"_samples_(?:tiny_)?misi_([a-z_]+?)\.jsonl$")
_LM_EVAL_RE = re.compile(r"^samples_((?:tiny_)?misi_[a-z_]+?)_\d{4}-\d\d-\d\dT[\w.-]*\.jsonl$")
_VLMEVAL_RE = re.compile(r"_MiSI(?:_([a-z_]+?))?(?:_tiny)?\.(?:xlsx|tsv|csv)$")
MAX_FILES = 1000  # prediction files read from one folder


@dataclass(frozen=True)
class PredictionSource:
    """The prediction files of one ``--predictions`` argument (one file, or those of a folder),
    the kind of source (``file``, ``lmms-eval-folder``, ``vlmevalkit-folder``, ``eval-run``)
    and notes for the user (files passed over)."""

    path: str
    kind: str
    files: tuple[PredictionFile, ...]
    notes: tuple[str, ...] = ()


def _newest_per_config(found: list[tuple[str, Path]]) -> tuple[list[Path], list[str]]:
    by_config: dict[str, list[Path]] = {}
    for config, path in found:
        by_config.setdefault(config, []).append(path)
    chosen, notes = [], []
    for config, paths in sorted(by_config.items(), key=lambda kv: kv[0]):
        paths.sort(key=lambda p: (p.name, str(p)))
        chosen.append(paths[-1])
        if len(paths) > 1:
            notes.append(
                f"{config.lstrip('_')}: read {paths[-1].name}, passed over "
                f"{len(paths) - 1} older file(s) ({', '.join(p.name for p in paths[:-1][:3])})"
            )
    return chosen, notes


def _files_below(folder: Path) -> list[Path]:
    out = []
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            out.append(path)
            if len(out) > 100 * MAX_FILES:
                raise PredictionFileError(
                    f"{folder}: over {100 * MAX_FILES} files below it; pass the prediction file"
                )
    return out


def _with_run_build(file: PredictionFile, path: Path) -> PredictionFile:
    """An ``eval`` run's answers with the build its ``report.json`` records (``config_hash``)
    and the dataset revision it was made on (``dataset.version`` or ``dataset.revision``)."""
    report = path.parent / "report.json"
    if path.name != "predictions.jsonl" or not report.is_file():
        return file
    try:
        if report.stat().st_size > MAX_FILE_BYTES:
            return file
        data = json.loads(report.read_text(encoding="utf-8"))
        build = data.get("config_hash")
        dataset = data.get("dataset") if isinstance(data.get("dataset"), dict) else {}
    except (OSError, ValueError, AttributeError):
        return file
    recorded = dataset.get("version") or dataset.get("revision")
    if isinstance(recorded, str) and recorded and len(recorded) <= 100:
        file = replace(file, revision=recorded)
    if not isinstance(build, str) or not build or build in file.builds:
        return file
    return replace(file, builds=(*file.builds, build))


def _results_model(path: Path) -> str | None:
    """The model named by a harness's results JSON (``config.model`` and its main
    ``model_args`` entry), or None when the file is missing, too large, unreadable or silent."""
    try:
        if not path.is_file() or path.stat().st_size > 64 * 2**20:
            return None
        config = json.loads(path.read_text(encoding="utf-8")).get("config") or {}
        args = config.get("model_args") or ""
        if isinstance(args, str):
            args = dict(kv.split("=", 1) for kv in args.split(",") if "=" in kv)
        main = next((str(args[k]) for k in ("pretrained", "model") if args.get(k)), None)
        name = config.get("model")
        if not name:
            return main
        return f"{name} ({main})" if main else str(name)
    except (OSError, ValueError, AttributeError, TypeError):
        return None


def _run_results(path: Path) -> Path:
    """The results file of the run that wrote a harness sample log (lmms-eval:
    ``<date>_results.json`` for ``<date>_samples_...``; lm-eval: ``results_<date>.json`` for
    ``samples_..._<date>.jsonl``)."""
    if "_samples_" in path.name and not path.name.startswith("samples_"):
        return path.with_name(path.name.split("_samples_", 1)[0] + "_results.json")
    return path.with_name("results_" + path.stem.rsplit("_", 1)[-1] + ".json")


def _refuse_two_models(path: str | Path, kind: str, found: list[tuple[str, Path]]) -> None:
    """A folder whose logs come from two models would be scored as one (the newest file per
    config, mixed): refuse it, naming the models and a file of each. A model is what the
    results file of each run names, else the folder the harness nests a model's files in (its
    sanitised model name); a VLMEvalKit table names its model before ``_MiSI``."""
    by_folder: dict[Path, dict[str, Path]] = {}
    for _, f in found:
        if kind == "vlmevalkit-folder":
            m = _VLMEVAL_RE.search(f.name)
            model = f.name[: m.start()] if m else None
        else:
            model = _results_model(_run_results(f))
        by_folder.setdefault(f.parent, {})
        if model:
            by_folder[f.parent].setdefault(model, f)
    by_model: dict[str, Path] = {}
    for folder, models in by_folder.items():
        if not models:
            example = next(f for _, f in found if f.parent == folder)
            models = {f"{folder.name}/ (a folder without results files)": example}
        for model, f in models.items():
            by_model.setdefault(model, f)
    if len(by_model) > 1:
        named = "; ".join(f"{m}: {f.name}" for m, f in sorted(by_model.items())[:4])
        raise PredictionFileError(
            f"{path}: holds the logs of {len(by_model)} models, which would be scored as one "
            f"({named}); pass the folder of one model"
        )


def _refuse_results_only(path: str | Path, files: list[Path]) -> None:
    """A harness output folder with its results summary but no per-question samples: the run
    was made without ``--log_samples``; say so (the scorer needs every answer)."""
    results = [f for f in files if f.suffix == ".json" and "results" in f.name]
    if results:
        raise PredictionFileError(
            f"{path}: holds harness results ({results[0].name}) but no per-question samples; "
            "run lmms-eval or lm-eval again with --log_samples (it writes "
            "*_samples_misi_<config>.jsonl, which misi-bench score reads)"
        )


def _is_tiny(key: str) -> bool:
    return key.endswith("_tiny") or "_samples_tiny_" in key


def read_prediction_source(path: str | Path, split: str | None = None) -> PredictionSource:
    """Read ``path``: one prediction file, or a folder of them (see the module docstring). With
    ``split``, a folder's files of the other split (the harnesses name ``tiny`` runs apart:
    ``_samples_tiny_misi_<config>``, ``_MiSI_<config>_tiny``) are passed over with a note."""
    p = Path(path)
    if not p.is_dir():
        return PredictionSource(str(path), "file", (_with_run_build(read_predictions(p), p),))
    run = p / "predictions.jsonl"
    if run.is_file():
        return PredictionSource(
            str(path), "eval-run", (_with_run_build(read_predictions(run), run),)
        )
    files = _files_below(p)
    lmms = [(m.group(0)[:-6], f) for f in files if (m := _LMMS_RE.search(f.name))]
    lmms += [("_samples_" + m.group(1), f) for f in files if (m := _LM_EVAL_RE.match(f.name))]
    vlm = []
    for f in files:
        m = _VLMEVAL_RE.search(f.name)
        if m and (m.group(1) in (None, "tiny") or m.group(1) in TASK_NAMES):
            vlm.append((m.group(0).rsplit(".", 1)[0], f))
    if lmms and vlm:
        raise PredictionFileError(
            f"{path}: holds both lmms-eval samples ({lmms[0][1].name}) and VLMEvalKit tables "
            f"({vlm[0][1].name}); pass one of them"
        )
    kind, found = ("lmms-eval-folder", lmms) if lmms else ("vlmevalkit-folder", vlm)
    if not found:
        _refuse_results_only(path, files)
        names = ", ".join(f.name for f in files[:5]) or "nothing"
        raise PredictionFileError(
            f"{path}: a folder without prediction files (no lmms-eval *_samples_misi_<config>.jsonl, "
            f"no VLMEvalKit *_MiSI*.xlsx/.tsv, no predictions.jsonl); it holds {len(files)} "
            f"files: {names}"
        )
    notes: list[str] = []
    if split is not None:
        other = [f for key, f in found if _is_tiny(key) != (split == "tiny")]
        found = [(key, f) for key, f in found if _is_tiny(key) == (split == "tiny")]
        if other:
            notes.append(
                f"passed over {len(other)} file(s) of another split than {split} "
                f"({', '.join(f.name for f in other[:3])})"
            )
        if not found:
            raise PredictionFileError(
                f"{path}: no prediction file of split {split} (only of another split: "
                f"{', '.join(f.name for f in other[:3])})"
            )
    _refuse_two_models(path, kind, found)
    chosen, newest_notes = _newest_per_config(found)
    notes += newest_notes
    if len(chosen) > MAX_FILES:
        raise PredictionFileError(f"{path}: over {MAX_FILES} prediction files in one folder")
    return PredictionSource(
        str(path), kind, tuple(read_predictions(f) for f in chosen), tuple(notes)
    )
