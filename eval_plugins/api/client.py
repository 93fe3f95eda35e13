"""Async client for one OpenAI-compatible ``/chat/completions`` endpoint, with retries.

Retried (exponential backoff with jitter, at least ``Retry-After`` when the server sends it):
HTTP 408/409/425/429 and 5xx, timeouts, dropped connections and replies that are not a
chat-completion JSON object. Given up for the question at once: other 4xx. Fatal for the whole
run (:class:`RequestFailed` with ``fatal=True``): 401, 403 and 404 (bad key, no access, wrong
URL or model), since every other question would fail the same way; so is a question given up
on connection errors before any question of the session was answered (nothing listens there).
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

log = logging.getLogger(__name__)

RETRY_STATUS = frozenset({408, 409, 425, 429})
FATAL_STATUS = frozenset({401, 403, 404})
#: Longest wait a ``Retry-After`` header can ask for, seconds.
RETRY_AFTER_CAP_S = 600.0
#: Header carrying the question id (lets servers and the protocol double count per question).
QUESTION_HEADER = "X-MiSI-Question"


@dataclass(frozen=True)
class RetryPolicy:
    """``timeout_s``: whole-request limit per attempt; waits in seconds; ``max_retries`` after
    the first attempt."""

    timeout_s: float = 600.0
    max_retries: int = 6
    backoff_s: float = 1.0
    max_backoff_s: float = 60.0

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
    the latency of the answering attempt (s) and the number of attempts."""

    text: str
    raw: Mapping[str, Any]
    usage: Mapping[str, Any]
    latency_s: float
    attempts: int


class RequestFailed(Exception):
    """A question given up (``error`` says why, ``kind`` names the last retried failure, if any);
    ``fatal``: the endpoint rejects every request."""

    def __init__(self, error: str, attempts: int, fatal: bool = False, kind: str | None = None):
        super().__init__(error)
        self.error, self.attempts, self.fatal, self.kind = error, attempts, fatal, kind


class _Retryable(Exception):
    def __init__(self, kind: str, detail: str, retry_after: float | None = None):
        super().__init__(detail)
        self.kind, self.detail, self.retry_after = kind, detail, retry_after


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
    """``BASE/chat/completions`` (a base URL already ending in ``/chat/completions`` is kept)."""
    base = base_url.rstrip("/")
    return base if base.endswith("/chat/completions") else base + "/chat/completions"


class ChatClient:
    """Posts request bodies to the endpoint over at most ``concurrency`` keep-alive connections.

    Each worker slot has its own one-connection ``httpx.AsyncClient`` (sharing one TLS context):
    httpcore's pool scans all its connections for every request, which costs ~O(connections)
    CPU per request in one large pool and O(1) in small ones.
    ``on_event(kind)`` is called for every retried failure (``429``, ``5xx``, ``timeout``,
    ``connection``, ``malformed``, ``http-<status>``) so a progress bar can count them.
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
    ):
        import httpx  # noqa: PLC0415

        self._httpx = httpx
        self.url = endpoint_url(base_url)
        self._url = httpx.URL(self.url)  # parsed once (httpx parses a str on every request)
        self.policy = policy
        self.on_event = on_event or (lambda kind: None)
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

    async def _attempt(self, body: bytes, qid: str, slot: int) -> tuple[dict, float]:
        httpx = self._httpx
        start = time.perf_counter()
        try:
            client = self._clients[slot % len(self._clients)]
            post = client.post(self._url, content=body, headers={QUESTION_HEADER: qid})
            resp = await asyncio.wait_for(post, self.policy.timeout_s)
        except (asyncio.TimeoutError, httpx.TimeoutException):
            raise _Retryable("timeout", f"no reply within {self.policy.timeout_s:g} s") from None
        except httpx.RequestError as exc:
            raise _Retryable("connection", f"{type(exc).__name__}: {exc}") from None
        latency = time.perf_counter() - start
        status = resp.status_code
        if status != 200:
            detail = f"HTTP {status}: {resp.text[:300]}"
            if status == 429 or status in RETRY_STATUS or status >= 500:
                kind = "429" if status == 429 else ("5xx" if status >= 500 else f"http-{status}")
                raise _Retryable(kind, detail, parse_retry_after(resp.headers.get("retry-after")))
            raise RequestFailed(detail, 0, fatal=status in FATAL_STATUS)
        try:
            raw = json.loads(resp.content)
            reply_text(raw)
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            raise _Retryable(
                "malformed", f"reply is not a chat completion: {resp.content[:200]!r}"
            ) from None
        return raw, latency

    async def complete(self, body: bytes, qid: str, slot: int = 0) -> Reply:
        """Send one request body until it is answered, on worker slot ``slot``'s connection;
        raises :class:`RequestFailed`."""
        attempt = 0
        while True:
            attempt += 1
            try:
                raw, latency = await self._attempt(body, qid, slot)
            except RequestFailed as exc:
                raise RequestFailed(exc.error, attempt, exc.fatal) from None
            except _Retryable as exc:
                self.on_event(exc.kind)
                if attempt > self.policy.max_retries:
                    raise RequestFailed(
                        f"{exc.detail} (gave up after {attempt} attempts)", attempt, kind=exc.kind
                    ) from None
                wait = self.policy.delay(attempt, exc.retry_after, self._rng)
                log.debug("question %s: %s; retry %d in %.2f s", qid, exc.detail, attempt, wait)
                await asyncio.sleep(wait)
                continue
            usage = raw.get("usage") if isinstance(raw.get("usage"), Mapping) else {}
            return Reply(reply_text(raw), raw, usage, latency, attempt)
