"""The human app's guards, over real sockets on the small real build: access tokens, session
keys, bounded bodies, finite answer times, the answer-form check, what ``--host`` exposes; and a
bounded fuzz of the request handler (hypothesis) that may never crash it, hang it, answer with
non-JSON or leak a gold answer to a participant."""

from __future__ import annotations

import json
import math
import socket
import stat
import threading
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from misi_bench.eval_plugins.common import gold_by_id
from misi_bench.eval_plugins.human.access import KEYS_FILE, TOKENS_FILE, Tokens, exposure_warning
from misi_bench.eval_plugins.human.server import MAX_BODY, HumanApp, make_server
from misi_bench.eval_plugins.human.session import load_questions

TOKEN, ADMIN = "p-token-for-tests", "a-token-for-tests"


class Running:
    """A served app on a free port; ``request`` speaks raw HTTP so that any header can be sent."""

    def __init__(self, data_dir, out, read_timeout: float = 3.0) -> None:
        self.questions = load_questions(data_dir, "tiny")
        self.app = HumanApp(data_dir, self.questions, "tiny", out, tokens=Tokens(TOKEN, ADMIN))
        self.server = make_server(self.app, port=0)
        self.server.RequestHandlerClass.timeout = read_timeout
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: dict | None = None,
        token: str | None = TOKEN,
        length: str | None = "auto",
        wait: float = 10.0,
    ) -> tuple[int, dict, bytes]:
        head = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", "Connection: close"]
        if token is not None:
            head.append(f"X-Misi-Token: {token}")
        if length == "auto" and body is not None:
            length = str(len(body))
        if length not in (None, "auto"):
            head.append(f"Content-Length: {length}")
        head += [f"{k}: {v}" for k, v in (headers or {}).items()]
        raw = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + (body or b"")
        with socket.create_connection(("127.0.0.1", self.port), timeout=wait) as sock:
            sock.sendall(raw)
            sock.shutdown(socket.SHUT_WR)  # a short body ends here
            chunks = []
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        data = b"".join(chunks)
        header_text, _, payload = data.partition(b"\r\n\r\n")
        lines = header_text.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        fields = {k.lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])}
        return status, fields, payload

    def post(self, path: str, obj: dict, token: str = TOKEN) -> tuple[int, dict]:
        status, _, payload = self.request("POST", path, json.dumps(obj).encode(), token=token)
        return status, json.loads(payload)


def test_every_api_route_needs_the_token(running):
    assert running.request("GET", "/", token=None)[0] == 200  # the static page holds no data
    for method, path in (
        ("GET", "/api/config"),
        ("GET", f"/api/image?id={running.questions[0].id}&k=0"),
        ("GET", "/api/results?participant=p"),
        ("POST", "/api/start"),
        ("POST", "/api/answer"),
        ("POST", "/api/parse"),
    ):
        body = b"{}" if method == "POST" else None
        for token in (None, "", "wrong", TOKEN + "x"):
            status, _, payload = running.request(method, path, body, token=token)
            assert status == 401, (path, token)
            assert "?token=" in json.loads(payload)["error"]
    status, _, payload = running.request("GET", f"/api/config?token={TOKEN}", token=None)
    assert status == 200 and json.loads(payload)["role"] == "participant"
    assert json.loads(running.request("GET", "/api/config", token=ADMIN)[2])["role"] == "admin"


def test_bodies_are_bounded(running):
    start = time.monotonic()
    cases = [
        ("-1", b"{}", 400),
        ("abc", b"{}", 400),
        ("99999999999999999999", b"{}", 400),
        (None, b"", 411),
        (str(MAX_BODY + 1), b"{}", 413),
        (str(200 * 1024 * 1024), b"{}", 413),
        ("100", b'{"participant": "x"}', 400),  # shorter than it says
    ]
    for length, body, expected in cases:
        status, _, payload = running.request("POST", "/api/start", body, length=length)
        assert status == expected, (length, payload)
        assert json.loads(payload)["error"]
    chunked = running.request(
        "POST", "/api/start", b"0\r\n\r\n", length=None, headers={"Transfer-Encoding": "chunked"}
    )
    assert chunked[0] == 411
    assert time.monotonic() - start < 5  # refused at once: nothing waits for 200 MB
    # a client that stalls in the middle of a body is dropped after the read timeout
    with socket.create_connection(("127.0.0.1", running.port), timeout=10) as sock:
        sock.sendall(
            f"POST /api/start HTTP/1.1\r\nX-Misi-Token: {TOKEN}\r\nContent-Length: 50\r\n\r\n{{".encode()
        )
        t0 = time.monotonic()
        assert sock.recv(1024) == b""  # closed, no answer, once the read timeout (3 s) passed
        assert 2.5 < time.monotonic() - t0 < 8
    assert running.request("GET", "/api/config")[0] == 200  # and the app still serves


def _start(running, name: str, key: str | None = None, token: str = TOKEN):
    return running.post("/api/start", {"participant": name, "key": key}, token=token)


def test_times_must_be_finite_and_not_negative(running):
    status, state = _start(running, "timer")
    key, qid = state["key"], state["question"]["id"]
    for seconds in ("1e999", "-1e999", "-0.5", '"12"', "true", "NaN", "Infinity"):
        raw = f'{{"participant": "timer", "key": "{key}", "id": "{qid}", "prediction": "", "seconds": {seconds}}}'
        status, _, payload = running.request("POST", "/api/answer", raw.encode())
        assert status == 400, (seconds, payload)
        assert "seconds" in json.loads(payload)["error"] or "number" in json.loads(payload)["error"]
    assert not (running.app.out / "timer.jsonl").exists()  # nothing stored
    status, state = running.post(
        "/api/answer",
        {"participant": "timer", "key": key, "id": qid, "prediction": "", "seconds": 0},
    )
    assert status == 200 and state["answered"] == 1


def test_an_infinite_time_on_file_does_not_blank_the_results(data_dir, tmp_path):
    """A predictions file written before the check (``"seconds": Infinity``) still gives a results
    page in strict JSON, with that time shown as unknown."""
    out = tmp_path / "out"
    out.mkdir()
    questions = load_questions(data_dir, "tiny")
    lines = [
        json.dumps({"id": q.id, "prediction": "", "task": q.task, "seconds": math.inf})
        for q in questions
    ]
    (out / "old.jsonl").write_text("\n".join(lines) + "\n")
    app = Running(data_dir, out)
    try:
        status, _, payload = app.request("GET", "/api/results?participant=old", token=ADMIN)
        assert status == 200
        results = json.loads(payload, parse_constant=lambda c: pytest.fail(f"non-JSON {c}"))
        assert [item["seconds"] for item in results["items"]] == [None] * len(questions)
    finally:
        app.close()


def test_gold_and_other_participants_only_for_the_administrator(running, data_dir):
    gold = gold_by_id(data_dir, ("tiny",))
    status, alice = _start(running, "alice")
    key = alice["key"]
    # another browser that types alice's name cannot take over her session or read it
    assert _start(running, "alice")[0] == 403
    assert _start(running, "alice", "guess")[0] == 403
    assert (
        running.post(
            "/api/answer", {"participant": "alice", "id": alice["question"]["id"], "prediction": ""}
        )[0]
        == 403
    )
    assert running.request("GET", "/api/results?participant=alice&key=guess")[0] == 403
    # her own key resumes her session
    assert _start(running, "alice", key)[1]["key"] == key
    state = alice
    while not state["done"]:
        qid = state["question"]["id"]
        status, state = running.post(
            "/api/answer",
            {"participant": "alice", "key": key, "id": qid, "prediction": "", "seconds": 1},
        )
        assert status == 200, state
    status, _, payload = running.request("GET", f"/api/results?participant=alice&key={key}")
    assert status == 200
    mine = json.loads(payload)
    assert not mine["gold"] and all(
        set(item) == {"id", "task", "prediction", "seconds"} for item in mine["items"]
    )
    # a throwaway participant who finishes learns no gold answer either
    status, _, payload = running.request("GET", "/api/results?participant=alice", token=ADMIN)
    admin = json.loads(payload)
    assert status == 200 and admin["gold"]
    assert {item["id"]: item["answer"] for item in admin["items"]} == gold
    # the administrator sees a session in progress too
    status, bob = _start(running, "bob")
    status, _, payload = running.request("GET", "/api/results?participant=bob", token=ADMIN)
    assert status == 200 and json.loads(payload)["answered"] == 0
    assert running.request("GET", f"/api/results?participant=bob&key={bob['key']}")[0] == 403


def test_tokens_and_keys_survive_a_restart_privately(data_dir, tmp_path):
    out = tmp_path / "out"
    first = Tokens.load_or_new(out)
    assert Tokens.load_or_new(out) == first != Tokens.load_or_new(out, renew=True)
    app = Running(data_dir, out)
    try:
        key = _start(app, "carol")[1]["key"]
    finally:
        app.close()
    app = Running(data_dir, out)
    try:
        assert _start(app, "carol", key)[0] == 200 and _start(app, "carol")[0] == 403
    finally:
        app.close()
    for name in (TOKENS_FILE, KEYS_FILE):
        assert stat.S_IMODE((out / name).stat().st_mode) == 0o600, name


def test_answer_form_is_checked(running):
    by_task = {q.task: q for q in reversed(running.questions)}
    translation = by_task["translation"]
    status, parse = running.post("/api/parse", {"id": translation.id, "text": "roll x 30"})
    assert status == 200 and "not a translation answer" in parse["problem"]
    assert (
        running.post("/api/parse", {"id": translation.id, "text": "move x 3"})[1]["problem"] is None
    )
    key = _start(running, "former")[1]["key"]
    status, body = running.post(
        "/api/answer",
        {"participant": "former", "key": key, "id": translation.id, "prediction": "roll x 30"},
    )
    assert status == 422 and "move x D or move y D" in body["error"]
    docking = by_task["docking"]
    status, body = running.post(
        "/api/answer",
        {"participant": "former", "key": key, "id": docking.id, "prediction": "move x 14"},
    )
    assert status == 422 and "2 commands" in body["error"]
    choice = by_task["interaction_location"]
    status, body = running.post(
        "/api/answer", {"participant": "former", "key": key, "id": choice.id, "prediction": "E"}
    )
    assert status == 422 and "choose one of the options" in body["error"]
    assert not (running.app.out / "former.jsonl").exists()


@pytest.mark.parametrize(
    ("host", "exposed"),
    [
        ("127.0.0.1", False),
        ("localhost", False),
        ("::1", False),
        ("0.0.0.0", True),
        ("10.1.2.3", True),
    ],
)
def test_host_warning_names_what_is_exposed(host, exposed):
    warning = exposure_warning(host, 7860)
    assert (warning is not None) == exposed
    if exposed:
        assert "gold answers" in warning and "participant link" in warning and host in warning


# ------------------------------------------------------------------------------------------
# Fuzz: any request, any header value, any body
# ------------------------------------------------------------------------------------------

_ALLOWED = {200, 400, 401, 403, 404, 409, 411, 413, 422}
_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=80),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)
_fields = st.fixed_dictionaries(
    {},
    optional={
        "participant": st.one_of(st.sampled_from(["fuzz", "../x", "a" * 70, ""]), _values),
        "key": _values,
        "id": _values,
        "prediction": st.one_of(st.sampled_from(["roll x 30", "move x 3", "A", "No"]), _values),
        "seconds": _values,
        "text": _values,
    },
)
_bodies = st.one_of(
    _fields.map(lambda d: json.dumps(d, allow_nan=True).encode()),
    st.binary(max_size=300),
    st.just(b"[1, 2]"),
    st.just(b'{"a": ' * 50 + b"1" + b"}" * 50),
)


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    method=st.sampled_from(["GET", "POST", "HEAD"]),
    path=st.one_of(
        st.sampled_from(
            [
                "/",
                "/api/config",
                "/api/start",
                "/api/answer",
                "/api/parse",
                "/api/results?participant=fuzz",
                "/api/results?participant=fuzz&key=x",
                "/api/image?id=x&k=0",
                "/api/image?k=-1",
                "/api/nothing",
                "/../etc/passwd",
                "/api/config?" + "&".join(f"a{i}=1" for i in range(30)),
            ]
        ),
        st.text(alphabet="/abcdi?=&%.-_k0123", min_size=1, max_size=40).map(lambda t: "/" + t),
    ),
    length=st.one_of(
        st.just("auto"), st.none(), st.sampled_from(["-1", "0", "x", " 5", "1e3", "999999999"])
    ),
    token=st.sampled_from([TOKEN, TOKEN, None, "bad"]),
    body=_bodies,
)
def test_fuzz_request_handler(running_fuzz, method, path, length, token, body):
    app = running_fuzz
    t0 = time.monotonic()
    status, fields, payload = app.request(
        method, path, body if method == "POST" else None, token=token, length=length, wait=8
    )
    assert time.monotonic() - t0 < 8
    assert status in _ALLOWED, (status, payload[:300])
    if method != "HEAD" and fields.get("content-type", "").startswith("application/json"):
        data = json.loads(payload, parse_constant=lambda c: pytest.fail(f"non-JSON {c}"))
        assert "answer" not in json.dumps(data).replace('"answer_format"', "") or status != 200
        if status == 200 and token == TOKEN and isinstance(data, dict) and "items" in data:
            assert not data["gold"]


@pytest.fixture()
def running_fuzz(data_dir, tmp_path):
    app = Running(data_dir, tmp_path / "fuzz", read_timeout=1.0)
    try:
        yield app
        assert app.request("GET", "/api/config")[0] == 200  # still up after every case
    finally:
        app.close()
