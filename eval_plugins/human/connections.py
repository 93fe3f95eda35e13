"""The human app's HTTP server: the standard library's threaded server with its connections
capped and each request's read bounded in time.

- At most :data:`MAX_CONNECTIONS` connections are served at once (one thread each); one more is
  answered ``503`` at once, without a thread, and closed, so a flood of connections (a
  slowloris) costs a bounded number of threads, not one per connection.
- At most :data:`MAX_PER_CLIENT` of them from one address: one client's flood (200 idle sockets)
  is answered ``503`` beyond its share and leaves the rest for the other participants.
- A request (its line, headers and body) must have arrived within :data:`REQUEST_DEADLINE_S`
  seconds of the connection opening or of the previous answer on it; a client that trickles
  bytes in slower is disconnected (the per-read timeout of the handler alone would let a byte
  every few seconds hold a thread for ever). A connection whose request line has not arrived
  within :data:`IDLE_S` seconds (an idle one: a request line is one packet) is disconnected
  sooner (a browser opens a new one).
"""

from __future__ import annotations

import contextlib
import json
import logging
import select
import socket
import sys
import threading
import time
from http.server import ThreadingHTTPServer

log = logging.getLogger(__name__)

#: Connections served at once (a browser opens up to six; a study has a few participants).
MAX_CONNECTIONS = 64
#: Connections served at once for one client address (a browser opens up to six).
MAX_PER_CLIENT = 16
#: Seconds a client has to send one whole request.
REQUEST_DEADLINE_S = 30.0
#: Seconds a connection may wait with nothing arriving before it is dropped.
IDLE_S = 5.0
#: Seconds between two warnings about refused connections.
_WARN_EVERY_S = 60.0


class CappedServer(ThreadingHTTPServer):
    """A ``ThreadingHTTPServer`` with a connection cap and a request deadline (module doc)."""

    daemon_threads = True
    request_queue_size = 128  # the listen backlog (the standard library's 5 stalls a burst)

    def __init__(
        self,
        address,
        handler,
        max_connections: int = MAX_CONNECTIONS,
        deadline_s: float = REQUEST_DEADLINE_S,
        per_client: int = MAX_PER_CLIENT,
        idle_s: float = IDLE_S,
    ) -> None:
        super().__init__(address, handler)
        self.max_connections, self.deadline_s = max_connections, deadline_s
        self.per_client, self.idle_s = per_client, min(idle_s, deadline_s)
        self._clients: dict[str, int] = {}
        self._client_of: dict[socket.socket, str] = {}
        self._arrived: set[socket.socket] = set()
        self.refused = 0
        self.peak = 0
        self._guard = threading.Lock()
        self._open = 0
        self._reading: dict[socket.socket, float] = {}
        self._warned = -_WARN_EVERY_S
        self._stop = threading.Event()
        self._reaper = threading.Thread(target=self._reap, name="human-reaper", daemon=True)
        self._reaper.start()

    @property
    def open_connections(self) -> int:
        with self._guard:
            return self._open

    def process_request(self, request, client_address) -> None:
        client = str(client_address[0])
        with self._guard:
            mine = self._clients.get(client, 0)
            full = self._open >= self.max_connections or mine >= self.per_client
            if not full:
                self._open += 1
                self._clients[client] = mine + 1
                self._client_of[request] = client
                self.peak = max(self.peak, self._open)
                self._reading[request] = time.monotonic()
        if full:
            self._refuse(request, client_address)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._release(request)
            raise

    def process_request_thread(self, request, client_address) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._release(request)

    def _release(self, request) -> None:
        with self._guard:
            self._open -= 1
            self._reading.pop(request, None)
            self._arrived.discard(request)
            client = self._client_of.pop(request, None)
            if client is not None:
                left = self._clients.get(client, 1) - 1
                if left > 0:
                    self._clients[client] = left
                else:
                    self._clients.pop(client, None)

    def _refuse(self, request, client_address) -> None:
        """Answer 503 at once and close (no thread is started for it)."""
        self.refused += 1
        body = json.dumps(
            {
                "error": f"too many connections (at most {self.max_connections}, "
                f"{self.per_client} from one address); try again"
            }
        ).encode()
        head = (
            "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nRetry-After: 5\r\nConnection: close\r\n\r\n"
        )
        with contextlib.suppress(OSError):
            request.settimeout(1.0)
            request.sendall(head.encode() + body)
            request.setblocking(False)
            request.recv(1 << 16)  # what it sent already: closing over unread bytes resets
        self.shutdown_request(request)
        now = time.monotonic()
        if now - self._warned >= _WARN_EVERY_S:
            self._warned = now
            log.warning(
                "refused a connection from %s: %d open, the most served at once (%d refused so far)",
                client_address[0],
                self.max_connections,
                self.refused,
            )

    def reading(self, request) -> None:
        """The handler starts reading a request on ``request`` (its deadline starts now)."""
        with self._guard:
            self._reading[request] = time.monotonic()
            self._arrived.discard(request)

    def arrived(self, request) -> None:
        """The request line on ``request`` arrived (it is no longer idle)."""
        with self._guard:
            if request in self._reading:
                self._arrived.add(request)

    def answered(self, request) -> None:
        """The request on ``request`` was read whole (no deadline until the next one)."""
        with self._guard:
            self._reading.pop(request, None)

    def _late(self, now: float) -> list[socket.socket]:
        """Connections past the request deadline, and idle ones (no request line for
        :attr:`idle_s`; a socket with bytes waiting counts as arriving)."""
        with self._guard:
            waiting = list(self._reading.items())
            arrived = set(self._arrived)
        late = [s for s, t in waiting if now - t > self.deadline_s]
        quiet = [s for s, t in waiting if now - t > self.idle_s and s not in arrived]
        for sock in quiet:
            if sock in late:
                continue
            try:
                ready = select.select([sock], [], [], 0)[0]
            except (OSError, ValueError):
                ready = []
            if ready:
                with self._guard:
                    self._arrived.add(sock)
            else:
                late.append(sock)
        with self._guard:
            for sock in late:
                self._reading.pop(sock, None)
        return late

    def _reap(self) -> None:
        """Disconnect every connection whose request is late or that is idle (checked a few
        times a second)."""
        while not self._stop.wait(min(0.25, self.idle_s / 4)):
            for sock in self._late(time.monotonic()):
                log.debug("dropped a client that sent no whole request in %.0f s", self.deadline_s)
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request, client_address) -> None:
        """A client that went away (or was dropped) mid-answer: one debug line; any other error
        is logged with its traceback (a bug, not a client)."""
        if isinstance(sys.exc_info()[1], OSError):
            log.debug("connection from %s ended early", client_address[0], exc_info=True)
        else:
            log.error("error answering %s", client_address[0], exc_info=True)

    def server_close(self) -> None:
        self._stop.set()
        super().server_close()


class NotingReader:
    """A handler's ``rfile`` that calls ``on_line`` each time a line has been read (the server
    then knows the request line arrived: :meth:`CappedServer.arrived`)."""

    def __init__(self, raw, on_line) -> None:
        self._raw, self._on_line = raw, on_line

    def readline(self, *args):
        line = self._raw.readline(*args)
        if line:
            self._on_line()
        return line

    def __getattr__(self, name):
        return getattr(self._raw, name)
