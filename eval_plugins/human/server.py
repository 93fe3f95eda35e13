"""The human-baseline web app: the standard library's threaded HTTP server and one HTML/JS page.

Routes (JSON unless said otherwise):

- ``GET /`` the page; ``GET /api/config`` split, question count, default participant;
- ``POST /api/start`` ``{"participant"}`` -> state (progress and the next question, never its
  answer); ``GET /api/image?id=ID&k=K`` the K-th image of a question (PNG);
- ``POST /api/parse`` ``{"id", "text"}`` -> how the scorer reads a fill-in answer (a format check
  that reveals nothing about the gold answer);
- ``POST /api/answer`` ``{"participant", "id", "prediction", "seconds"}`` -> the next state;
- ``GET /api/results?participant=P`` scores and the gold answers, only once P has finished.
"""

from __future__ import annotations

import json
import logging
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from urllib.parse import parse_qs, urlparse

from ...builder.scoring import format_parsed, parse_prediction, score_records
from .session import Question, Session, check_participant, question_images, records

log = logging.getLogger(__name__)
MAX_BODY = 64 * 1024


class HumanApp:
    """The app's state: the question list, the sessions by participant, the output folder."""

    def __init__(
        self,
        build: str | Path,
        questions: list[Question],
        split: str,
        out: str | Path,
        participant: str | None = None,
    ) -> None:
        self.build, self.questions, self.split, self.out = Path(build), questions, split, Path(out)
        self.participant = participant
        self.sessions: dict[str, Session] = {}
        self._lock = threading.Lock()

    def session(self, participant: str) -> Session:
        name = check_participant(participant)
        with self._lock:
            if name not in self.sessions:
                self.sessions[name] = Session(self.questions, name, self.out, self.split)
            return self.sessions[name]

    def results(self, participant: str) -> dict:
        """Scores and per-question answers of a finished session (the scorer's own numbers)."""
        from ..report.reference import average_9_tasks, paper_average  # noqa: PLC0415
        from ..report.sources import from_aggregate  # noqa: PLC0415

        session = self.session(participant)
        if not session.finished:
            raise PermissionError("answers are shown only once every question is answered")
        scored = score_records(
            records(self.build, self.split),
            {k: v["prediction"] for k, v in session.answers.items()},
        )
        report = scored["report"]
        columns, _ = from_aggregate(report)  # percent, in the paper's columns
        items = [
            {
                "id": it["id"],
                "task": it["task"],
                "prediction": it["prediction"],
                "answer": it["answer"],
                "score": it["metrics"]["score"],
                "seconds": session.answers.get(it["id"], {}).get("seconds"),
            }
            for it in scored["per_item"]
        ]
        return {
            "participant": session.participant,
            "file": str(session.path),
            "report": report,
            "paper_average": paper_average(columns),
            "average_9_tasks": average_9_tasks(columns),
            "items": items,
        }


def _page() -> bytes:
    return resources.files(__package__).joinpath("page.html").read_bytes()


class Handler(BaseHTTPRequestHandler):
    app: HumanApp  # set on the subclass made by make_server
    server_version = "misi-bench-human"

    def log_message(self, fmt, *args) -> None:  # quiet: to the logger, not stderr
        log.debug("%s " + fmt, self.address_string(), *args)

    def _send(self, status: int, body: bytes, ctype: str, cache: str = "no-store") -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", cache)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, data, status: int = 200) -> None:
        self._send(
            status,
            json.dumps(data, ensure_ascii=False).encode("utf-8"),
            "application/json; charset=utf-8",
        )

    def _error(self, status: int, message: str) -> None:
        self._json({"error": message}, status)

    def _body(self) -> dict:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            raise ValueError("request too large")
        data = json.loads(self.rfile.read(length) or b"{}")
        if not isinstance(data, dict):
            raise ValueError("expected a JSON object")
        return data

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        url = urlparse(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        app = self.app
        try:
            if url.path in ("/", "/index.html"):
                self._send(200, _page(), "text/html; charset=utf-8")
            elif url.path == "/api/config":
                self._json(
                    {
                        "split": app.split,
                        "total": len(app.questions),
                        "participant": app.participant,
                        "build": app.build.name,
                    }
                )
            elif url.path == "/api/image":
                question = next(q for q in app.questions if q.id == query.get("id"))
                data = question_images(question.shard, question.id)[int(query.get("k", "0"))]
                ctype = "image/png" if data[:8] == b"\x89PNG\r\n\x1a\n" else "image/jpeg"
                self._send(200, data, ctype, cache="private, max-age=3600")
            elif url.path == "/api/results":
                self._json(app.results(query.get("participant", "")))
            else:
                self._error(HTTPStatus.NOT_FOUND, f"no such page {url.path}")
        except PermissionError as exc:
            self._error(HTTPStatus.FORBIDDEN, str(exc))
        except (StopIteration, IndexError, KeyError, ValueError) as exc:
            self._error(HTTPStatus.BAD_REQUEST, f"bad request: {exc}")

    def do_POST(self) -> None:  # noqa: N802
        url = urlparse(self.path)
        app = self.app
        try:
            body = self._body()
            if url.path == "/api/start":
                self._json(app.session(body.get("participant", "")).state())
            elif url.path == "/api/parse":
                question = next(q for q in app.questions if q.id == body.get("id"))
                text = str(body.get("text", ""))[:2000]
                parsed = parse_prediction(
                    question.task, text, options=list(question.options) or None
                )
                self._json({"read_as": format_parsed(question.task, parsed)})
            elif url.path == "/api/answer":
                session = app.session(body.get("participant", ""))
                seconds = body.get("seconds")
                session.record(
                    str(body.get("id")),
                    str(body.get("prediction", ""))[:2000],
                    None if seconds is None else float(seconds),
                )
                self._json(session.state())
            else:
                self._error(HTTPStatus.NOT_FOUND, f"no such endpoint {url.path}")
        except ValueError as exc:  # bad JSON, bad name, repeated answer
            self._error(
                HTTPStatus.CONFLICT if "already answered" in str(exc) else HTTPStatus.BAD_REQUEST,
                str(exc),
            )
        except (StopIteration, KeyError, TypeError) as exc:
            self._error(HTTPStatus.BAD_REQUEST, f"bad request: unknown question or field ({exc})")


def make_server(app: HumanApp, host: str = "127.0.0.1", port: int = 7860) -> ThreadingHTTPServer:
    """A bound (not yet serving) server; ``port=0`` picks a free port (see ``server_address``)."""
    handler = type("BoundHandler", (Handler,), {"app": app})
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    return server
