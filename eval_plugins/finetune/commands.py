"""``misi-bench export-sft DIR --format FORMAT --out OUT``: the dataset as SFT training data."""

from __future__ import annotations

import argparse


def cmd_export_sft(args: argparse.Namespace) -> int:
    from .export import export_sft  # noqa: PLC0415

    result = export_sft(
        args.source,
        args.out,
        args.format,
        configs=args.configs,
        split=args.split,
        allow_test=args.allow_test_split,
        revision=args.revision,
        overwrite=args.overwrite,
        progress=not args.quiet,
    )
    files = (
        "embedded in the Parquet rows"
        if result.images_written is None
        else f"{result.images_written} image files"
    )
    print(
        f"{result.format}: {result.total_rows} {result.split} rows "
        f"({', '.join(f'{k} {v}' for k, v in result.rows.items())}); "
        f"{result.image_refs} image references, {files}; {result.bytes / 1e6:.1f} MB -> {result.out}"
    )
    return 0


def add_commands(sub) -> None:
    """Add ``export-sft``."""
    from .formats import FORMATS  # noqa: PLC0415

    p = sub.add_parser(
        "export-sft",
        help="export the train split as fine-tuning data (TRL/HF, LLaMA-Factory, ms-swift)",
        description="Export rows to a supervised fine-tuning format: "
        + "; ".join(f"{k}: {v}" for k, v in FORMATS.items())
        + ".",
    )
    p.add_argument(
        "source", metavar="DIR", help="a build folder, or a Hub dataset repo id (owner/name)"
    )
    p.add_argument("--format", required=True, choices=list(FORMATS), help="output format")
    p.add_argument("--out", required=True, help="output folder (must not exist or be empty)")
    p.add_argument(
        "--configs",
        nargs="+",
        default=None,
        metavar="CONFIG",
        help="task configs to export (names or aliases; default: every task)",
    )
    p.add_argument("--split", default="train", help="split to export (default: train)")
    p.add_argument(
        "--allow-test-split",
        action="store_true",
        help="allow exporting test/tiny (contaminates evaluation; prints a warning)",
    )
    p.add_argument(
        "--revision",
        default=None,
        help="Hub revision (tag, branch or commit) when DIR is a repo id",
    )
    p.add_argument("--overwrite", action="store_true", help="replace an earlier export in --out")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_export_sft)
