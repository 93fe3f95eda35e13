"""Issue 49, item 5 (human app): 200 idle sockets no longer lock every participant out. One
address holds at most ``MAX_PER_CLIENT`` connections (the rest are answered 503 at once), and
a connection on which nothing arrives is dropped after ``IDLE_S`` seconds. Real sockets over
the small real build; the flood comes from another loopback address (127.0.0.2)."""

from __future__ import annotations

import socket
import threading
import time

from misi_bench.eval_plugins.human.access import Tokens
from misi_bench.eval_plugins.human.connections import MAX_CONNECTIONS, MAX_PER_CLIENT
from misi_bench.eval_plugins.human.server import HumanApp, make_server
from misi_bench.eval_plugins.human.session import load_questions

from test_human_security import ADMIN, TOKEN


def _serve(data_dir, tmp_path, **kw):
    questions = load_questions(data_dir, "tiny")
    app = HumanApp(data_dir, questions, "tiny", tmp_path / "out", tokens=Tokens(TOKEN, ADMIN))
    server = make_server(app, port=0, **kw)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _idle(port: int, source: str, n: int) -> list[socket.socket]:
    socks = []
    for _ in range(n):
        sock = socket.socket()
        sock.bind((source, 0))
        sock.settimeout(5)
        sock.connect(("127.0.0.1", port))
        socks.append(sock)
    return socks


def _config(port: int) -> bytes:
    """The first bytes of the answer to a participant's request (a refusal may close first)."""
    request = f"GET /api/config HTTP/1.1\r\nX-Misi-Token: {TOKEN}\r\nConnection: close\r\n\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        try:
            sock.sendall(request.encode())
        except OSError:
            pass
        try:
            return sock.recv(4096)
        except OSError:
            return b""


def test_200_idle_sockets_from_one_address_leave_room_for_participants(data_dir, tmp_path):
    server = _serve(data_dir, tmp_path)  # the defaults a study runs with
    port = server.server_address[1]
    socks = _idle(port, "127.0.0.2", 200)
    try:
        wait_until = time.monotonic() + 10
        while server.refused + server.open_connections < 200 and time.monotonic() < wait_until:
            time.sleep(0.05)
        assert server.open_connections == MAX_PER_CLIENT < MAX_CONNECTIONS
        assert server.refused == 200 - MAX_PER_CLIENT
        reply = _config(port)  # a participant, at once (before: 503 until the deadline)
        assert reply.split(b"\r\n")[0].endswith(b"200 OK"), reply[:200]
    finally:
        for sock in socks:
            sock.close()
        server.shutdown()
        server.server_close()


def test_idle_connections_are_dropped_after_the_idle_time(data_dir, tmp_path):
    """Many addresses, each under its share, fill every slot with sockets that send nothing:
    they are dropped after ``idle_s`` (here 1 s, deadline 30 s), and a participant is served."""
    server = _serve(data_dir, tmp_path, max_connections=16, idle_s=1.0)
    port = server.server_address[1]
    socks = [s for k in range(16) for s in _idle(port, f"127.0.1.{k + 1}", 1)]
    try:
        wait_until = time.monotonic() + 5
        while server.open_connections < 16 and time.monotonic() < wait_until:
            time.sleep(0.05)
        assert server.open_connections == 16
        assert b" 503 " in _config(port).split(b"\r\n")[0]  # every slot is held
        start = time.monotonic()
        while server.open_connections and time.monotonic() - start < 5:
            time.sleep(0.05)
        assert server.open_connections == 0 and time.monotonic() - start < 3
        reply = _config(port)
        assert reply.split(b"\r\n")[0].endswith(b"200 OK"), reply[:200]
    finally:
        for sock in socks:
            sock.close()
        server.shutdown()
        server.server_close()


def test_a_slow_but_steady_request_is_not_taken_for_idle(data_dir, tmp_path):
    """A request whose request line arrived and whose headers keep arriving (for 2 s) outlives
    ``idle_s`` (0.5 s) and is answered: only a connection with no request line is idle."""
    server = _serve(data_dir, tmp_path, idle_s=0.5, deadline_s=10)
    port = server.server_address[1]
    try:
        request = f"GET /api/config HTTP/1.1\r\nX-Misi-Token: {TOKEN}\r\n\r\n".encode()
        line = request.index(b"\r\n") + 2
        pieces = [request[:line]] + [request[i : i + 8] for i in range(line, len(request), 8)]
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            for piece in pieces:
                sock.sendall(piece)
                time.sleep(2.0 / len(pieces))
            assert sock.recv(4096).split(b"\r\n")[0].endswith(b"200 OK")
    finally:
        server.shutdown()
        server.server_close()
