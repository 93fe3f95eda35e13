"""Issue 49, item 4: secrets in wrapped and re-encoded forms. The redactor normalises a text
before it searches it (wrapped lines joined, invisible characters dropped, URL-encoding undone to
a fixed point, hex and base64 runs read), so every form the probes used is caught by one
mechanism; ``eval`` keeps only a provider's parsed error fields; the human app never logs a token
however it is spelled."""

from __future__ import annotations

import base64
import json
import logging
import os
import subprocess

import pytest
from misi_bench.builder.core.secrets import REDACTED, Redactor, base64_pieces, normalised
from misi_bench.eval_plugins.api.testing_server import Double, DoubleServer

from test_api_hostile import CLI, _env, eval_args
from test_human_security import ADMIN, TOKEN

KEY = "sk-proj-Wr4pp3dK3yF0rTheRound3Pr0bes"


def _wrapped(text: str, width: int, sep: str = "\n") -> str:
    return sep.join(text[i : i + width] for i in range(0, len(text), width))


def _pct(text: str) -> str:
    return "".join(f"%{ord(c):02X}" for c in text)


def _forms(secret: str) -> dict[str, str]:
    """The spellings the round-three probes used (and the older ones, wrapped)."""
    echo = json.dumps({"authorization": f"Bearer {secret}", "padding": "x" * 90}).encode()
    hexed = secret.encode().hex()
    pairs = [hexed[i : i + 2] for i in range(0, len(hexed), 2)]
    half = len(secret) // 2
    return {
        "MIME base64 (76 columns, CRLF)": _wrapped(base64.b64encode(echo).decode(), 76, "\r\n"),
        "openssl base64 (64 columns)": _wrapped(base64.b64encode(echo).decode(), 64),
        "base64 wrapped inside a JSON string": json.dumps(
            _wrapped(base64.b64encode(echo).decode(), 64)
        )[1:-1],
        "split across two lines": f"{secret[:half]}\n{secret[half:]}",
        "split across two indented lines": f"{secret[:half]}\r\n        {secret[half:]}",
        "percent-encoded twice": _pct(_pct(secret)),
        "percent-encoded three times": _pct(_pct(_pct(secret))),
        "hex with colons": ":".join(pairs),
        "hex with spaces": " ".join(pairs),
        "hex as 0x list": ", ".join(f"0x{p}" for p in pairs),
        "hex with dashes, upper case": "-".join(pairs).upper(),
        "hex wrapped": _wrapped(" ".join(pairs), 30),
        "zero-width characters inside": "\u200b".join(secret),
        "soft hyphens and a BOM": "\ufeff" + "\u00ad".join(secret[:10]) + secret[10:],
    }


def _leaks(text: str, secret: str) -> bool:
    """Whether ``text`` still holds ``secret`` in any spelling the normaliser undoes."""
    norm = normalised(text)
    return (
        secret.lower() in norm.lower()
        or secret.encode().hex() in norm.lower()
        or any(p in norm for p in base64_pieces(secret))
    )


@pytest.mark.parametrize("form", sorted(_forms(KEY)))
def test_every_wrapped_or_reencoded_form_is_redacted(form):
    spelled = _forms(KEY)[form]
    text = f'{{"error": "bad key", "echo": "before {spelled} after"}}'
    assert _leaks(text, KEY)  # the probe does hold the key
    clean = Redactor([KEY]).text(text)
    assert REDACTED in clean and not _leaks(clean, KEY), clean
    assert clean.startswith('{"error": "bad key", "echo": "before ') and "after" in clean


def test_ordinary_text_is_left_alone():
    red = Redactor([KEY])
    for text in (
        "the key was wrong; base64 is fine; SK-PROJ appears alone",
        "line one\nline two\r\n  indented: 12 34 56 78 and 0x1f",
        "%25 of %2541 and caf\u00e9\u200b",
    ):
        assert red.text(text) == text


def _error_body(secret: str, forms: list[str]):
    """An endpoint whose every 400 echoes the key in the next form, in the provider's message
    and in fields of its own."""
    calls = {"n": 0}

    def body() -> bytes:
        form = forms[calls["n"] % len(forms)]
        calls["n"] += 1
        return json.dumps(
            {
                "error": {
                    "message": f"invalid key {form}",
                    "type": "invalid_request_error",
                    "code": "invalid_api_key",
                    "echo": {"headers": f"authorization: Bearer {secret}"},
                    "trace": "y" * 5000,
                }
            }
        ).encode()

    return body


def test_eval_keeps_only_the_providers_error_fields_redacted(data_dir, tmp_path):
    forms = list(_forms(KEY).values())
    double = Double(behaviour="echo", echo_status=400)
    body = _error_body(KEY, forms)

    async def echo(head: bytes, writer) -> None:
        double.state.requests += 1
        await double._send(writer, 400, body())

    double._misbehave = echo
    with DoubleServer(double) as srv:
        out = tmp_path / "run"
        args = [*eval_args(srv.url, data_dir, out), "--configs", "translation", "--limit", "4"]
        args += ["--backoff", "0.05", "--max-backoff", "0.1", "--no-progress"]
        args += ["--api-key-env", "ROUND3_KEY"]
        proc = subprocess.run(
            [*CLI, "-v", *args], env=_env(ROUND3_KEY=KEY), capture_output=True, text=True,
            timeout=300,
        )  # fmt: skip
    assert proc.returncode == 3, proc.stderr[-2000:]
    failures = (out / "failures.jsonl").read_text()
    assert "type: invalid_request_error; code: invalid_api_key; message: invalid key" in failures
    assert "echo" not in failures and "trace" not in failures and "yyyy" not in failures
    for path in out.iterdir():
        if path.is_file():
            assert not _leaks(path.read_text(), KEY), path.name
    assert not _leaks(proc.stdout + proc.stderr, KEY)
    assert REDACTED in failures


def test_the_human_app_never_logs_a_token_however_spelled(running, caplog):
    caplog.set_level(logging.DEBUG, logger="misi_bench")
    status, state = running.post("/api/start", {"participant": "spelled"})
    key = state["key"]
    paths = [
        f"/api/results?participant=x&%74oken={ADMIN}",  # %74 is "t"
        f"/api/results?participant=x&%2574oken={ADMIN}",  # twice
        f"/api/results?participant={TOKEN}",  # inside a name
        f"/api/image/{ADMIN}?token=wrong",  # inside an id (404)
        f"/api/{_pct(ADMIN)}/x",  # inside a path, percent-encoded
        f"/api/results?participant=spelled&k%65y={key}",
        f"/api/results?participant=a{TOKEN[:6]}%E2%80%8B{TOKEN[6:]}",  # a zero-width space
    ]
    for path in paths:  # answered or refused: each request line is logged
        running.request("GET", path, token=None)
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "refused GET" in text
    for secret in (ADMIN, TOKEN, key):
        assert not _leaks(text, secret), secret


def test_the_human_log_hider_is_one_mechanism():
    from misi_bench.eval_plugins.human.access import public_path

    assert public_path("/x?a=1&token=abc;key=def#k") == "/x?a=1&token=***;key=***#k"
    assert public_path("/x?%74oken=abc&b=2") == "/x?%74oken=***&b=2"
    assert public_path("/x?%2574oken=abc") == "/x?%2574oken=***"
    assert public_path("/x?access_token=abc") == "/x?access_token=***"
    assert os.sep  # (the module reads no environment)
