"""``misi-bench human DIR [--split tiny] [--port 7860] [--host H] [--participant NAME] [--out FOLDER]
[--new-tokens]``: prints the participants' link and the administrator's link (each with its token)."""

from __future__ import annotations

import argparse
import logging
import sys

from ...builder.core.errors import MisiError
from ...builder.core.shards import check_split
from ..common import local_copy

log = logging.getLogger(__name__)


def cmd_human(args: argparse.Namespace) -> int:
    from .access import Tokens, exposure_warning  # noqa: PLC0415
    from .server import HumanApp, make_server  # noqa: PLC0415
    from .session import check_participant, load_questions  # noqa: PLC0415

    if args.participant:
        try:
            check_participant(args.participant)
        except ValueError as exc:
            raise MisiError(str(exc)) from None
    check_split(args.split)
    folder, provenance = local_copy(args.dataset, args.revision, (args.split,))
    questions = load_questions(folder, args.split)
    tokens = Tokens.load_or_new(args.out, renew=args.new_tokens)
    app = HumanApp(
        folder, questions, args.split, args.out, args.participant, tokens, provenance=provenance
    )
    try:
        server = make_server(app, args.host, args.port)
    except OSError as exc:
        raise MisiError(
            f"cannot listen on {args.host}:{args.port} ({exc.strerror or exc}); try another --port"
        ) from None
    host, port = server.server_address[:2]
    warning = exposure_warning(args.host, port)
    if warning:
        log.warning("%s", warning)
        print(warning, file=sys.stderr, flush=True)
    shown = f"[{host}]" if ":" in str(host) else host
    print(
        f"{len(questions)} questions of split {args.split!r} of {provenance.label()}; answers go "
        f"to {args.out}/<participant>.jsonl"
    )
    print(
        f"administrator link (gold answers and every participant's results; keep it to yourself): "
        f"http://{shown}:{port}/?token={tokens.admin}"
    )
    print(
        f"serving on http://{shown}:{port}/?token={tokens.participant} (the participants' link; "
        "Ctrl+C stops; answers are saved as they are given)",
        flush=True,
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def add_commands(sub) -> None:
    """Add ``human`` to the subparsers ``sub``."""
    p = sub.add_parser(
        "human", help="a local web app in which a person answers the questions (human baseline)"
    )
    p.add_argument(
        "dataset",
        metavar="DIR",
        help="a build folder (from misi-bench build) or a Hub dataset repo id (owner/name)",
    )
    p.add_argument(
        "--revision",
        help="Hub revision of a repo id: a release tag (v1.0.0), a branch or a commit (default: "
        "$MISI_BENCH_REVISION, else the default branch); every answer line records it",
    )
    p.add_argument(
        "--split", default="tiny", help="split to answer (default tiny, the paper's human subset)"
    )
    p.add_argument("--port", type=int, default=7860, help="port (default 7860; 0 picks a free one)")
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1, this machine only; any other address "
        "exposes the app to the network: see docs/human-baseline.md)",
    )
    p.add_argument(
        "--new-tokens",
        action="store_true",
        help="make new access links (the old ones stop working); by default the links are kept "
        "in <out>/.tokens.json and stay the same across restarts",
    )
    p.add_argument(
        "--participant", help="participant name to fill in on the start page (names the file)"
    )
    p.add_argument(
        "--out",
        default="human-predictions",
        help="folder for the predictions files, one <participant>.jsonl each (default ./human-predictions)",
    )
    p.set_defaults(func=cmd_human)
