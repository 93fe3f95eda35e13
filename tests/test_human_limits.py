"""The human app against hostile clients (issue 39), over real sockets on 127.0.0.1 and the
small real build: no token or session key in any log line, no participant reading answers
that are on file without a key, a connection flood (slowloris) holding a bounded number of
threads, and a request trickled in byte by byte cut off at the deadline."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time

from misi_bench.eval_plugins.human.access import Tokens, public_path
from misi_bench.eval_plugins.human.server import HumanApp, make_server
from misi_bench.eval_plugins.human.session import load_questions

from test_human_security import ADMIN, TOKEN, Running


def _raw(port: int, data: bytes, wait: float = 5.0) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as sock:
        sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_tokens_and_keys_are_never_logged(running, caplog):
    """Refused requests are logged with their URL: the administrator's ``?token=``, a wrong
    token, a session ``key=`` and a garbled request line never reach a log record."""
    caplog.set_level(logging.DEBUG, logger="misi_bench")
    status, state = running.post("/api/start", {"participant": "logged"})
    key = state["key"]
    requests = [
        f"/api/results?participant=not%20a%20name&token={ADMIN}",  # 400, admin token in the URL
        f"/api/nothing?token={ADMIN}&x=1",  # 404
        f"/api/results?participant=logged&key={key}&token={TOKEN}",  # 403: not finished
        "/api/config?token=wrong-token-guess-123",  # 401
    ]
    for path in requests:
        assert running.request("GET", path, token=None)[0] in (400, 403, 404, 401), path
    # a request line http.server itself refuses (logged through log_error / log_message)
    _raw(running.port, f"GET /api/config?token={ADMIN} HTTP/9.9\r\n\r\n".encode())
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "refused GET /api/results?participant=not%20a%20name&token=***" in text
    assert "token=***" in text and "key=***" in text
    for secret in (ADMIN, TOKEN, key, "wrong-token-guess-123"):
        assert secret not in text, secret
    assert public_path("/x?a=1&token=abc;key=def#k") == "/x?a=1&token=***;key=***#k"


def test_answers_on_file_without_a_key_are_not_given_to_a_participant(data_dir, tmp_path):
    """An answers file with no key entry (keys lost, or a file put there): a participant who
    claims the name is refused and reads nothing; the administrator's link resumes it."""
    out = tmp_path / "out"
    out.mkdir()
    questions = load_questions(data_dir, "tiny")
    first = questions[0]
    line = {"id": first.id, "prediction": "secret answer of alice", "task": first.task}
    (out / "alice.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    app = Running(data_dir, out)
    try:
        status, reply = app.post("/api/start", {"participant": "alice"})
        assert status == 403 and "no session key" in reply["error"]
        assert "secret answer" not in json.dumps(reply)
        assert not app.app.keys.key_of("alice")  # no key was made for the claimant
        status, _, payload = app.request("GET", "/api/results?participant=alice")
        assert status == 403 and b"secret answer" not in payload
        status, reply = app.post("/api/start", {"participant": "alice"}, token=ADMIN)
        assert status == 200 and reply["answered"] == 1 and reply["key"]
        # with the key the administrator got, the participant resumes
        status, again = app.post("/api/start", {"participant": "alice", "key": reply["key"]})
        assert status == 200 and again["answered"] == 1
        # a new name still starts freely
        assert app.post("/api/start", {"participant": "bob"})[0] == 200
        # a line nested 200,000 deep in an answers file is an unreadable line, not a crash
        with (out / "alice.jsonl").open("a", encoding="utf-8") as fh:
            fh.write("[" * 200_000 + "\n")
        app.app.sessions.clear()
        status, reply = app.post("/api/start", {"participant": "alice", "key": reply["key"]})
        assert status == 200 and reply["answered"] == 1
    finally:
        app.close()


def test_a_connection_flood_holds_a_bounded_number_of_threads(data_dir, tmp_path):
    """Slowloris: 60 connections that each send half a request line and wait. With a cap of 8
    the server holds at most 8 threads for them, answers the others 503 at once, and frees
    the held ones at the deadline, after which it serves again."""
    questions = load_questions(data_dir, "tiny")
    app = HumanApp(data_dir, questions, "tiny", tmp_path / "out", tokens=Tokens(TOKEN, ADMIN))
    server = make_server(app, port=0, max_connections=8, deadline_s=1.5)
    port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    socks = []
    threads_before = threading.active_count()
    try:
        for _ in range(60):
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            sock.sendall(b"GET /api/config HTTP/1.1\r\nHost: x")  # never finished
            socks.append(sock)
        wait_until = time.monotonic() + 5
        while server.refused + server.open_connections < 60 and time.monotonic() < wait_until:
            time.sleep(0.05)
        assert server.open_connections == 8 and server.peak == 8
        assert threading.active_count() - threads_before <= 8
        refused = 0
        for sock in socks:
            sock.settimeout(0.2)
            try:
                data = sock.recv(4096)
            except TimeoutError:
                continue  # one of the held ones
            except ConnectionResetError:
                data = b"reset"
            if data.startswith(b"HTTP/1.1 503"):
                refused += 1
                assert b"too many connections" in data
        assert refused == 52 and server.refused == 52
        deadline = time.monotonic() + 6
        while server.open_connections and time.monotonic() < deadline:
            time.sleep(0.1)
        assert server.open_connections == 0  # the held ones were dropped at the deadline
        reply = _raw(port, f"GET /api/config HTTP/1.1\r\nX-Misi-Token: {TOKEN}\r\n\r\n".encode())
        assert reply.startswith(b"HTTP/1.0 200") or reply.startswith(b"HTTP/1.1 200")
    finally:
        for sock in socks:
            sock.close()
        server.shutdown()
        server.server_close()


def test_a_request_trickled_in_is_cut_at_the_deadline(data_dir, tmp_path):
    """A byte every 0.2 s never trips the per-read timeout, but the whole request must arrive
    within the deadline (here 1.5 s): the server closes the connection then."""
    questions = load_questions(data_dir, "tiny")
    app = HumanApp(data_dir, questions, "tiny", tmp_path / "out", tokens=Tokens(TOKEN, ADMIN))
    server = make_server(app, port=0, deadline_s=1.5)
    port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            start = time.monotonic()
            closed = False
            for byte in b"GET /api/config HTTP/1.1\r\nX-Padding: " + b"a" * 200:
                try:
                    sock.sendall(bytes([byte]))
                except OSError:
                    closed = True
                    break
                time.sleep(0.2)
                if time.monotonic() - start > 6:
                    break
            if not closed:
                sock.settimeout(2)
                try:
                    closed = sock.recv(1024) == b""
                except OSError:
                    closed = True
            assert closed and time.monotonic() - start < 6
        assert server.open_connections == 0
    finally:
        server.shutdown()
        server.server_close()
