"""``misi-bench compare A B``: one result against another, paired on the questions both answered
(``scoring.compare``). A result is a ``misi-bench score --json-out`` file, an ``eval`` run's
``report.json`` or its run folder; every refusal is one line and exit code 2."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..core.atomic import write_text_atomic
from ..core.errors import MisiError

#: A result file larger than this is refused (a paper-size score JSON is about 100 MB).
MAX_RESULT_BYTES = 2 * 1024**3


def read_result(path: str) -> dict:
    """The JSON object of a result file, or of ``report.json`` in an ``eval`` run folder; one
    line naming the input when it cannot be read."""
    file = Path(path)
    if file.is_dir():
        file = file / "report.json"
    try:
        if file.stat().st_size > MAX_RESULT_BYTES:
            raise MisiError(f"{path}: larger than {MAX_RESULT_BYTES} bytes; not a result file")
        data = json.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise MisiError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise MisiError(f"{path}: not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise MisiError(f"{path}: not a result (a JSON object with per_item)")
    return data


def cmd_compare(args: argparse.Namespace) -> int:
    """Print the comparison table of ``args.a`` minus ``args.b`` (and write its JSON)."""
    from ..scoring import compare  # noqa: PLC0415

    result = compare.compare_results(
        read_result(args.a), read_result(args.b), args.a, args.b, args.resamples, args.seed
    )
    print(compare.format_comparison_markdown(result))
    text = json.dumps(result.to_json(), indent=1, sort_keys=True)
    if args.json_out:
        write_text_atomic(args.json_out, text + "\n")
    return 0


def add_commands(sub) -> None:
    """Add ``compare`` to the subparsers ``sub``."""
    from ..scoring.bootstrap import RESAMPLES, SEED  # noqa: PLC0415

    p = sub.add_parser(
        "compare",
        help="paired difference of two results, with intervals and p-values",
        description="Compare two results scored on one build (misi-bench score --json-out files "
        "or eval run folders / report.json): per task, paper column and average, the paired "
        "difference A - B on the questions both answered, its 95%% interval (complexes "
        "resampled) and a paired test's p-value (complex-level sign flips).",
    )
    p.add_argument("a", metavar="A", help="a result (score JSON, eval report.json or run folder)")
    p.add_argument("b", metavar="B", help="the result to subtract")
    p.add_argument("--json-out", help="also write the comparison as JSON here")
    p.add_argument("--resamples", type=int, default=RESAMPLES, help=argparse.SUPPRESS)
    p.add_argument("--seed", type=int, default=SEED, help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_compare)
