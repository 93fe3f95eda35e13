"""``misi-bench eval`` and ``serve-mock`` against hostile input (issue 39), over real sockets
on 127.0.0.1 with the PROTOCOL DOUBLE of an endpoint (:mod:`...api.testing_server`, not a
model) and the shared real sample build: a key echoed in encoded forms, secrets in
``--extra-body``, ``--api-key`` typed on the command line, a reply of 200,000 nested ``[``, a
request body of any size."""

from __future__ import annotations

import base64
import json
import os
import socket
import subprocess
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from misi_bench.eval_plugins.api.redact import REDACTED, Redactor, body_secrets, redact_body
from misi_bench.eval_plugins.api.testing_server import Double, DoubleServer

from cli_support import CLI, eval_args

KEY = "sk-proj-Hostile0Key1For2Tests3"
BODY_TOKEN = "vendor-token-0815-secret"


def _env(**extra) -> dict:
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", ""), **extra}
    env.pop("MISI_BENCH_DEBUG", None)
    env.pop("OPENAI_API_KEY", None)
    return env


def _eval(url, data_dir, out, *extra, env=None, verbose=False):
    args = [*(["-v"] if verbose else []), *eval_args(url, data_dir, out)]
    args += ["--backoff", "0.05", "--max-backoff", "0.1", "--no-progress"]
    return subprocess.run(
        [*CLI, *args, *extra], env=env or _env(), capture_output=True, text=True, timeout=300
    )


def _encoded_forms(secret: str) -> dict[str, str]:
    """How endpoints and proxies have been seen to echo a key."""
    return {
        "plain": secret,
        "upper case": secret.upper(),
        "json \\u escapes": "".join(f"\\u{ord(c):04x}" for c in secret),
        "upper \\u escapes": "".join(f"\\u{ord(c):04X}" for c in secret),
        "url-encoded": "".join(f"%{ord(c):02X}" for c in secret),
        "half url-encoded": "".join(f"%{ord(c):02x}" if i % 2 else c for i, c in enumerate(secret)),
        "base64 of Bearer": base64.b64encode(f"Bearer {secret}".encode()).decode(),
        "base64 offset 0": base64.b64encode(secret.encode()).decode(),
        "base64 offset 1": base64.b64encode(f"x{secret}y".encode()).decode(),
        "base64 offset 2": base64.b64encode(f"xy{secret}".encode()).decode(),
        "url-safe base64 of json": base64.urlsafe_b64encode(json.dumps({"k": secret}).encode())
        .decode()
        .rstrip("="),
        "hex": secret.encode().hex(),
        "html references": "".join(f"&#{ord(c)};" for c in secret),
    }


def _leaks(text: str, secret: str) -> list[str]:
    """The encoded forms of ``secret`` (or a long piece of one) found in ``text``."""
    found = []
    for name, form in _encoded_forms(secret).items():
        core = form[len(form) // 4 : len(form) * 3 // 4]  # the middle half: offsets aside
        if len(core) >= 6 and core.lower() in text.lower() and name not in ("hex",):
            found.append(name)
        elif name == "hex" and core in text.lower():
            found.append(name)
    return found


def test_redactor_catches_every_encoded_form():
    red = Redactor([KEY])
    for name, form in _encoded_forms(KEY).items():
        text = f'{{"error": "bad key", "echo": "prefix {form} suffix"}}'
        clean = red.text(text)
        assert REDACTED in clean, name
        assert not _leaks(clean, KEY), (name, clean)
        assert clean.startswith('{"error": "bad key", "echo": "prefix ') and "suffix" in clean
    ordinary = "the key was wrong; base64 is fine; SK-PROJ appears alone"
    assert red.text(ordinary) == ordinary
    deep: list = [KEY]
    for _ in range(100_000):
        deep = [deep]
    cleaned = red.obj(deep)  # no RecursionError
    for _ in range(100_000):
        cleaned = cleaned[0]
    assert cleaned == [REDACTED]


def test_extra_body_secrets_never_reach_the_run_folder(data_dir, tmp_path):
    """Secrets in ``--extra-body`` (by field name, and a key-shaped value anywhere) are sent
    to the endpoint but stored as ``[redacted]`` in run.json and report.json, and an endpoint
    that echoes the request cannot put them in failures.jsonl or on the screen."""
    extra = {
        "top_p": 1,
        "vendor": {"api_token": BODY_TOKEN, "region": "eu"},
        "tags": [KEY],
    }
    assert set(body_secrets(extra)) == {BODY_TOKEN, KEY}
    assert redact_body(extra)["vendor"] == {"api_token": REDACTED, "region": "eu"}
    # an echo of the headers and the request line shows nothing; a recorded body reaches it
    double = Double(record=True)
    with DoubleServer(double) as srv:
        out = tmp_path / "run"
        proc = _eval(srv.url, data_dir, out, "--configs", "translation", "--limit", "2",
                     "--extra-body", json.dumps(extra))  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-2000:]
        sent = next(iter(double.state.bodies.values()))
        assert sent["vendor"]["api_token"] == BODY_TOKEN and sent["tags"] == [KEY]
    written = {p.name: p.read_text() for p in out.iterdir() if p.is_file()}
    for text in [proc.stdout, proc.stderr, *written.values()]:
        assert BODY_TOKEN not in text and KEY not in text
    run = json.loads(written["run.json"])
    assert run["settings"]["extra_body"]["vendor"] == {"api_token": REDACTED, "region": "eu"}
    report = json.loads(written["report.json"])
    assert report["settings"]["extra_body"]["tags"] == [REDACTED]
    assert report["settings"]["extra_body"]["top_p"] == 1
    # a rotated token is the same run: it resumes, nothing is asked again
    other = {**extra, "vendor": {"api_token": "another-token-4711", "region": "eu"}}
    with DoubleServer(Double()) as srv:
        again = _eval(srv.url, data_dir, out, "--configs", "translation", "--limit", "2",
                      "--extra-body", json.dumps(other))  # fmt: skip
        assert again.returncode == 0, again.stderr[-2000:]
        assert srv.state.requests == 0


def test_an_echo_of_an_encoded_key_is_redacted_end_to_end(data_dir, tmp_path):
    """The endpoint echoes the request's headers base64-encoded and \\u-escaped (some
    gateways do): nothing the run writes or prints holds the key in any form."""
    double = Double(behaviour="echo", echo_status=400)
    original = double._misbehave

    async def encoded_echo(head: bytes, writer) -> None:
        double.state.requests += 1
        text = head.decode("latin-1")
        echo = {
            "error": {
                "message": "rejected",
                "b64": base64.b64encode(head).decode(),
                "escaped": "".join(f"\\u{ord(c):04x}" for c in text),
                "upper": text.upper(),
            }
        }
        await double._send(writer, 400, json.dumps(echo).encode())

    double._misbehave = encoded_echo
    with DoubleServer(double) as srv:
        out = tmp_path / "run"
        proc = _eval(srv.url, data_dir, out, "--configs", "translation", "--limit", "2",
                     "--api-key-env", "HOSTILE_KEY", env=_env(HOSTILE_KEY=KEY), verbose=True)  # fmt: skip
        assert proc.returncode == 3, proc.stderr[-2000:]
    assert double.state.requests >= 2 and original is not None
    failures = (out / "failures.jsonl").read_text()
    # the echo came back; only its provider fields are kept (issue 49), never the echoed headers
    assert "message: rejected" in failures and "b64" not in failures
    written = [p.read_text() for p in out.iterdir() if p.is_file()]
    for text in [proc.stdout, proc.stderr, *written]:
        assert not _leaks(text, KEY), _leaks(text, KEY)


@pytest.mark.parametrize("typed", ["--api-key", "--api-key="])
def test_a_key_typed_as_an_option_is_refused_without_being_printed(typed, tmp_path):
    """``--api-key sk-...`` was taken as an abbreviation of ``--api-key-env`` and the error
    printed the key; now no option is abbreviated and the error hides the value."""
    words = [typed + KEY] if typed.endswith("=") else [typed, KEY]
    proc = subprocess.run(
        [*CLI, "eval", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", *words],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert KEY not in proc.stdout + proc.stderr and "Hostile0Key" not in proc.stderr
    assert "unrecognized arguments" in proc.stderr and "--api-key-env NAME" in proc.stderr
    # abbreviations are refused everywhere, not only for secrets
    proc = subprocess.run(
        [*CLI, "score", "--data", str(tmp_path), "--pred", "x.jsonl"],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "required: --dataset, --predictions" in proc.stderr


def _first_ids(data_dir, config: str, n: int) -> list[str]:
    shard = sorted((Path(data_dir) / config).glob("test-*.parquet"))[0]
    return [str(i) for i in pq.read_table(shard, columns=["id"]).column("id").to_pylist()[:n]]


def test_a_reply_nested_200000_deep_fails_its_question_not_the_run(data_dir, tmp_path):
    """One question's reply is 200,000 ``[``: it is a malformed reply (retried, then given
    up), every other question is answered and scored, and a resume does the same."""
    bad = _first_ids(data_dir, "translation", 1)[0]
    out = tmp_path / "run"
    for attempt in range(2):  # the first run and a resume
        double = Double(behaviour="nested", behaviour_ids=frozenset({bad}))
        with DoubleServer(double) as srv:
            proc = _eval(srv.url, data_dir, out, "--configs", "translation", "zooming")
        assert proc.returncode == 3, proc.stderr[-3000:]
        assert "RecursionError" not in proc.stderr and "Traceback" not in proc.stderr
        report = json.loads((out / "report.json").read_text())
        assert [f["id"] for f in report["failed"]] == [bad]
        assert "not a chat completion" in report["failed"][0]["error"]
        assert report["missing"] == [bad]
        assert double.state.faults["nested"] == 2  # one retry of a malformed reply (default)
        asked = double.state.requests - double.state.faults["nested"]
        assert asked == (report["selection"]["questions"] - 1 if attempt == 0 else 0)


def test_serve_mock_refuses_a_body_over_its_cap_unread(data_dir):
    """A client that announces a 10 GB body (and one that sends 300 KB over a 256 KB cap) is
    answered 413 at once, before anything is read; normal requests go on being answered."""
    with DoubleServer(Double(max_body=256 * 1024)) as srv:
        for length, send in ((10 * 1024**3, b""), (300 * 1024, b"x" * 300 * 1024)):
            start = time.monotonic()
            with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as sock:
                head = (
                    "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                    f"content-length: {length}\r\n\r\n"
                ).encode()
                sock.sendall(head)
                try:
                    sock.sendall(send)
                except OSError:
                    pass  # the server may close before the whole body went out
                reply = sock.recv(65536)
            assert reply.startswith(b"HTTP/1.1 413"), reply[:200]
            assert f"request body of {length} bytes; at most 262144".encode() in reply
            assert time.monotonic() - start < 5
        assert srv.state.faults["too-large"] == 2
        body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "A?"}]})
        with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as sock:
            sock.sendall(
                (
                    "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                    f"content-length: {len(body)}\r\n\r\n{body}"
                ).encode()
            )
            assert sock.recv(65536).startswith(b"HTTP/1.1 200")


def test_a_run_folder_line_nested_too_deep_is_skipped_on_resume(tmp_path, caplog):
    """A predictions.jsonl line of 200,000 ``[`` (a file from elsewhere) is a skipped line, not
    a RecursionError on every resume; ``--extra-body`` nested that deep is one error line."""
    from misi_bench.builder.core.errors import MisiError
    from misi_bench.eval_plugins.api.cli import _extra_body
    from misi_bench.eval_plugins.api.store import iter_jsonl

    path = tmp_path / "predictions.jsonl"
    good = json.dumps({"id": "q-1", "prediction": "A"})
    path.write_text(good + "\n" + "[" * 200_000 + "\n" + good.replace("q-1", "q-2") + "\n")
    assert [item["id"] for item in iter_jsonl(path)] == ["q-1", "q-2"]
    assert "line 2: not JSON, skipped" in caplog.text
    with pytest.raises(MisiError, match="--extra-body: not JSON"):
        _extra_body("[" * 200_000)
