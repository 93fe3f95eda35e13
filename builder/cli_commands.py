"""Subcommands beyond ``inspect``: render, preview, build, validate, score, push, harness runners."""
from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

from .cli import _add_complex_args, _load, register
from .errors import MisiError

log = logging.getLogger("misi_bench")


# ------------------------------------------------------------------------------- render / preview


def cmd_render(args: argparse.Namespace) -> int:
    from .geometry import parse_operations  # noqa: PLC0415
    from .render import RenderRequest, Style, render_png  # noqa: PLC0415
    from .tasks.base import annotate  # noqa: PLC0415

    cx = _load(args)
    ann = annotate(cx, args.size)
    ops = parse_operations(args.ops) if args.ops else ()
    atoms = tuple(range(cx.n_atoms))
    req = RenderRequest(atoms=atoms, groups=((atoms, ops),) if ops else (), view=args.view, camera=ann.camera,
                        style=Style(size=args.size))
    Path(args.out).write_bytes(render_png(cx, req))
    print(f"wrote {args.out} ({cx.pdb_id}, view {args.view}{', ' + args.ops if args.ops else ''})")
    return 0


def cmd_preview(args: argparse.Namespace) -> int:
    from .render import contact_sheet  # noqa: PLC0415

    cx = _load(args)
    Path(args.out).write_bytes(contact_sheet(cx, size=args.size))
    print(f"wrote {args.out} (six views of {cx.pdb_id})")
    return 0


@register
def _render_parsers(sub) -> None:
    from .geometry import VIEW_NAMES  # noqa: PLC0415

    p = sub.add_parser("render", help="render one view of a complex to PNG")
    _add_complex_args(p)
    p.add_argument("--view", default="front", choices=VIEW_NAMES)
    p.add_argument("--ops", default="", help="operations applied to the whole model, e.g. 'roll y 30, move x 2'")
    p.add_argument("--size", type=int, default=512, help="image size in pixels (square)")
    p.add_argument("--out", required=True, help="output PNG file")
    p.set_defaults(func=cmd_render)
    p = sub.add_parser("preview", help="contact sheet of the six views of a complex")
    _add_complex_args(p)
    p.add_argument("--size", type=int, default=384, help="size of each view in pixels")
    p.add_argument("--out", required=True, help="output PNG file")
    p.set_defaults(func=cmd_preview)


# ------------------------------------------------------------------------------- build / validate


def cmd_build(args: argparse.Namespace) -> int:
    from .build import build_dataset  # noqa: PLC0415

    manifest = build_dataset(
        source=args.source, out=args.out, tasks=args.tasks or (), seed=args.seed, limit=args.limit,
        split_file=args.split_file, workers=args.workers, image_size=args.image_size,
        pocket_cutoff=args.pocket_cutoff, num_shards=args.num_shards, shard_index=args.shard_index,
        merge=not args.no_merge, merge_only=args.merge_only, validate=not args.no_validate,
        tiny_per_task=args.tiny_per_task, progress=not args.quiet)
    if not manifest:
        print(f"shard {args.shard_index} of {args.num_shards} generated in {args.out}; run --merge-only when all are done")
        return 0
    totals = manifest["totals"]
    print(f"built {args.out}: {totals['questions']['train']} train + {totals['questions']['test']} test questions "
          f"({totals['questions']['tiny']} tiny), {totals['images']['train'] + totals['images']['test']} images, "
          f"{len(manifest['skipped_complexes'])} complexes skipped")
    for task, c in manifest["counts"].items():
        print(f"  {task:22s} train {c['train']:6d}  test {c['test']:6d}  tiny {c['tiny']:4d}")
    if "validation" in manifest:
        print(f"validation: {'ok' if manifest['validation']['ok'] else 'FAILED'} ({manifest['validation']['checked']} rows)")
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    from .validate import validate_dataset  # noqa: PLC0415

    report = validate_dataset(args.folder, source=args.source)
    for problem in report.problems[:100]:
        print(f"problem: {problem}")
    for warning in report.warnings[:100]:
        print(f"warning: {warning}")
    print(f"{'ok' if report.ok else 'FAILED'}: {report.checked} rows checked, {len(report.problems)} problems")
    return 0 if report.ok else 1


@register
def _build_parsers(sub) -> None:
    from .tasks import TASKS  # noqa: PLC0415

    p = sub.add_parser("build", help="build the dataset folder (Parquet configs, card, manifest)")
    p.add_argument("--source", default="samples", help="'samples' (embedded set) or a PDBbind-style root folder")
    p.add_argument("--split-file", help="CSV pdb_id,split fixing train/test membership")
    p.add_argument("--out", default="misi-bench", help="output folder (default ./misi-bench)")
    p.add_argument("--tasks", nargs="*", choices=TASKS, help="task configs to build (default: all nine)")
    p.add_argument("--workers", type=int, default=1, help="worker processes")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--limit", type=int, help="use only the first N complexes (by PDB id)")
    p.add_argument("--image-size", type=int, default=512)
    p.add_argument("--pocket-cutoff", type=float, default=10.0)
    p.add_argument("--tiny-per-task", type=int, default=50)
    p.add_argument("--num-shards", type=int, default=1, help="split the complexes into K shards (cluster use)")
    p.add_argument("--shard-index", type=int, default=0, help="which shard this process generates (0..K-1)")
    p.add_argument("--no-merge", action="store_true", help="generate this shard only; merge later")
    p.add_argument("--merge-only", action="store_true", help="merge finished shards into the final folder")
    p.add_argument("--no-validate", action="store_true", help="skip the validator after the merge")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_build)
    p = sub.add_parser("validate", help="re-derive every answer of a built folder (exit 0 only if all hold)")
    p.add_argument("folder")
    p.add_argument("--source", help="structures to re-read: 'samples' or a PDBbind root (default: from the manifest)")
    p.set_defaults(func=cmd_validate)


# ------------------------------------------------------------------------------- score


def load_rows(dataset: str, configs: list[str], split: str) -> list[dict]:
    """Rows (id, task, answer, metadata, options) of a local build folder or a Hub repo."""
    from .tasks import TASKS  # noqa: PLC0415

    path = Path(dataset)
    rows: list[dict] = []
    for config in configs or list(TASKS):
        if path.is_dir() and (path / "manifest.json").exists():
            from .write import iter_config_rows  # noqa: PLC0415

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
    from . import scoring  # noqa: PLC0415

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


@register
def _score_parser(sub) -> None:
    p = sub.add_parser("score", help="score a predictions JSONL file against a dataset")
    p.add_argument("--dataset", required=True, help="a build folder or a Hub dataset repo id")
    p.add_argument("--predictions", required=True, help='JSONL with one {"id": ..., "prediction": ...} per line')
    p.add_argument("--config", help="one task config (default: all nine)")
    p.add_argument("--split", default="test")
    p.add_argument("--json-out", help="write the JSON report here instead of printing it")
    p.set_defaults(func=cmd_score)


# ------------------------------------------------------------------------------- publish


def cmd_push(args: argparse.Namespace) -> int:
    from .hub import cli_push  # noqa: PLC0415

    return int(cli_push(args) or 0)


@register
def _push_parser(sub) -> None:
    p = sub.add_parser("push", help="publish a build folder to the Hugging Face Hub")
    p.add_argument("folder")
    p.add_argument("--repo", help="ORG/NAME (default: $MISI_BENCH_REPO or the canonical repo)")
    p.add_argument("--tag", help="version tag vX.Y.Z (an existing tag is never moved)")
    p.add_argument("--revision", help="branch to push to")
    p.add_argument("--private", action="store_true")
    p.add_argument("--dry-run", action="store_true", help="list what would be uploaded")
    p.set_defaults(func=cmd_push)


# ------------------------------------------------------------------------------- harnesses


def cmd_lmms_eval(args: argparse.Namespace) -> int:
    from misi_bench.eval_plugins.lmms_eval import cli  # noqa: PLC0415

    if "--print-include-path" in args.passthrough:
        print(cli.include_path())
        return 0
    return int(cli.run(args.passthrough) or 0)


def cmd_vlmevalkit(args: argparse.Namespace) -> int:
    from misi_bench.eval_plugins import vlmevalkit  # noqa: PLC0415

    return int(vlmevalkit.run(args.passthrough) or 0)


def cmd_lm_eval(args: argparse.Namespace) -> int:
    from misi_bench.eval_plugins import lm_eval  # noqa: PLC0415

    if "--print-include-path" in args.passthrough:
        print(lm_eval.include_path())
        return 0
    from lm_eval.__main__ import cli_evaluate  # noqa: PLC0415

    from misi_bench.eval_plugins.common import call_main  # noqa: PLC0415

    argv = list(args.passthrough)
    if "--include_path" not in argv:
        argv += ["--include_path", lm_eval.include_path()]
    return call_main("lm_eval", argv, cli_evaluate)


@register
def _harness_parsers(sub) -> None:
    for name, func, text in (
        ("lmms-eval", cmd_lmms_eval, "run lmms-eval with the MiSI task folder included (arguments pass through; "
                                      "--print-include-path prints the folder)"),
        ("vlmevalkit", cmd_vlmevalkit, "register the MiSI datasets in VLMEvalKit and run its runner (arguments pass through)"),
        ("lm-eval", cmd_lm_eval, "run lm-eval with the MiSI task folder included (arguments pass through)"),
    ):
        p = sub.add_parser(name, help=text, add_help=False)
        p.set_defaults(func=func)


