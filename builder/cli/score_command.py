"""``misi-bench score``: score predictions (a file or a folder) against a build folder or a Hub
repo. Inputs are checked in :mod:`.score_inputs`; every refusal is one line and exit code 2."""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

from ..core.atomic import write_text_atomic
from ..core.errors import MisiError
from ..core.profiles import id_for_profile, mismatch_message, profile_of_id, profile_of_rows
from ..core.shards import check_split
from .score_inputs import (
    add_revision_argument,
    build_hash,
    check_configs,
    check_dataset,
    load_rows,
)

log = logging.getLogger(__name__)


def _blind_inputs(
    dataset: str, configs: list[str], split: str, rows: list[dict], revision: str | None = None
):
    """(text-only model, T5/T6 image-rule letters) for the blind baselines of a build without
    stored per-question values: the text-only answer is fitted on the dataset's train split,
    T5/T6's options-only answers come from the build's ``baselines.json``."""
    from .. import scoring  # noqa: PLC0415

    try:
        train = rows if split == "train" else load_rows(dataset, configs, "train", revision)
    except Exception as exc:  # noqa: BLE001  no train split or not reachable: no text only
        log.warning("%s: no train split for the text-only baseline (%s)", dataset, exc)
        train = []
    from ..dataset.hub_probe import stored_baselines  # noqa: PLC0415

    stored = stored_baselines(dataset, revision)
    text_model = scoring.fit_text_only(train) if train else None
    return text_model, (stored.get("image_answers") or {}).get(split)


def _question_table(dataset: str, configs, split: str, rows: list[dict], revision=None):
    """Every blind rule's values on these questions: the build's stored ones
    (``question_baselines.npz``), else computed once (an older build)."""
    from ..dataset.hub_probe import stored_question_baselines  # noqa: PLC0415
    from ..scoring import question_baselines as qb  # noqa: PLC0415

    stored = stored_question_baselines(dataset, split, revision)
    return qb.baselines_of_rows(
        rows, stored, lambda: _blind_inputs(dataset, configs, split, rows, revision), qb.SEED
    )


def _print_floors(built: dict, result: dict, paper_rows, profile: str) -> dict:
    """The floors with this result's margin above them and each published row's (when the build
    is comparable), printed; their JSON (``blind_floor`` of ``--json-out``)."""
    from ..core.profiles import PROFILES  # noqa: PLC0415
    from ..scoring import floors  # noqa: PLC0415

    comparable = PROFILES[profile].paper_comparable if profile in PROFILES else False
    out = {}
    for metric, floor in built.items():
        got = floors.margins(result["per_item"], floor)
        published = [
            (r.name, r.by_column if metric == "score" else r.exact_by_column)
            for r in paper_rows
            if comparable and (metric == "score" or r.exact_scores)
        ]
        print(floors.format_floor_markdown(floor, [("this result", got)], published))
        out[metric] = floors.floor_summary(floor, got)
    return out


def _gather(args: argparse.Namespace, configs: list[str], revision: str | None = None):
    """Rows of the selection and the predictions joined over the source's files (lmms-eval
    samples resolved against their own config's rows). Returns (rows, file-like summary)."""
    from .. import scoring  # noqa: PLC0415

    source = scoring.read_prediction_source(args.predictions, args.split)
    for note in source.notes:
        log.warning("%s", note)
    named = [f.config for f in source.files if f.positions]
    if any(c is None for c in named) and not configs:
        raise MisiError(
            f"{args.predictions}: lmms-eval samples need --configs (the file name does not name one)"
        )
    if not configs and named and all(f.positions for f in source.files):
        configs = sorted(set(named), key=named.index)
    rows = load_rows(args.dataset, configs, args.split, revision)
    if not rows:
        raise MisiError(
            f"{args.dataset}: no rows for configs {', '.join(configs) or 'all'} split {args.split}"
        )
    by_config: dict[str, list[dict]] = {}
    for r in rows:
        by_config.setdefault(str(r["task"]), []).append(r)
    preds: dict[str, str] = {}
    no_pred: list[str] = []
    dups: list[str] = []
    bad: list[str] = []
    builds: dict[str, str | None] = {}  # build -> the revision it was recorded on, if known
    for file in source.files:
        if file.config and configs and file.config not in configs and len(source.files) > 1:
            log.warning("%s: passed over (config %s is not selected)", file.path, file.config)
            continue
        if file.positions:
            own = file.config or (configs[0] if len(configs) == 1 else None)
            if own is None:
                raise MisiError(f"{file.path}: lmms-eval samples need one config (--configs NAME)")
            file = scoring.resolve_positions(file, by_config.get(own, []))
        preds.update(file.predictions)
        no_pred.extend(file.no_prediction)
        dups.extend(file.duplicate_ids)
        bad.extend(
            f"{Path(file.path).name}: {b}" if len(source.files) > 1 else b for b in file.bad_entries
        )
        for recorded in file.builds:
            builds[recorded] = builds.get(recorded) or file.revision
    _notice_unchecked(args, [f.path for f in source.files if not f.builds])
    shape = source.files[0].shape if source.kind == "file" else source.kind
    return rows, configs, preds, no_pred, dups, bad, builds, shape


def _notice_unchecked(args: argparse.Namespace, paths: list[str]) -> None:
    """One notice line when prediction files record no build (``config_hash``): their answers
    cannot be checked against the dataset's build, so predictions made on another build (same
    ids, other answers) would score without a word."""
    if not paths:
        return
    build = build_hash(args.dataset)
    which = paths[0] if len(paths) == 1 else f"{len(paths)} prediction files (e.g. {paths[0]})"
    log.warning(
        "notice: %s record no build (no config_hash field): cannot check they were made for "
        "%s%s; predictions of another build would score silently (misi-bench eval, the "
        "harness adapters and the human app record it)",
        which,
        args.dataset,
        f" (build {build})" if build else "",
    )


def _check_ids(args, rows, configs, preds, no_pred, shape, build: str | None = None) -> None:
    ids = {str(r["id"]) for r in rows}
    given = set(preds) | set(no_pred)
    if given & ids:
        return
    profile = profile_of_rows(rows, args.dataset)
    if {id_for_profile(i, profile) for i in given} & ids:
        made_for = sorted({profile_of_id(i) for i in given} - {profile}) or ["other"]
        raise MisiError(mismatch_message(made_for[0], profile, args.predictions, args.dataset))
    first = ", ".join(repr(i[:80]) + ("..." if len(i) > 80 else "") for i in sorted(given)[:3])
    what = "keys" if shape == "json-object" else "ids"
    hint = (
        " (read as one {id: prediction} object; for JSON Lines each entry needs 'id' and "
        "'prediction')"
        if shape == "json-object"
        else ""
    )
    build = build or build_hash(args.dataset)
    where = f"{args.dataset} (build {build})" if build else args.dataset
    raise MisiError(
        f"{args.predictions}: none of its {len(given)} {what} is a question of {where} "
        f"(configs {', '.join(configs) or 'all'}, split {args.split}, e.g. "
        f"{sorted(ids)[0]!r}); its first {what}: {first}{hint}"
    )


def _warn_other_build(args: argparse.Namespace, builds: dict[str, str | None], build) -> None:
    """One warning when the prediction files record a build other than the dataset's; for a
    Hub dataset it says to add ``--revision`` (naming the revision the files recorded)."""
    other = [b for b in builds if build and b != build]
    if not other:
        return
    local = Path(args.dataset).expanduser().is_dir()
    if local:
        fix = "same ids, possibly other answers: check --dataset"
    else:
        tag = builds[other[0]] or "TAG"
        fix = f"they were made on another revision of {args.dataset}: add --revision {tag}" + (
            "" if builds[other[0]] else " (the release they were made on)"
        )
    log.warning(
        "%s: recorded for build %s, but %s%s is build %s (%s)",
        args.predictions,
        other[0],
        args.dataset,
        f"@{args.revision}" if args.revision else "",
        build,
        fix,
    )


def _baselines_and_floors(args, configs, rows, read_at, result, paper_rows) -> tuple:
    """The chance and blind baselines and the blind floors of these questions, printed beside
    the paper's rows; their JSON (``baselines``, ``blind_floor``) and the floors themselves (per
    metric, for the bins of ``--by-factor``); all empty with ``--no-baselines``."""
    if args.no_baselines:
        _print_baselines(args, rows, result, profile_of_rows(rows, args.dataset), paper_rows, {})
        return {}, {}, {}
    profile = profile_of_rows(rows, args.dataset)
    from .. import scoring  # noqa: PLC0415
    from ..scoring import floors  # noqa: PLC0415

    table = _question_table(args.dataset, configs, args.split, rows, read_at)
    baselines, built = scoring.reference_cells(table, rows), floors.floors_of(table)
    _print_baselines(args, rows, result, profile, paper_rows, baselines, built)
    floor = _print_floors(built, result, paper_rows, profile) if built else {}
    return baselines, floor, built


def cmd_score(args: argparse.Namespace) -> int:
    """Read the predictions (a file or folder :func:`scoring.read_prediction_source` accepts),
    score them, print the markdown report (in %) and write the JSON summary (and the
    per-question file). Unusable inputs raise MisiError (exit 2)."""
    from .. import scoring  # noqa: PLC0415

    configs = check_configs(args.configs)
    check_split(args.split)
    source = check_dataset(args.dataset, args.revision)
    read_at = source.commit or source.revision  # every config read from the one commit
    rows, configs, preds, no_pred, dups, bad, builds, shape = _gather(args, configs, read_at)
    build = source.config_hash  # a local build's or the Hub revision's manifest
    _check_ids(args, rows, configs, preds, no_pred, shape, build)
    paper_rows = scoring.select_paper_rows(args.paper_rows)  # an unknown name fails early
    profile = profile_of_rows(rows, args.dataset)
    _warn_other_build(args, builds, build)
    result = scoring.score_records(rows, preds)
    n_missing = len(result["missing"])
    if n_missing and args.strict:
        raise MisiError(
            f"{args.predictions}: {n_missing} of {len(rows)} questions have no prediction "
            f"(--strict; e.g. {result['missing'][0]!r})"
        )
    print(f"profile: {profile}")
    print(f"dataset: {source.label()}")
    print(scoring.format_report_markdown(result["report"], percent=True))
    readings = scoring.format_readings_markdown(result["report"])
    if readings:
        print(readings)
    print(
        f"\n{len(rows)} questions, {n_missing} without a prediction (scored 0; "
        f"{len(no_pred)} of them null or empty in the file), {len(result['unknown'])} predictions "
        f"with unknown ids, {len(dups)} duplicate ids (last entry used), "
        f"{len(bad)} unreadable entries ({shape})"
    )
    baselines, floor, built = _baselines_and_floors(
        args, configs, rows, read_at, result, paper_rows
    )
    if args.per_item:
        write_text_atomic(args.per_item, scoring.per_item_jsonl(result["per_item"], build, source))
    by_factor = _by_factor(args, rows, result, built.get("score")) if args.by_factor else None
    summary = {
        "profile": profile,
        "config_hash": build,
        "dataset": source.to_json(),
        "prediction_builds": list(builds),
        "report": result["report"],
        "missing": result["missing"],
        **_listed("unknown", result["unknown"]),
        "baselines": baselines,
        "blind_floor": floor,
        **_listed("unreadable_lines", bad),
        **_listed("duplicate_ids", dups),
        **_listed("no_prediction", no_pred),
        "prediction_file_shape": shape,
        "per_item": scoring.per_item_records(result["per_item"]),
        "paper_rows": [r.name for r in paper_rows],
        **({"by_factor": by_factor} if by_factor is not None else {}),
    }
    text = json.dumps(summary, indent=2, sort_keys=True)
    if args.json_out:
        write_text_atomic(args.json_out, text + "\n")
    else:
        print(text)
    if n_missing:
        log.warning(
            "%d of %d questions have no prediction and score 0 (--strict makes this an error)",
            n_missing,
            len(rows),
        )
    return 0


def _by_factor(args: argparse.Namespace, rows: list[dict], result: dict, floor=None) -> dict:
    """``--by-factor``: the breakdown by factor (``scoring.factor_table``), with each bin's blind
    floor (``floor``: the build's score floor, from its per-question baselines), printed; its
    JSON."""
    from ..scoring import factor_table  # noqa: PLC0415

    facts = factor_table.manifest_facts(_local_manifest(args.dataset))
    if not facts:
        log.warning(
            "%s: no per-complex facts (a Hub dataset or a build made before they were recorded):"
            " the ligand, pocket and chain factors give no bin",
            args.dataset,
        )
    text, block = factor_table.score_breakdown(rows, result["per_item"], facts, floor)
    print(text)
    return block


def _local_manifest(dataset: str) -> dict | None:
    """The manifest of a local build folder (None for a Hub dataset or without one)."""
    path = Path(dataset).expanduser() / "manifest.json"
    try:
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
    except (OSError, ValueError):
        return None


#: Ids (or problems) of each kind the JSON summary lists; the rest are counted.
SHOWN_IDS = 20


def _listed(name: str, values: list) -> dict:
    """``{name: the first SHOWN_IDS values, name_count: how many}``: a file of a million
    unknown ids prints twenty of them and a count, not the million (the ``missing`` questions
    are all listed: they are the dataset's, at most its size)."""
    return {name: list(values[:SHOWN_IDS]), f"{name}_count": len(values)}


def _print_baselines(args, rows, result, profile, paper_rows, baselines, floors=None) -> None:
    """The paper's rows beside the scores, then the chance and blind baselines on the same
    questions (when computed)."""
    from .. import scoring  # noqa: PLC0415
    from ..core.registry import TASK_NAMES as TASKS  # noqa: PLC0415

    paper_text = scoring.format_paper_rows_markdown(
        result["report"], profile, paper_rows, baselines, floors=floors
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


def add_commands(sub) -> None:
    """Add ``score`` to the subparsers ``sub``."""
    p = sub.add_parser(
        "score",
        help="score a predictions file against a dataset",
        description="Score model outputs with the one MiSI-Bench scorer. Accepted predictions: "
        'JSONL of {"id", "prediction"} objects, a JSON list of them, a JSON '
        "{id: prediction} object, lmms-eval --log_samples files or their folder, VLMEvalKit "
        ".xlsx/.tsv tables or its work dir, a misi-bench eval run folder.",
    )
    p.add_argument("--dataset", required=True, help="a build folder or a Hub dataset repo id")
    add_revision_argument(p)
    p.add_argument(
        "--predictions",
        required=True,
        help='a predictions file (JSONL with one {"id": ..., "prediction": ...} per line, or see '
        "above) or a folder of them",
    )
    p.add_argument(
        "--configs",
        dest="configs",
        nargs="+",
        metavar="CONFIG",
        help="task configs, names or aliases (default: every task)",
    )
    p.add_argument("--split", default="test")
    p.add_argument("--json-out", help="write the JSON report here instead of printing it")
    p.add_argument(
        "--per-item",
        metavar="FILE",
        help="write one JSON line per question: id, task, gold, prediction, read_as, score, parts",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="questions without a prediction are an error (exit 2), not a warning",
    )
    p.add_argument(
        "--no-baselines",
        action="store_true",
        help="leave out the chance and blind baselines on the same questions",
    )
    p.add_argument("--paper-rows", default="default", help=_paper_rows_help())
    p.add_argument(
        "--by-factor",
        action="store_true",
        help="also break the score down by each task's factors (per bin: n, score, 95%% "
        "interval) and reproduce the paper's Fig. 4 panels (docs/scoring.md)",
    )
    p.set_defaults(func=cmd_score)


def _paper_rows_help() -> str:
    from ..scoring.paper_reference import PAPER_ROWS_HELP  # noqa: PLC0415

    return PAPER_ROWS_HELP
