"""``misi-bench serve-mock``: a stand-in model, to check any route end to end without a GPU.

``misi-bench serve-mock BUILD --answers gold|random|constant`` serves an OpenAI-compatible
``POST /v1/chat/completions`` (and ``GET /v1/models``) on 127.0.0.1, prints its URL and answers
each request as a model of known skill would: ``gold`` with the question's gold answer (every
task scores 100%), ``random`` with the random baseline's answer (``baseline_prediction``: a
random letter, command or Yes/No, drawn per question from ``--seed`` and the question id, so the
scores are the chance level whatever the route and order), ``constant`` with the constant
baseline's (``No``, ``None``, ``A``). It is the same socket server as the tests' protocol double
(:mod:`.testing_server`), with the build's rows behind it.

A request is matched to its row by the question text (the text parts of the last message,
whitespace collapsed; the row's question is looked up whole, then as a part of the text, so a
harness's pre/post prompt or image tokens do not matter); rows with the same text (the same
operation asked of different pictures) are told apart by the request's images (data URLs):
their SHA-256 when the route sends the PNGs as stored, else the nearest 16x16 grey thumbnails
(a harness that re-encodes or resizes the pictures), and last by the ``X-MiSI-Question`` header
that ``misi-bench eval`` sends. Requests that match no row get an empty answer and are counted.
It reads the ``test`` and ``tiny`` splits and holds each distinct image once in memory: meant
for smoke tests on small builds. A request body over ``--max-body-bytes`` (64 MiB) is answered
413 without being read, so a client cannot make it buffer any body.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import logging
import zlib
from collections import Counter
from collections.abc import Mapping

from ...builder.core.errors import MisiError

log = logging.getLogger(__name__)

MODES = ("gold", "random", "constant")
_SPLITS = ("test", "tiny")
_THUMB = (16, 16)
_COLUMNS = ["id", "task", "answer", "options", "question", "images"]


def _norm(text: str) -> str:
    return " ".join(text.split())


def request_parts(request: Mapping) -> tuple[str, list[bytes]]:
    """The text of the request's last message and its data-URL images (bytes, in order)."""
    messages = request.get("messages") or [{}]
    content = messages[-1].get("content") if isinstance(messages[-1], Mapping) else None
    parts = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
    texts, images = [], []
    for part in parts:
        if not isinstance(part, Mapping):
            continue
        if part.get("type") == "text":
            texts.append(str(part.get("text") or ""))
        url = (
            (part.get("image_url") or {}).get("url", "") if part.get("type") == "image_url" else ""
        )
        if isinstance(url, str) and url.startswith("data:") and "," in url:
            try:
                images.append(base64.b64decode(url.split(",", 1)[1]))
            except ValueError:
                continue
    return _norm("\n".join(texts)), images


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def thumbnail(data: bytes) -> bytes | None:
    """16x16 grey pixels of an image (None when it cannot be decoded)."""
    import io  # noqa: PLC0415

    from PIL import Image  # noqa: PLC0415

    try:
        with Image.open(io.BytesIO(data)) as img:
            return img.convert("L").resize(_THUMB, Image.Resampling.BILINEAR).tobytes()
    except (OSError, ValueError):
        return None


class MockAnswers:
    """The rows of a build and the answer of each, for :meth:`answer` (the double's hook)."""

    def __init__(self, build: str, mode: str = "gold", seed: int = 0):
        from .data import QuestionSource  # noqa: PLC0415

        if mode not in MODES:
            raise MisiError(f"--answers: {mode!r}; expected one of {', '.join(MODES)}")
        self.mode, self.seed = mode, seed
        source = QuestionSource(build)
        if not source.local:
            raise MisiError(f"{build}: serve-mock needs a local build folder")
        self.rows: list[dict] = []
        self.by_text: dict[str, list[int]] = {}
        self.images: list[tuple[str, ...]] = []  # per row: its images' SHA-256, in order
        self.pngs: dict[str, bytes] = {}  # each distinct image once
        self._thumbs: dict[str, bytes | None] = {}
        seen: set[str] = set()
        for config in _configs(source.location):
            for split in _SPLITS:
                for batch in source._batches(config, split, _COLUMNS):
                    for row in batch.to_pylist():
                        if row["id"] in seen:
                            continue
                        seen.add(row["id"])
                        pngs = [
                            img["bytes"]
                            for img in row.pop("images") or []
                            if isinstance(img, Mapping) and img.get("bytes")
                        ]
                        shas = tuple(_sha(png) for png in pngs)
                        self.pngs.update(zip(shas, pngs))
                        self.images.append(shas)
                        self.by_text.setdefault(_norm(row["question"]), []).append(len(self.rows))
                        self.rows.append(row)
        if not self.rows:
            raise MisiError(f"{build}: no question rows found")
        self.counts: Counter = Counter()

    def find(self, qid: str, request: Mapping) -> dict | None:
        """The row the request asks about (None when no row matches)."""
        text, images = request_parts(request)
        found = self.by_text.get(text)
        if not found:
            found = [i for q, rows in self.by_text.items() if q and q in text for i in rows]
        if not found:
            self.counts["unmatched"] += 1
            return None
        if len(found) > 1 and images:
            shas = tuple(_sha(data) for data in images)
            exact = [i for i in found if self.images[i] == shas]
            found = exact or self._nearest(found, images)
        if len(found) > 1:
            by_id = [i for i in found if self.rows[i]["id"] == qid]
            if by_id:
                found = by_id
            else:
                self.counts["ambiguous"] += 1
        self.counts["matched"] += 1
        return self.rows[found[0]]

    def _thumb(self, sha: str) -> bytes | None:
        if sha not in self._thumbs:
            self._thumbs[sha] = thumbnail(self.pngs[sha])
        return self._thumbs[sha]

    def _nearest(self, found: list[int], images: list[bytes]) -> list[int]:
        """The rows of ``found`` whose pictures look most like ``images`` (re-encoded ones)."""
        asked = [thumbnail(data) for data in images]
        if any(t is None for t in asked):
            return found
        best, out = None, found
        for i in found:
            mine = [self._thumb(sha) for sha in self.images[i]]
            if len(mine) != len(asked) or any(t is None for t in mine):
                continue
            cost = sum(abs(a - b) for x, y in zip(asked, mine) for a, b in zip(x, y))
            if best is None or cost < best:
                best, out = cost, [i]
        return out

    def answer(self, qid: str, request: Mapping) -> str:
        row = self.find(qid, request)
        if row is None:
            return ""
        if self.mode == "gold":
            return str(row["answer"])
        import numpy as np  # noqa: PLC0415

        from ...builder.scoring import baseline_prediction  # noqa: PLC0415

        rng = np.random.default_rng([self.seed, zlib.crc32(str(row["id"]).encode())])
        kind = "random" if self.mode == "random" else "always_no"
        return baseline_prediction(kind, row["task"], row, rng)


def _configs(location: str) -> list[str]:
    from pathlib import Path  # noqa: PLC0415

    from ...builder.core.registry import TASK_NAMES  # noqa: PLC0415

    return [t for t in TASK_NAMES if (Path(location) / t).is_dir()]


def cmd_serve_mock(args: argparse.Namespace) -> int:
    import asyncio  # noqa: PLC0415
    import signal  # noqa: PLC0415

    from .testing_server import Double  # noqa: PLC0415

    if args.max_body_bytes < 1024:
        raise MisiError(f"--max-body-bytes: must be at least 1024, got {args.max_body_bytes}")
    mock = MockAnswers(args.build, args.answers, args.seed)
    double = Double(
        delay_s=args.delay,
        answer_request=mock.answer,
        models=(args.model,),
        max_body=args.max_body_bytes,
    )

    async def serve() -> None:
        server = await asyncio.start_server(double.handle, "127.0.0.1", args.port, backlog=1024)
        port = server.sockets[0].getsockname()[1]
        print(
            f"serve-mock: {args.answers} answers for {len(mock.rows)} questions of {args.build}; "
            f"model {args.model!r}; Ctrl-C or kill stops it",
            flush=True,
        )
        print(f"http://127.0.0.1:{port}/v1", flush=True)
        async with server:
            await server.serve_forever()

    def stop(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop)  # `kill` stops it as Ctrl-C does
    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
    print(f"serve-mock: {double.state.requests} requests, {dict(mock.counts)}", flush=True)
    return 0


def add_commands(sub) -> None:
    """Add ``serve-mock`` to the subparsers ``sub``."""
    p = sub.add_parser(
        "serve-mock",
        help="a stand-in OpenAI-compatible model with known answers (check any route, no GPU)",
        description=__doc__.splitlines()[0],
    )
    p.add_argument("build", help="the build folder whose questions it answers")
    p.add_argument(
        "--answers",
        choices=MODES,
        default="gold",
        help="gold (100%% everywhere), random (chance level) or constant (No/None/A); default gold",
    )
    p.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random answers (default 0)")
    p.add_argument("--delay", type=float, default=0.0, help="seconds added to every reply")
    p.add_argument("--model", default="mock", help="model name it lists (default mock)")
    p.add_argument(
        "--max-body-bytes",
        type=int,
        default=64 * 1024 * 1024,
        help="largest request body read; a larger one is answered 413 unread (default 64 MiB)",
    )
    p.set_defaults(func=cmd_serve_mock)
