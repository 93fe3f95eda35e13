"""Async client for one OpenAI-compatible ``/chat/completions`` endpoint, with retries.

Retried (exponential backoff with jitter, at least ``Retry-After`` when the server sends it):
HTTP 408/409/425/429 and 5xx, timeouts and dropped connections. A 200 that is not a
chat-completion JSON object (malformed) is retried at most ``max_malformed`` times (it is paid
for each time); the count is recorded with the answer or the failure. Given up for the question
at once: other 4xx and a reply over ``max_reply_bytes`` (an endless or runaway reply; the body is
read in chunks and dropped at the cap, so memory stays bounded). A reply nested deeper than
:data:`MAX_REPLY_DEPTH` (200,000 ``[``) is malformed, never a ``RecursionError``. Fatal for the whole run
(:class:`RequestFailed` with ``fatal=True``): 401, 403 and 404 (bad key, no access, wrong URL or
model; a 404 says whether the base URL lacks ``/v1``), since every other question would fail the
same way; so is a question given up on connection errors before any question of the session was
answered (nothing listens there; then only :data:`FIRST_CONNECT_RETRIES` retries are made).

``timeout_s`` bounds each attempt as a whole (connecting, sending, and reading the whole reply,
however slowly it trickles in). Every error text passes through the run's
:class:`~.redact.Redactor` before it leaves the client.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ...builder.core.generation import MAX_REPLY_BYTES

log = logging.getLogger(__name__)

RETRY_STATUS = frozenset({408, 409, 425, 429})
FATAL_STATUS = frozenset({401, 403, 404})
#: Longest wait a ``Retry-After`` header can ask for, seconds.
RETRY_AFTER_CAP_S = 600.0
#: Header carrying the question id (lets servers and the protocol double count per question).
QUESTION_HEADER = "X-MiSI-Question"
#: Retries of a refused/dropped connection before any question of the session was answered.
FIRST_CONNECT_RETRIES = 2
#: Characters of an error body quoted in an error message.
ERROR_QUOTE = 600
#: The fields of a provider's JSON error body that are kept (each at most this many characters;
#: ``message`` at most :data:`ERROR_MESSAGE`): nothing else of the body is stored or shown.
ERROR_FIELDS = ("type", "code", "message")
ERROR_FIELD = 80
ERROR_MESSAGE = 300
#: Deepest nesting of a reply kept (a chat completion nests ~6 levels; the run folder stores
#: the reply, and every reader of it must parse it again).
MAX_REPLY_DEPTH = 64


@dataclass(frozen=True)
class RetryPolicy:
    """``timeout_s``: whole-request limit per attempt (connect, send, read the whole reply);
    waits in seconds; ``max_retries`` after the first attempt; ``max_malformed``: retries of a
    malformed 200 (within ``max_retries``); ``max_reply_bytes``: cap of one reply body."""

    timeout_s: float = 600.0
    max_retries: int = 6
    backoff_s: float = 1.0
    max_backoff_s: float = 60.0
    max_malformed: int = 1
    max_reply_bytes: int = MAX_REPLY_BYTES

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        """Seconds to wait before attempt ``attempt + 1``: ``backoff * 2**(attempt-1)`` capped,
        with equal jitter (half fixed, half random), or ``Retry-After`` plus a little jitter."""
        base = min(self.max_backoff_s, self.backoff_s * 2 ** (attempt - 1))
        if retry_after is not None:
            return min(retry_after, RETRY_AFTER_CAP_S) + rng.uniform(0, min(1.0, base) / 4)
        return base / 2 + rng.uniform(0, base / 2)


@dataclass(frozen=True)
class Reply:
    """One answered question: the reply text, the endpoint's response object, token usage,
    the latency of the answering attempt (s), the number of attempts and of malformed replies."""

    text: str
    raw: Mapping[str, Any]
    usage: Mapping[str, Any]
    latency_s: float
    attempts: int
    malformed: int = 0


class RequestFailed(Exception):
    """A question given up (``error`` says why, ``kind`` names the last retried failure, if any);
    ``fatal``: the endpoint rejects every request; ``malformed``: malformed replies received."""

    def __init__(
        self,
        error: str,
        attempts: int,
        fatal: bool = False,
        kind: str | None = None,
        malformed: int = 0,
    ):
        super().__init__(error)
        self.error, self.attempts, self.fatal, self.kind = error, attempts, fatal, kind
        self.malformed = malformed


class _TooLarge(Exception):
    pass


class _Retryable(Exception):
    def __init__(self, kind: str, detail: str, retry_after: float | None = None):
        super().__init__(detail)
        self.kind, self.detail, self.retry_after = kind, detail, retry_after


def too_deep(value, limit: int) -> bool:
    """True when a parsed JSON value nests lists and objects over ``limit`` levels (walked
    with a stack of its own, never the interpreter's)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack += [(c, depth + 1) for c in children if isinstance(c, (dict, list))]
    return False


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date); None if absent/bad."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time()) if when else None


def reply_text(raw: Mapping) -> str:
    """The text of the first choice (a string, a list of text parts, or empty when None)."""
    message = raw["choices"][0]["message"]
    content = message.get("content")
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return "" if content is None else str(content)


def endpoint_url(base_url: str) -> str:
    """``BASE/chat/completions`` (a base URL already ending in ``/chat/completions`` is kept;
    a query string stays at the end)."""
    base, mark, query = base_url.partition("?")
    base = base.rstrip("/")
    base = base if base.endswith("/chat/completions") else base + "/chat/completions"
    return base + mark + query


def missing_v1_hint(url: str) -> str:
    """What a 404 from ``url`` most likely means."""
    from .redact import public_url  # noqa: PLC0415

    path = url.split("://", 1)[-1].partition("/")[2].partition("?")[0]
    if "v1" not in path.split("/"):
        base = public_url(url).partition("?")[0].removesuffix("/chat/completions")
        return (
            f"; OpenAI-compatible servers serve under /v1: try --base-url {base}/v1 "
            "(the path is BASE/chat/completions)"
        )
    return "; check --base-url and --model (some servers answer 404 for an unknown model)"


class ChatClient:
    """Posts request bodies to the endpoint over at most ``concurrency`` keep-alive connections.

    Each worker slot has its own one-connection ``httpx.AsyncClient`` (sharing one TLS context):
    httpcore's pool scans all its connections for every request, which costs ~O(connections)
    CPU per request in one large pool and O(1) in small ones.
    ``on_event(kind)`` is called for every retried failure (``429``, ``5xx``, ``timeout``,
    ``connection``, ``malformed``, ``http-<status>``) so a progress bar can count them.
    ``redactor``: the run's :class:`~.redact.Redactor` (default: one for ``api_key`` and the URL).
    """

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        policy: RetryPolicy = RetryPolicy(),
        concurrency: int = 8,
        on_event: Callable[[str], None] | None = None,
        seed: int | None = None,
        redactor=None,
    ):
        import httpx  # noqa: PLC0415

        from .redact import Redactor  # noqa: PLC0415

        self._httpx = httpx
        self.url = endpoint_url(base_url)
        self._url = httpx.URL(self.url)  # parsed once (httpx parses a str on every request)
        self.policy = policy
        self.on_event = on_event or (lambda kind: None)
        self.redactor = (
            redactor if redactor is not None else Redactor.for_endpoint(api_key, base_url)
        )
        self.answered_any = False
        self._rng = random.Random(seed)
        headers = {"content-type": "application/json", "accept": "application/json"}
        if api_key:
            headers["authorization"] = f"Bearer {api_key}"
        tls = httpx.create_ssl_context()  # one TLS context for all (each costs ~40 ms to build)
        self._clients = [
            httpx.AsyncClient(
                headers=headers,
                verify=tls,
                timeout=httpx.Timeout(policy.timeout_s, pool=None),
                limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
            )
            for _ in range(max(1, concurrency))
        ]

    async def aclose(self) -> None:
        for client in self._clients:
            await client.aclose()

    def _quote(self, data: bytes, cut: bool) -> str:
        """The start of a reply body for an error message, secrets replaced (before cutting)."""
        text = self.redactor.text(data.decode("utf-8", errors="replace"), cut=cut)
        if len(text) > ERROR_QUOTE:
            text = self.redactor.text(text[:ERROR_QUOTE], cut=True) + "..."
        return text

    def _error_detail(self, data: bytes, cut: bool) -> str:
        """What is kept of an error body: a provider's JSON error (``{"error": {...}}`` or the
        fields at the top) as its :data:`ERROR_FIELDS` only, each bounded and redacted; any other
        body as a bounded, redacted quote of its start."""
        try:
            obj = json.loads(data) if not cut else None
        except (ValueError, RecursionError):
            obj = None
        if not isinstance(obj, dict):
            return self._quote(data, cut)
        err = obj.get("error", obj)
        err = {"message": err} if isinstance(err, str) else err
        if not isinstance(err, dict):
            return "a JSON body without type, code or message"
        parts = []
        for name in ERROR_FIELDS:
            value = err.get(name)
            if isinstance(value, (str, int, float)) and not isinstance(value, bool):
                text, limit = str(value), ERROR_MESSAGE if name == "message" else ERROR_FIELD
                clean = self.redactor.text(text)
                if len(clean) > limit:
                    clean = self.redactor.text(clean[:limit], cut=True) + "..."
                parts.append(f"{name}: {clean}")
        return "; ".join(parts) or "a JSON body without type, code or message"

    async def _post(self, client, body: bytes, qid: str) -> tuple[int, Any, bytes, bool]:
        """Status, headers, body (at most ``max_reply_bytes``) and whether it was cut there."""
        cap = self.policy.max_reply_bytes
        request = client.build_request(
            "POST", self._url, content=body, headers={QUESTION_HEADER: qid}
        )
        resp = await client.send(request, stream=True)
        try:
            declared = resp.headers.get("content-length", "")
            if resp.status_code == 200 and declared.isdigit() and int(declared) > cap:
                raise _TooLarge(f"reply of {int(declared):,} bytes announced")
            chunks, size = [], 0
            async for chunk in resp.aiter_bytes():
                chunks.append(chunk)
                size += len(chunk)
                if size > cap:
                    if resp.status_code == 200:
                        raise _TooLarge(f"reply still arriving after {size:,} bytes")
                    break  # an error body: its start is enough
            data = b"".join(chunks)
            return resp.status_code, resp.headers, data[:cap], size > cap
        finally:
            await resp.aclose()

    async def _attempt(self, body: bytes, qid: str, slot: int) -> tuple[dict, float]:
        httpx = self._httpx
        start = time.perf_counter()
        try:
            client = self._clients[slot % len(self._clients)]
            status, headers, data, cut = await asyncio.wait_for(
                self._post(client, body, qid), self.policy.timeout_s
            )
        except (asyncio.TimeoutError, httpx.TimeoutException):
            raise _Retryable(
                "timeout", f"no complete reply within {self.policy.timeout_s:g} s"
            ) from None
        except _TooLarge as exc:
            raise RequestFailed(
                f"{exc}: over the reply cap of {self.policy.max_reply_bytes:,} bytes "
                "(--max-reply-bytes); given up",
                0,
                kind="too-large",
            ) from None
        except httpx.RequestError as exc:
            detail = self.redactor.text(f"{type(exc).__name__}: {exc}")
            raise _Retryable("connection", detail) from None
        latency = time.perf_counter() - start
        if status != 200:
            detail = f"HTTP {status}: {self._error_detail(data, cut)}"
            if status == 404:
                detail += missing_v1_hint(self.url)
            if status == 429 or status in RETRY_STATUS or status >= 500:
                kind = "429" if status == 429 else ("5xx" if status >= 500 else f"http-{status}")
                raise _Retryable(kind, detail, parse_retry_after(headers.get("retry-after")))
            raise RequestFailed(detail, 0, fatal=status in FATAL_STATUS)
        try:
            raw = json.loads(data)
            reply_text(raw)
        except (ValueError, KeyError, IndexError, TypeError, AttributeError, RecursionError):
            raise _Retryable(
                "malformed", f"reply is not a chat completion: {self._quote(data[:200], True)}"
            ) from None
        if too_deep(raw, MAX_REPLY_DEPTH):
            raise _Retryable(
                "malformed", f"reply is nested over {MAX_REPLY_DEPTH} levels deep: not stored"
            )
        return raw, latency

    def _gives_up(self, exc: _Retryable, attempt: int, malformed: int) -> bool:
        if attempt > self.policy.max_retries:
            return True
        if exc.kind == "malformed" and malformed > self.policy.max_malformed:
            return True
        return (
            exc.kind == "connection"
            and not self.answered_any
            and attempt > min(FIRST_CONNECT_RETRIES, self.policy.max_retries)
        )

    async def complete(self, body: bytes, qid: str, slot: int = 0) -> Reply:
        """Send one request body until it is answered, on worker slot ``slot``'s connection;
        raises :class:`RequestFailed`."""
        attempt = malformed = 0
        while True:
            attempt += 1
            try:
                raw, latency = await self._attempt(body, qid, slot)
            except RequestFailed as exc:
                raise RequestFailed(
                    exc.error, attempt, exc.fatal, kind=exc.kind, malformed=malformed
                ) from None
            except _Retryable as exc:
                self.on_event(exc.kind)
                malformed += exc.kind == "malformed"
                if self._gives_up(exc, attempt, malformed):
                    raise RequestFailed(
                        f"{exc.detail} (gave up after {attempt} attempts"
                        + (f", {malformed} malformed" if malformed else "")
                        + ")",
                        attempt,
                        kind=exc.kind,
                        malformed=malformed,
                    ) from None
                wait = self.policy.delay(attempt, exc.retry_after, self._rng)
                log.debug("question %s: %s; retry %d in %.2f s", qid, exc.detail, attempt, wait)
                await asyncio.sleep(wait)
                continue
            self.answered_any = True
            usage = raw.get("usage") if isinstance(raw.get("usage"), Mapping) else {}
            return Reply(reply_text(raw), raw, usage, latency, attempt, malformed)
