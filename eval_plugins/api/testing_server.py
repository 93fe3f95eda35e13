"""PROTOCOL DOUBLE (for tests and the benchmark only): a local OpenAI-compatible endpoint.

It is not a model. It serves ``POST .../chat/completions`` on 127.0.0.1 over real sockets
(HTTP/1.1 keep-alive, asyncio streams) and answers from the question text: with the gold answer
when given an ``answers`` map (question id -> text), else with the example the question itself
gives (``... for example: C`` -> ``C``). It counts requests per question (the
``X-MiSI-Question`` header the client sends), tracks the requests in flight, and injects faults
on a fixed schedule: 429 with ``Retry-After``, 500, timeouts (no reply in time), malformed JSON,
slow replies and dropped connections. A ``behaviour`` makes every request misbehave one way
(:data:`BEHAVIOURS`: an error whose body echoes the request line and headers, as some proxies
do; an endless chunked 200; a 200 that trickles in a byte at a time; a malformed 200; a 200
of 200,000 nested ``[``), for every question or for the ids in ``behaviour_ids``. A request
body over ``max_body`` bytes (:data:`MAX_REQUEST_BYTES`) is refused with 413 unread.
``answer_request(qid, request)`` answers from the whole parsed request (``serve-mock``).

Use :class:`DoubleServer` (a background thread) in tests, or run
``python -m misi_bench.eval_plugins.api.testing_server --delay 0.2`` (prints its URL, serves
until killed; ``GET /stats`` returns the counters).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import threading
import time
import zlib
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass

FAULT_KINDS = ("429", "500", "timeout", "malformed", "slow", "drop")
#: Ways every request can misbehave (``Double(behaviour=...)``).
BEHAVIOURS = ("echo", "endless", "drip", "malformed", "nested")
#: Largest request body read (a request carries its pictures base64-encoded: a few MB); a
#: larger one is answered 413 and the connection closed, before the body is read.
MAX_REQUEST_BYTES = 64 * 1024 * 1024
#: Depth of the ``nested`` behaviour's reply (200,000 ``[``: beyond any parser's recursion).
NESTED_DEPTH = 200_000
_EXAMPLE_RE = re.compile(r"for example:\s*(.+?)\s*$", re.IGNORECASE | re.DOTALL)
_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    413: "Content Too Large",
    429: "Too Many Requests",
    500: "Internal Server Error",
}


@dataclass(frozen=True)
class FaultPlan:
    """The fault schedule. With ``cycle`` > 0, the first attempt of a question whose
    ``crc32(id) % cycle`` is k < len(FAULT_KINDS) gets fault ``FAULT_KINDS[k]`` (a ``500``
    question fails twice in a row); questions in ``always_500`` fail every attempt. Times in s."""

    cycle: int = 0
    always_500: frozenset[str] = frozenset()
    retry_after_s: float = 0.5
    hang_s: float = 3.0
    slow_s: float = 0.3

    def fault(self, qid: str, attempt: int) -> str | None:
        if qid in self.always_500:
            return "500"
        if not self.cycle:
            return None
        k = zlib.crc32(qid.encode()) % self.cycle
        if k >= len(FAULT_KINDS):
            return None
        kind = FAULT_KINDS[k]
        return kind if attempt == 1 or (kind == "500" and attempt == 2) else None


def example_answer(question: str) -> str:
    """The answer a question shows as its example (the text after its last ``for example:``)."""
    m = _EXAMPLE_RE.search(question.rsplit("\n", 1)[-1]) or _EXAMPLE_RE.search(question)
    return m.group(1) if m else "A"


class DoubleState:
    """Counters of the double (read them after a run)."""

    def __init__(self):
        self.per_question: Counter = Counter()
        self.arrivals: dict[str, list[float]] = {}
        self.bodies: dict[str, dict] = {}
        self.faults: Counter = Counter()
        self.requests = 0
        #: Completion requests let through to an answer (see ``Double(hold_after=...)``).
        self.admitted = 0
        self.in_flight = 0
        self.max_in_flight = 0

    def to_json(self) -> dict:
        return {
            "requests": self.requests,
            "max_in_flight": self.max_in_flight,
            "faults": dict(self.faults),
            "per_question": dict(self.per_question),
        }


class Double:
    """The request handler; ``delay_s`` is added to every reply. With ``record``, the state keeps
    each question's request arrival times (monotonic s) and its last parsed request body. With
    ``hold_after=N``, only the first N completion requests are answered; later ones are counted
    and then held open until the server stops (a client stopped mid-run, deterministically)."""

    def __init__(
        self,
        *,
        delay_s: float = 0.0,
        answers: Mapping[str, str] | None = None,
        plan: FaultPlan = FaultPlan(),
        api_key: str | None = None,
        answer_fn: Callable[[str, str], str] | None = None,
        record: bool = False,
        behaviour: str | None = None,
        echo_status: int = 400,
        answer_request: Callable[[str, dict], str] | None = None,
        models: tuple[str, ...] = ("double",),
        hold_after: int | None = None,
        behaviour_ids: frozenset[str] | None = None,
        max_body: int = MAX_REQUEST_BYTES,
    ):
        if behaviour is not None and behaviour not in BEHAVIOURS:
            raise ValueError(f"behaviour {behaviour!r}: expected one of {', '.join(BEHAVIOURS)}")
        self.delay_s, self.answers, self.plan, self.api_key = (
            delay_s,
            dict(answers or {}),
            plan,
            api_key,
        )
        self.answer_fn, self.record = answer_fn, record
        self.behaviour, self.echo_status = behaviour, echo_status
        self.answer_request, self.models = answer_request, models
        self.hold_after = hold_after
        self.behaviour_ids, self.max_body = behaviour_ids, max_body
        self.state = DoubleState()

    def _answer(self, qid: str, text: str, request: dict) -> str:
        if self.answer_request is not None:
            return self.answer_request(qid, request)
        if self.answer_fn is not None:
            return self.answer_fn(qid, text)
        return self.answers[qid] if qid in self.answers else example_answer(text)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path = lines[0].split(" ")[:2]
                headers = {
                    k.strip().lower(): v.strip()
                    for k, v in (ln.split(":", 1) for ln in lines[1:] if ":" in ln)
                }
                n = int(headers.get("content-length") or 0)
                if n > self.max_body or n < 0:
                    await self._refuse_body(n, writer)
                    break
                body = await reader.readexactly(n) if n else b""
                if self._misbehaves(method, headers):
                    await self._misbehave(head, writer)
                    break
                if not await self._serve(method, path, headers, body, writer):
                    break
        except (
            asyncio.IncompleteReadError,
            asyncio.LimitOverrunError,
            asyncio.CancelledError,
            ConnectionError,
            ValueError,
            RecursionError,
        ):
            pass
        finally:
            writer.close()

    def _misbehaves(self, method: str, headers: dict) -> bool:
        if not self.behaviour or method != "POST":
            return False
        ids = self.behaviour_ids
        return ids is None or headers.get("x-misi-question", "") in ids

    async def _refuse_body(self, n: int, writer) -> None:
        """413 for a body over :attr:`max_body` (one line naming the size and the limit)."""
        self.state.requests += 1
        self.state.faults["too-large"] += 1
        message = f"request body of {n} bytes; at most {self.max_body}"
        await self._send(writer, 413, json.dumps({"error": {"message": message}}).encode())

    @staticmethod
    async def _send(writer, status: int, payload: bytes, extra: str = "") -> None:
        writer.write(
            f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}\r\ncontent-type: application/json\r\n"
            f"content-length: {len(payload)}\r\n{extra}\r\n".encode()
            + payload
        )
        await writer.drain()

    async def _misbehave(self, head: bytes, writer) -> None:
        """Answer a POST the way :attr:`behaviour` says (the connection is closed after)."""
        self.state.requests += 1
        self.state.faults[self.behaviour] += 1
        if self.behaviour == "echo":  # the request line and every header, as some proxies do
            echo = {"error": {"message": "rejected", "request": head.decode("latin-1")}}
            await self._send(writer, self.echo_status, json.dumps(echo).encode())
        elif self.behaviour == "malformed":
            await self._send(writer, 200, b'{"choices": "none of them"}')
        elif self.behaviour == "nested":
            await self._send(writer, 200, b"[" * NESTED_DEPTH)
        elif self.behaviour == "endless":  # a 200 whose chunked body never ends
            writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
            chunk = b"%x\r\n%s\r\n" % (1 << 16, b"x" * (1 << 16))
            while True:
                writer.write(chunk)
                await writer.drain()
        else:  # drip: a small 200 sent one byte every 0.1 s
            payload = self._completion_for("drip", "A", "double")
            writer.write(f"HTTP/1.1 200 OK\r\ncontent-length: {len(payload)}\r\n\r\n".encode())
            for k in range(len(payload)):
                writer.write(payload[k : k + 1])
                await writer.drain()
                await asyncio.sleep(0.1)

    async def _serve(self, method: str, path: str, headers: dict, body: bytes, writer) -> bool:
        """Answer one request; False closes the connection."""
        if method == "GET" and path.endswith("/stats"):
            await self._send(writer, 200, json.dumps(self.state.to_json()).encode())
            return True
        if method == "GET" and path.endswith("/models"):
            listing = {
                "object": "list",
                "data": [{"id": m, "object": "model"} for m in self.models],
            }
            await self._send(writer, 200, json.dumps(listing).encode())
            return True
        if method != "POST" or path.split("?")[0] != "/v1/chat/completions":  # as vLLM
            await self._send(writer, 404, b'{"error": {"message": "not found"}}')
            return True
        st = self.state
        st.requests += 1
        if self.api_key and headers.get("authorization") != f"Bearer {self.api_key}":
            await self._send(writer, 401, b'{"error": {"message": "bad API key"}}')
            return True
        qid = headers.get("x-misi-question", "")
        st.per_question[qid] += 1
        if self.record:
            st.arrivals.setdefault(qid, []).append(time.monotonic())
        st.in_flight += 1
        st.max_in_flight = max(st.max_in_flight, st.in_flight)
        try:
            if self.hold_after is not None and st.admitted >= self.hold_after:
                await asyncio.Event().wait()  # held until the server stops (cancelled)
            st.admitted += 1
            fault = self.plan.fault(qid, st.per_question[qid])
            if fault:
                st.faults[fault] += 1
            await asyncio.sleep(self.delay_s + (self.plan.slow_s if fault == "slow" else 0.0))
            if fault == "429":
                await self._send(
                    writer,
                    429,
                    b'{"error": {"message": "rate limited"}}',
                    f"retry-after: {self.plan.retry_after_s:g}\r\n",
                )
            elif fault == "500":
                await self._send(writer, 500, b'{"error": {"message": "injected failure"}}')
            elif fault in ("timeout", "drop"):
                if fault == "timeout":
                    await asyncio.sleep(self.plan.hang_s)
                return False
            elif fault == "malformed":
                await self._send(
                    writer, 200, b'{"id": "x", "choices": [{"message": {"content": "trunc'
                )
            else:
                await self._send(writer, 200, self._completion(qid, body))
            return True
        finally:
            st.in_flight -= 1

    def _completion(self, qid: str, body: bytes) -> bytes:
        request = json.loads(body)
        if self.record:
            self.state.bodies[qid] = request
        content = request["messages"][-1]["content"]
        parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
        text = "\n".join(p.get("text", "") for p in parts if p.get("type") == "text")
        n_images = sum(1 for p in parts if p.get("type") == "image_url")
        answer = self._answer(qid, text, request)
        return self._completion_for(
            self.state.requests, answer, request.get("model"), len(text) // 4 + 85 * n_images
        )

    @staticmethod
    def _completion_for(n, answer: str, model, prompt_tokens: int = 0) -> bytes:
        completion_tokens = len(answer.split()) + 1
        return json.dumps(
            {
                "id": f"chatcmpl-double-{n}",
                "object": "chat.completion",
                "created": 0,
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": answer},
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            }
        ).encode()


class DoubleServer:
    """Runs a :class:`Double` on 127.0.0.1 in a background thread; a context manager.
    :attr:`url` is the base URL to give the client (``http://127.0.0.1:PORT/v1``)."""

    def __init__(self, double: Double, port: int = 0):
        self.double, self.port = double, port
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="api-double", daemon=True)
        self._server = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def state(self) -> DoubleState:
        return self.double.state

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)

        async def start():
            self._server = await asyncio.start_server(
                self.double.handle, "127.0.0.1", self.port, backlog=1024
            )
            self.port = self._server.sockets[0].getsockname()[1]
            self._ready.set()

        self._loop.run_until_complete(start())
        self._loop.run_forever()

    def __enter__(self) -> DoubleServer:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("protocol double did not start")
        return self

    def __exit__(self, *exc) -> None:
        async def stop():
            self._server.close()
            for task in [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]:
                task.cancel()

        asyncio.run_coroutine_threadsafe(stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


def main(argv: list[str] | None = None) -> int:
    """Serve the double in the foreground (for the benchmark); prints ``listening URL``."""
    p = argparse.ArgumentParser(
        allow_abbrev=False,
        description="PROTOCOL DOUBLE of an OpenAI-compatible endpoint (tests only)",
    )
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--delay", type=float, default=0.0, help="seconds added to every reply")
    p.add_argument(
        "--fault-cycle",
        type=int,
        default=0,
        help="inject faults on a crc32(id) %% N schedule (0: none)",
    )
    args = p.parse_args(argv)
    double = Double(delay_s=args.delay, plan=FaultPlan(cycle=args.fault_cycle))

    async def serve():
        server = await asyncio.start_server(double.handle, "127.0.0.1", args.port, backlog=4096)
        print(f"listening http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1", flush=True)
        async with server:
            await server.serve_forever()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
