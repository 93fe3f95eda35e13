"""``misi-bench score``: score a predictions file against a build folder or a Hub repo."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..core.errors import MisiError


def load_rows(dataset: str, configs: list[str], split: str) -> list[dict]:
    """Rows (id, task, answer, metadata, options) of a local build folder or a Hub repo."""
    from ..core.registry import TASK_NAMES as TASKS  # noqa: PLC0415

    path = Path(dataset)
    rows: list[dict] = []
    for config in configs or list(TASKS):
        if path.is_dir() and (path / "manifest.json").exists():
            from ..dataset.parquet import iter_config_rows  # noqa: PLC0415

            rows.extend({k: r[k] for k in ("id", "task", "answer", "metadata", "options")}
                        for r in iter_config_rows(path, config, split, ["id", "task", "answer", "metadata", "options"]))
        else:
            import datasets  # noqa: PLC0415

            ds = datasets.load_dataset(dataset, config, split=split)
            ds = ds.remove_columns([c for c in ds.column_names if c == "images"])
            rows.extend({k: r[k] for k in ("id", "task", "answer", "metadata", "options")} for r in ds)
    return rows


def read_predictions(path: str) -> tuple[dict[str, str], list[str]]:
    """{id: prediction} from a JSONL file; bad lines are reported, not fatal."""
    preds: dict[str, str] = {}
    bad: list[str] = []
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise MisiError(f"{path}: cannot read predictions ({exc.strerror or exc})") from None
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            preds[str(item["id"])] = "" if item.get("prediction") is None else str(item["prediction"])
        except (ValueError, KeyError, TypeError) as exc:
            bad.append(f"line {n}: {type(exc).__name__}")
    return preds, bad


def cmd_score(args: argparse.Namespace) -> int:
    from .. import scoring  # noqa: PLC0415

    preds, bad = read_predictions(args.predictions)
    rows = load_rows(args.dataset, [args.config] if args.config else [], args.split)
    if not rows:
        raise MisiError(f"{args.dataset}: no rows for config {args.config or 'all'} split {args.split}")
    result = scoring.score_records(rows, preds)
    print(scoring.format_report_markdown(result["report"]))
    print(f"\n{len(rows)} questions, {len(result['missing'])} without a prediction (scored 0), "
          f"{len(result['unknown'])} predictions with unknown ids, {len(bad)} unreadable lines")
    summary = {"report": result["report"], "missing": result["missing"], "unknown": result["unknown"],
               "unreadable_lines": bad}
    text = json.dumps(summary, indent=2, sort_keys=True)
    if args.json_out:
        Path(args.json_out).write_text(text + "\n", encoding="utf-8")
    else:
        print(text)
    return 0


def add_commands(sub) -> None:
    """Add ``score`` to the subparsers ``sub``."""
    p = sub.add_parser("score", help="score a predictions JSONL file against a dataset")
    p.add_argument("--dataset", required=True, help="a build folder or a Hub dataset repo id")
    p.add_argument("--predictions", required=True, help='JSONL with one {"id": ..., "prediction": ...} per line')
    p.add_argument("--config", help="one task config (default: all nine)")
    p.add_argument("--split", default="test")
    p.add_argument("--json-out", help="write the JSON report here instead of printing it")
    p.set_defaults(func=cmd_score)
