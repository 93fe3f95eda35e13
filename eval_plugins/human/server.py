"""The human-baseline web app: the standard library's threaded HTTP server and one HTML/JS page.

Every ``/api/`` route needs the run's access token (``?token=`` or the ``X-Misi-Token`` header;
see :mod:`.access`), and a participant's routes also that participant's session ``key``.
Routes (JSON unless said otherwise):

- ``GET /`` the page (static; it holds no data); ``GET /api/config`` split, question count,
  default participant, the caller's role;
- ``POST /api/start`` ``{"participant", "key"}`` -> state (progress and the next question, never
  its answer) and the session key; ``GET /api/image?id=ID&k=K`` the K-th image of a question;
- ``POST /api/parse`` ``{"id", "text"}`` -> how the scorer reads a fill-in answer and whether it
  has the task's form (a format check that reveals nothing about the gold answer);
- ``POST /api/answer`` ``{"participant", "key", "id", "prediction", "seconds"}`` -> the next
  state; an answer not of the task's form is refused (422), ``seconds`` must be finite and >= 0;
- ``GET /api/results?participant=P&key=K`` P's scores and own answers once P has finished; with
  the administrator token also the gold answers, for any participant, at any time.

Bodies must state their length (411 without ``Content-Length``, 400 for a bad one, 413 above
:data:`MAX_BODY`); a client that stalls is dropped after :data:`READ_TIMEOUT_S` seconds, one
that trickles a request in after :data:`.connections.REQUEST_DEADLINE_S`; at most
:data:`.connections.MAX_CONNECTIONS` connections are served at once (503 beyond). Tokens and
session keys are never logged, however spelled (:class:`.access.LogHider`).
"""

from __future__ import annotations

import json
import logging
import math
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from importlib import resources
from pathlib import Path
from urllib.parse import parse_qs, urlparse

from ...builder.core.provenance import DatasetProvenance
from ...builder.scoring import format_parsed, parse_prediction, score_records
from ..common import build_config_hash
from .access import ADMIN, LogHider, SessionKeys, Tokens
from .connections import (
    IDLE_S,
    MAX_CONNECTIONS,
    MAX_PER_CLIENT,
    REQUEST_DEADLINE_S,
    CappedServer,
    NotingReader,
)
from .forms import form_problem
from .session import Question, Session, check_participant, question_images, records

log = logging.getLogger(__name__)
#: The largest request body read (an answer is at most a few hundred bytes).
MAX_BODY = 64 * 1024
#: Seconds a client may take to send a request before it is dropped.
READ_TIMEOUT_S = 20.0
#: The longest prediction or parse text kept (characters).
MAX_TEXT = 2000


class HttpError(Exception):
    """A request refused with ``status`` and a message for the page."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _seconds(value) -> float | None:
    """The answer time: None, or a finite number >= 0 (else a 400 naming the value)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise HttpError(HTTPStatus.BAD_REQUEST, f"seconds must be a number, not {value!r:.40}")
    if not math.isfinite(value) or value < 0:
        raise HttpError(HTTPStatus.BAD_REQUEST, f"seconds must be finite and >= 0, not {value!r}")
    return float(value)


def _text(body: dict, key: str, default: str = "") -> str:
    value = body.get(key, default)
    if value is None:
        return default
    if not isinstance(value, str):
        raise HttpError(HTTPStatus.BAD_REQUEST, f"{key} must be a string")
    return value


def _no_constants(name: str):
    raise ValueError(f"{name} is not a number this app accepts")


class HumanApp:
    """The app's state: the question list, the sessions by participant, the output folder, the
    run's access tokens and the participants' session keys."""

    def __init__(
        self,
        build: str | Path,
        questions: list[Question],
        split: str,
        out: str | Path,
        participant: str | None = None,
        tokens: Tokens | None = None,
        provenance: DatasetProvenance | None = None,
    ) -> None:
        self.build, self.questions, self.split, self.out = Path(build), questions, split, Path(out)
        #: the build's config hash, recorded with every answer (None when it has no manifest)
        self.config_hash = build_config_hash(str(self.build)) if self.build.is_dir() else None
        self.provenance = provenance
        self.by_id = {q.id: q for q in questions}
        self.participant = participant
        self.tokens = tokens or Tokens.new()
        self.keys = SessionKeys(self.out)
        #: every log line of a request passes through it (no token or key, however spelled)
        self.hide = LogHider(self.tokens, self.keys)
        self.sessions: dict[str, Session] = {}
        self._lock = threading.Lock()

    def question(self, qid) -> Question:
        question = self.by_id.get(str(qid))
        if question is None:
            raise HttpError(HTTPStatus.NOT_FOUND, f"no question {str(qid)!r:.80}")
        return question

    def session(self, participant: str) -> Session:
        name = check_participant(participant)
        with self._lock:
            if name not in self.sessions:
                self.sessions[name] = Session(
                    self.questions,
                    name,
                    self.out,
                    self.split,
                    self.config_hash,
                    provenance=self.provenance,
                )
            return self.sessions[name]

    def start(self, participant: str, key: str | None, role: str) -> dict:
        """Start or resume a session; a name in use needs its key (the administrator's token
        does not, and gets the key). A name whose answers file exists without a key (keys
        lost, or a file put there) is refused to participants: its answers would be theirs."""
        name = check_participant(participant)
        on_file = (self.out / f"{name}.jsonl").exists()
        claimed = self.keys.claim(name, key, new_ok=role == ADMIN or not on_file)
        if claimed is None and role == ADMIN:
            claimed = self.keys.key_of(name)
        if claimed is None and self.keys.key_of(name) is None:
            raise HttpError(
                HTTPStatus.FORBIDDEN,
                f"participant name {name!r} has answers on file but no session key: only the "
                "administrator's link can resume it; or choose another name",
            )
        if claimed is None:
            raise HttpError(
                HTTPStatus.FORBIDDEN,
                f"participant name {name!r} is already in use: open your resume link, or choose "
                "another name",
            )
        return {**self.session(name).state(), "key": claimed}

    def own_session(self, participant: str, key: str | None, role: str) -> Session:
        """The session of ``participant`` when the caller may act for it."""
        name = check_participant(participant)
        if role != ADMIN and not self.keys.check(name, key):
            raise HttpError(
                HTTPStatus.FORBIDDEN,
                f"no session key for participant {name!r}: start from the page, or open your "
                "resume link",
            )
        return self.session(name)

    def results(self, participant: str, gold: bool = False) -> dict:
        """Scores of a session (the scorer's own numbers) and its answers; ``gold`` adds the
        right answers and per-question scores (the administrator's view, any time). Without
        ``gold`` only a finished session has results."""
        from ..report.reference import average_all_tasks, paper_average  # noqa: PLC0415
        from ..report.sources import from_aggregate  # noqa: PLC0415

        session = self.session(participant)
        if not session.finished and not gold:
            raise HttpError(
                HTTPStatus.FORBIDDEN, "scores are shown only once every question is answered"
            )
        scored = score_records(
            records(self.build, self.split),
            {k: v["prediction"] for k, v in session.answers.items()},
        )
        report = scored["report"]
        columns, _ = from_aggregate(report)  # percent, in the paper's columns
        items = []
        for it in scored["per_item"]:
            item = {
                "id": it["id"],
                "task": it["task"],
                "prediction": it["prediction"],
                "seconds": session.answers.get(it["id"], {}).get("seconds"),
            }
            if gold:
                item.update(answer=it["answer"], score=it["metrics"]["score"])
            items.append(item)
        return {
            "participant": session.participant,
            "file": str(session.path),
            "answered": session.n_answered,
            "total": len(self.questions),
            "gold": gold,
            "report": report,
            "paper_average": paper_average(columns),
            "average_all_tasks": average_all_tasks(columns),
            "items": items,
        }


def _page() -> bytes:
    return resources.files(__package__).joinpath("page.html").read_bytes()


def _clean(value):
    """JSON-safe: non-finite floats become None (a NaN or Infinity would break the page)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


class Handler(BaseHTTPRequestHandler):
    app: HumanApp  # set on the subclass made by make_server
    server_version = "misi-bench-human"
    timeout = READ_TIMEOUT_S  # socket timeout: a stalled client frees its thread

    def log_message(self, fmt, *args) -> None:  # quiet: to the logger, not stderr
        log.debug("%s %s", self.address_string(), self.app.hide(fmt % args))

    def setup(self) -> None:
        super().setup()
        self.rfile = NotingReader(self.rfile, lambda: self.server.arrived(self.connection))

    def handle_one_request(self) -> None:
        self.server.reading(self.connection)  # the request's deadline (connections.py)
        super().handle_one_request()

    def _send(self, status: int, body: bytes, ctype: str, cache: str = "no-store") -> None:
        self.server.answered(self.connection)
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", cache)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")  # the token never leaves in a Referer
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, data, status: int = 200) -> None:
        self._send(
            status,
            json.dumps(_clean(data), ensure_ascii=False, allow_nan=False).encode("utf-8"),
            "application/json; charset=utf-8",
        )

    def _error(self, status: int, message: str) -> None:
        log.info(
            "refused %s %.80s from %s: %d %s",
            self.command,
            self.app.hide(self.path),
            self.address_string(),
            int(status),
            self.app.hide(message),
        )
        self._json({"error": message}, int(status))

    def _body(self) -> dict:
        if self.headers.get("Transfer-Encoding"):
            self.close_connection = True
            raise HttpError(HTTPStatus.LENGTH_REQUIRED, "send the body with a Content-Length")
        raw = self.headers.get("Content-Length")
        if raw is None:
            self.close_connection = True
            raise HttpError(HTTPStatus.LENGTH_REQUIRED, "Content-Length is required")
        text = raw.strip()
        if not text.isdigit() or len(text) > 12:
            self.close_connection = True
            raise HttpError(HTTPStatus.BAD_REQUEST, f"bad Content-Length {raw!r:.40}")
        length = int(text)
        if length > MAX_BODY:
            self.close_connection = True
            raise HttpError(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"body of {length} bytes; at most {MAX_BODY}"
            )
        data = self.rfile.read(length) if length else b""
        self.server.answered(self.connection)  # read whole: the deadline is over
        if len(data) < length:
            self.close_connection = True
            raise HttpError(HTTPStatus.BAD_REQUEST, "body shorter than its Content-Length")
        try:
            parsed = json.loads(data.decode("utf-8") or "{}", parse_constant=_no_constants)
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise HttpError(HTTPStatus.BAD_REQUEST, f"body is not JSON ({exc})") from None
        if not isinstance(parsed, dict):
            raise HttpError(HTTPStatus.BAD_REQUEST, "expected a JSON object")
        return parsed

    def _role(self, query: dict) -> str:
        given = self.headers.get("X-Misi-Token") or query.get("token")
        role = self.app.tokens.role(given)
        if role is None:
            raise HttpError(
                HTTPStatus.UNAUTHORIZED,
                "missing or wrong access token: open the link that misi-bench human printed "
                "(it ends in ?token=...)",
            )
        return role

    def _dispatch(self, handle) -> None:
        if self.command != "POST":  # a request without a body has arrived whole
            self.server.answered(self.connection)
        try:
            url = urlparse(self.path)
            try:
                query = {k: v[0] for k, v in parse_qs(url.query, max_num_fields=20).items()}
            except ValueError:
                raise HttpError(HTTPStatus.BAD_REQUEST, "too many query fields") from None
            handle(url.path, query)
        except HttpError as exc:
            self._error(exc.status, str(exc))
        except ValueError as exc:  # a bad participant name, a repeated answer
            status = HTTPStatus.CONFLICT if "already answered" in str(exc) else 400
            self._error(status, str(exc))
        except (KeyError, IndexError, TypeError) as exc:
            self._error(HTTPStatus.BAD_REQUEST, f"bad request: unknown question or field ({exc})")

    def do_HEAD(self) -> None:  # noqa: N802 (http.server's name)
        self.do_GET()

    def do_GET(self) -> None:  # noqa: N802
        self._dispatch(self._get)

    def do_POST(self) -> None:  # noqa: N802
        self._dispatch(self._post)

    def _get(self, path: str, query: dict) -> None:
        app = self.app
        if path in ("/", "/index.html"):
            self._send(200, _page(), "text/html; charset=utf-8")
            return
        if not path.startswith("/api/"):
            raise HttpError(HTTPStatus.NOT_FOUND, f"no such page {path!r:.80}")
        role = self._role(query)
        if path == "/api/config":
            self._json(
                {
                    "split": app.split,
                    "total": len(app.questions),
                    "participant": app.participant,
                    "build": app.build.name,
                    "role": role,
                }
            )
        elif path == "/api/image":
            question = app.question(query.get("id"))
            k = query.get("k", "0")
            images = question_images(question.shard, question.id)
            if not k.isdigit() or int(k) >= len(images):
                raise HttpError(
                    HTTPStatus.NOT_FOUND, f"question {question.id} has no image {k!r:.20}"
                )
            data = images[int(k)]
            ctype = "image/png" if data[:8] == b"\x89PNG\r\n\x1a\n" else "image/jpeg"
            self._send(200, data, ctype, cache="private, max-age=3600")
        elif path == "/api/results":
            name = query.get("participant", "")
            if role == ADMIN:
                self._json(app.results(name, gold=True))
            else:
                session = app.own_session(name, query.get("key"), role)
                self._json(app.results(session.participant))
        else:
            raise HttpError(HTTPStatus.NOT_FOUND, f"no such endpoint {path!r:.80}")

    def _post(self, path: str, query: dict) -> None:
        app = self.app
        if not path.startswith("/api/"):
            raise HttpError(HTTPStatus.NOT_FOUND, f"no such endpoint {path!r:.80}")
        role = self._role(query)
        body = self._body()
        if path == "/api/start":
            self._json(app.start(_text(body, "participant"), body.get("key"), role))
        elif path == "/api/parse":
            question = app.question(body.get("id"))
            text = _text(body, "text")[:MAX_TEXT]
            options = list(question.options)
            parsed = parse_prediction(question.task, text, options=options or None)
            self._json(
                {
                    "read_as": format_parsed(question.task, parsed),
                    "problem": form_problem(question.task, text, options),
                }
            )
        elif path == "/api/answer":
            session = app.own_session(_text(body, "participant"), body.get("key"), role)
            question = app.question(body.get("id"))
            prediction = _text(body, "prediction")[:MAX_TEXT]
            seconds = _seconds(body.get("seconds"))
            problem = form_problem(question.task, prediction, question.options)
            if problem:
                raise HttpError(HTTPStatus.UNPROCESSABLE_ENTITY, problem)
            session.record(question.id, prediction, seconds)
            self._json(session.state())
        else:
            raise HttpError(HTTPStatus.NOT_FOUND, f"no such endpoint {path!r:.80}")


def make_server(
    app: HumanApp,
    host: str = "127.0.0.1",
    port: int = 7860,
    max_connections: int = MAX_CONNECTIONS,
    deadline_s: float = REQUEST_DEADLINE_S,
    per_client: int = MAX_PER_CLIENT,
    idle_s: float = IDLE_S,
) -> CappedServer:
    """A bound (not yet serving) server; ``port=0`` picks a free port (see ``server_address``).
    At most ``max_connections`` at once and ``per_client`` from one address; a request must
    arrive within ``deadline_s``, a connection with nothing arriving is dropped after
    ``idle_s`` (:mod:`.connections`)."""
    handler = type("BoundHandler", (Handler,), {"app": app})
    return CappedServer(
        (host, port), handler, max_connections, deadline_s, per_client=per_client, idle_s=idle_s
    )
