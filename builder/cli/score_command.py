"""``misi-bench score``: score a predictions file against a build folder or a Hub repo."""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

from ..core.errors import MisiError
from ..core.profiles import id_for_profile, mismatch_message, profile_of_id, profile_of_rows

log = logging.getLogger(__name__)


def load_rows(dataset: str, configs: list[str], split: str) -> list[dict]:
    """Rows (id, task, answer, metadata, options) of a local build folder or a Hub repo."""
    from ..core.registry import TASK_NAMES as TASKS  # noqa: PLC0415

    path = Path(dataset)
    rows: list[dict] = []
    for config in configs or list(TASKS):
        if path.is_dir() and (path / "manifest.json").exists():
            from ..dataset.parquet import iter_config_rows  # noqa: PLC0415

            rows.extend(
                {k: r[k] for k in ("id", "task", "answer", "metadata", "options")}
                for r in iter_config_rows(
                    path, config, split, ["id", "task", "answer", "metadata", "options"]
                )
            )
        else:
            import datasets  # noqa: PLC0415

            ds = datasets.load_dataset(dataset, config, split=split)
            ds = ds.remove_columns([c for c in ds.column_names if c == "images"])
            rows.extend(
                {k: r[k] for k in ("id", "task", "answer", "metadata", "options")} for r in ds
            )
    return rows


def _baselines(dataset: str, config: str | None, split: str, rows: list[dict]) -> dict:
    """Chance and blind baselines on ``rows`` (``scoring.reference_scores``): the text-only answer
    is fitted on the dataset's train split, T5/T6's options-only answers come from a local build's
    ``baselines.json``."""
    from .. import scoring  # noqa: PLC0415

    try:
        configs = [config] if config else []
        train = rows if split == "train" else load_rows(dataset, configs, "train")
    except Exception as exc:  # noqa: BLE001  no train split or not reachable: no text only
        log.warning("%s: no train split for the text-only baseline (%s)", dataset, exc)
        train = []
    stored = {}
    path = Path(dataset) / "baselines.json"
    if path.is_file():
        stored = json.loads(path.read_text(encoding="utf-8"))
    image_answers = (stored.get("image_answers") or {}).get(split)
    return scoring.reference_scores(rows, train, image_answers)


def cmd_score(args: argparse.Namespace) -> int:
    """Read the predictions (any shape :func:`scoring.read_predictions` accepts), score them,
    print the markdown report and write the JSON summary. Unusable files raise MisiError (exit 2)."""
    from .. import scoring  # noqa: PLC0415

    file = scoring.read_predictions(args.predictions)
    config = args.config or file.config
    if file.positions and not config:
        raise MisiError(
            f"{args.predictions}: lmms-eval samples need --config (the file name does not name one)"
        )
    rows = load_rows(args.dataset, [config] if config else [], args.split)
    if not rows:
        raise MisiError(f"{args.dataset}: no rows for config {config or 'all'} split {args.split}")
    profile = profile_of_rows(rows, args.dataset)
    file = scoring.resolve_positions(file, rows)
    ids = {str(r["id"]) for r in rows}
    given = set(file.predictions) | set(file.no_prediction)
    if not given & ids and {id_for_profile(i, profile) for i in given} & ids:
        made_for = sorted({profile_of_id(i) for i in given} - {profile}) or ["other"]
        raise MisiError(mismatch_message(made_for[0], profile, args.predictions, args.dataset))
    if not given & ids:
        raise MisiError(
            f"{args.predictions}: none of its {len(given)} ids is a question of {args.dataset} "
            f"(config {config or 'all'}, split {args.split}); first id: {min(given)!r}"
        )
    paper_rows = scoring.select_paper_rows(args.paper_rows)  # an unknown name fails early
    result = scoring.score_records(rows, file.predictions)
    print(f"profile: {profile}")
    print(scoring.format_report_markdown(result["report"]))
    readings = scoring.format_readings_markdown(result["report"])
    if readings:
        print(readings)
    print(
        f"\n{len(rows)} questions, {len(result['missing'])} without a prediction (scored 0; "
        f"{len(file.no_prediction)} of them null or empty in the file), {len(result['unknown'])} predictions "
        f"with unknown ids, {len(file.duplicate_ids)} duplicate ids (last entry used), "
        f"{len(file.bad_entries)} unreadable entries ({file.shape} file)"
    )
    from ..core.registry import TASK_NAMES as TASKS  # noqa: PLC0415

    baselines = {} if args.no_baselines else _baselines(args.dataset, config, args.split, rows)
    paper_text = scoring.format_paper_rows_markdown(
        result["report"], profile, paper_rows, baselines
    )
    if paper_text:
        print(paper_text)
    if baselines:
        print(
            f"\nBaselines on the same {len(rows)} questions (score %, 95% interval; none looks "
            "at the pictures; a score shows use of the pictures only where it beats them, "
            "docs/decoys.md):\n"
        )
        present = {r["task"] for r in rows}
        print(
            scoring.format_blind_markdown(
                {args.split: baselines}, [t for t in TASKS if t in present], scoring.BASELINE_NAMES
            )
        )
    summary = {
        "profile": profile,
        "report": result["report"],
        "missing": result["missing"],
        "unknown": result["unknown"],
        "baselines": baselines,
        "unreadable_lines": list(file.bad_entries),
        "duplicate_ids": list(file.duplicate_ids),
        "no_prediction": list(file.no_prediction),
        "prediction_file_shape": file.shape,
        "paper_rows": [r.name for r in paper_rows],
    }
    text = json.dumps(summary, indent=2, sort_keys=True)
    if args.json_out:
        Path(args.json_out).write_text(text + "\n", encoding="utf-8")
    else:
        print(text)
    return 0


def add_commands(sub) -> None:
    """Add ``score`` to the subparsers ``sub``."""
    p = sub.add_parser(
        "score",
        help="score a predictions file against a dataset",
        description="Score model outputs with the one MiSI-Bench scorer. Accepted predictions: "
        'JSONL of {"id", "prediction"} objects, a JSON list of them, a JSON '
        "{id: prediction} object, lmms-eval --log_samples files, VLMEvalKit .xlsx/.tsv.",
    )
    p.add_argument("--dataset", required=True, help="a build folder or a Hub dataset repo id")
    p.add_argument(
        "--predictions",
        required=True,
        help='a predictions file (JSONL with one {"id": ..., "prediction": ...} per line, or see above)',
    )
    p.add_argument("--config", help="one task config (default: all nine)")
    p.add_argument("--split", default="test")
    p.add_argument("--json-out", help="write the JSON report here instead of printing it")
    p.add_argument(
        "--no-baselines",
        action="store_true",
        help="leave out the chance and blind baselines on the same questions",
    )
    p.add_argument("--paper-rows", default="default", help=_paper_rows_help())
    p.set_defaults(func=cmd_score)


def _paper_rows_help() -> str:
    from ..scoring.paper_reference import PAPER_ROWS_HELP  # noqa: PLC0415

    return PAPER_ROWS_HELP
