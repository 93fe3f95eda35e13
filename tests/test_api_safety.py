"""``misi-bench eval``: secrets, bounded replies, defaults shared with the harness files,
``--limit``, clear 404 / refused / offline / Ctrl-C messages, against the PROTOCOL DOUBLE of an
OpenAI-compatible endpoint (:mod:`misi_bench.eval_plugins.api.testing_server`, real sockets on
127.0.0.1; a double, not a model) on the shared real sample build."""

from __future__ import annotations

import base64
import json
import os
import shlex
import signal
import socket
import subprocess
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from misi_bench.builder.core import generation
from misi_bench.builder.core.registry import TASK_NAMES
from misi_bench.eval_plugins.api.redact import REDACTED, Redactor, public_url, url_secrets
from misi_bench.eval_plugins.api.testing_server import Double, DoubleServer

import misi_bench
from cli_support import CLI, eval_args

KEY = "sk-echoed-secret-4711"
PASSWORD = "pa55-word-0815"
QUERY_KEY = "q-secret-value-42"


def _count(data_dir, configs) -> int:
    return sum(
        pq.ParquetFile(shard).metadata.num_rows
        for c in configs
        for shard in (Path(data_dir) / c).glob("test-*.parquet")
    )


def _eval_args(url, data_dir, out, *extra):
    return eval_args(
        url, data_dir, out, "--backoff", "0.05", "--max-backoff", "0.1", "--no-progress", *extra
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _secret_forms() -> list[str]:
    forms = [KEY, PASSWORD, QUERY_KEY, base64.b64encode(f"proxyuser:{PASSWORD}".encode()).decode()]
    return forms + [f[: len(f) // 2 + 2] for f in forms]  # and no long piece of one


def test_redactor_replaces_every_form_and_a_cut_tail():
    url = f"https://proxyuser:{PASSWORD}@api.example.com/v1?api-key={QUERY_KEY}"
    assert public_url(url) == "https://***@api.example.com/v1?api-key=***"
    red = Redactor.for_endpoint(KEY, url)
    assert set(url_secrets(url)) >= {"proxyuser", PASSWORD, QUERY_KEY}
    text = f'Bearer {KEY} "{json.dumps(KEY)}" %s' % PASSWORD.replace("-", "%2D")
    assert KEY not in red.text(text) and REDACTED in red.text(text)
    cut = f"authorization: Bearer {KEY[:9]}"  # a quote cut in the middle of the key
    assert red.text(cut, cut=True) == f"authorization: Bearer {REDACTED}"
    assert red.text(cut) == cut  # uncut texts keep ordinary words that start like a secret
    assert red.obj({"a": [f"x{KEY}y", 3]}) == {"a": [f"x{REDACTED}y", 3]}


@pytest.mark.parametrize("status", [400, 401])
def test_an_endpoint_that_echoes_the_request_never_gets_the_key_stored_or_printed(
    data_dir, tmp_path, status
):
    """The double's error body echoes the request line (with the URL's query key) and every
    header (the Bearer key, or the Basic authorization made of the URL's userinfo); with ``-v``
    nothing the run writes or prints holds a secret, while the echo did reach the client."""
    double = Double(behaviour="echo", echo_status=status)
    with DoubleServer(double) as srv:
        for userinfo in ("", f"proxyuser:{PASSWORD}@"):
            url = srv.url.replace("http://", f"http://{userinfo}") + f"?api-key={QUERY_KEY}"
            out = tmp_path / f"run-{bool(userinfo)}"
            env = {**os.environ, "ECHO_KEY": KEY, "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
            args = _eval_args(url, data_dir, out, "--configs", "translation", "--api-key-env")
            proc = subprocess.run(
                [*CLI, "-v", *args, "ECHO_KEY"], env=env, capture_output=True, text=True
            )
            assert proc.returncode == (3 if status == 400 else 2), proc.stderr[-2000:]
            written = {p.name: p.read_text() for p in out.iterdir() if p.is_file()}
            everything = [proc.stdout, proc.stderr, *written.values()]
            for form in _secret_forms():
                assert not any(form in text for text in everything), form
            seen = written["failures.jsonl"] + proc.stderr
            # the echo came back, and only the provider's fields of it are kept (issue 49):
            # the echoed request line and headers are never stored or printed
            assert "message: rejected" in seen
            stored = written["failures.jsonl"].lower()
            assert "http/1.1" not in stored and "authorization" not in stored
            report = json.loads(written["report.json"])
            assert report["base_url"].endswith("/v1?api-key=***")
            assert ("***@" in report["base_url"]) == bool(userinfo)
    assert double.state.faults["echo"] >= 2


def test_endless_reply_is_cut_at_the_cap_and_the_run_goes_on(data_dir, tmp_path):
    n = _count(data_dir, ["translation", "zooming"])
    double = Double(behaviour="endless")
    with DoubleServer(double) as srv:
        start = time.perf_counter()
        rc = misi_bench.main(
            _eval_args(
                srv.url,
                data_dir,
                tmp_path / "run",
                "--configs",
                "translation",
                "zooming",
                "--max-reply-bytes",
                "200000",
            )
        )
        wall = time.perf_counter() - start
    assert rc == 3 and wall < 30
    assert double.state.requests == n  # given up at once: an endless reply is not paid twice
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert len(report["failed"]) == n == len(report["missing"])
    assert all("over the reply cap of 200,000 bytes" in f["error"] for f in report["failed"])


def test_reply_that_trickles_in_is_stopped_by_the_whole_attempt_timeout(data_dir, tmp_path):
    n = _count(data_dir, ["translation"])
    double = Double(behaviour="drip")  # a complete reply would take ~30 s, one byte per 0.1 s
    with DoubleServer(double) as srv:
        start = time.perf_counter()
        rc = misi_bench.main(
            _eval_args(
                srv.url,
                data_dir,
                tmp_path / "run",
                "--configs",
                "translation",
                "--timeout",
                "0.8",
                "--max-retries",
                "1",
                "--concurrency",
                str(n),
            )
        )
        wall = time.perf_counter() - start
    assert rc == 3 and double.state.requests == 2 * n
    assert wall < 8  # two attempts of 0.8 s each, in parallel; not 2 x 30 s
    failures = (tmp_path / "run" / "failures.jsonl").read_text().splitlines()
    assert len(failures) == n and all("no complete reply within 0.8 s" in f for f in failures)


def test_malformed_200_is_paid_a_bounded_number_of_times_and_counted(data_dir, tmp_path):
    n = _count(data_dir, ["translation"])
    double = Double(behaviour="malformed")
    with DoubleServer(double) as srv:
        rc = misi_bench.main(
            _eval_args(srv.url, data_dir, tmp_path / "run", "--configs", "translation")
        )
        assert rc == 3 and double.state.requests == 2 * n  # first try + --max-malformed 1
        rc = misi_bench.main(
            _eval_args(
                srv.url,
                data_dir,
                tmp_path / "run",
                "--configs",
                "translation",
                "--max-malformed",
                "0",
            )
        )
        assert rc == 3 and double.state.requests == 3 * n
    failures = [
        json.loads(line) for line in (tmp_path / "run" / "failures.jsonl").read_text().splitlines()
    ]
    assert [f["malformed"] for f in failures] == [2] * n + [1] * n
    assert all("not a chat completion" in f["error"] for f in failures)
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert report["session"]["retried_errors"] == {"malformed": n}


def test_defaults_are_the_harness_files_and_limit_asks_the_first_n(data_dir, tmp_path):
    """Without flags a request carries temperature and max_tokens from builder/core/generation,
    the values the generated lmms-eval and lm-eval templates and the VLMEvalKit example use;
    ``server`` leaves them out; ``--limit 1`` asks the first question of each config."""
    here = Path(misi_bench.__file__).parent
    lmms = yaml.safe_load(
        (here / "eval_plugins/lmms_eval/tasks/misi/_default_template_yaml")
        .read_text()
        .replace("!function", "")
    )["generation_kwargs"]
    lm = yaml.safe_load(
        (here / "eval_plugins/lm_eval/tasks/misi/_template_yaml")
        .read_text()
        .replace("!function", "")
    )["generation_kwargs"]
    assert lmms["temperature"] == lm["temperature"] == generation.TEMPERATURE == 0
    assert lmms["max_new_tokens"] == lm["max_gen_toks"] == generation.MAX_TOKENS
    docs = (here / "docs/harnesses.md").read_text()
    assert (
        f'"temperature": {generation.TEMPERATURE:g}, "max_tokens": {generation.MAX_TOKENS}' in docs
    )
    configs = ["zooming", "docking"]
    first = {
        c: pq.read_table(sorted((Path(data_dir) / c).glob("test-*.parquet"))[0]).column("id")[0]
        for c in configs
    }
    double = Double(record=True)
    with DoubleServer(double) as srv:
        assert (
            misi_bench.main(
                _eval_args(srv.url, data_dir, tmp_path / "a", "--configs", *configs, "--limit", "1")
            )
            == 0
        )
        assert set(double.state.bodies) == {str(v) for v in first.values()}
        for body in double.state.bodies.values():
            assert body["temperature"] == 0 and body["max_tokens"] == generation.MAX_TOKENS
        report = json.loads((tmp_path / "a" / "report.json").read_text())
        assert report["selection"]["questions"] == 2 and report["selection"]["limit"] == 1
        double.state.bodies.clear()
        args = ["--temperature", "server", "--max-tokens", "server", "--limit", "1"]
        assert misi_bench.main(_eval_args(srv.url, data_dir, tmp_path / "b", *args)) == 0
        assert len(double.state.bodies) == len(TASK_NAMES)  # one question per task
        assert all(
            "temperature" not in b and "max_tokens" not in b for b in double.state.bodies.values()
        )
    assert misi_bench.main(_eval_args(srv.url, data_dir, tmp_path / "c", "--limit", "0")) == 2


def test_404_hints_at_v1_and_refused_connection_is_one_line(data_dir, tmp_path, capsys):
    with DoubleServer(Double()) as srv:
        bare = srv.url.removesuffix("/v1")
        rc = misi_bench.main(_eval_args(bare, data_dir, tmp_path / "a", "--configs", "zooming"))
        out, err = capsys.readouterr()
        assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1
        assert "HTTP 404" in err and f"try --base-url {bare}/v1" in err
        assert srv.state.requests == 0  # the double counts only /v1/chat/completions
    url = f"http://127.0.0.1:{_free_port()}/v1"
    start = time.perf_counter()
    proc = subprocess.run([*CLI, *_eval_args(url, data_dir, tmp_path / "b")], capture_output=True)
    out, err = proc.stdout.decode(), proc.stderr.decode()  # the log's lines included
    assert proc.returncode == 2 and out == "" and time.perf_counter() - start < 30
    assert err.startswith(f"misi-bench: error: cannot connect to {url}") and err.count("\n") == 1
    assert "gave up after 3 attempts" in err  # FIRST_CONNECT_RETRIES, not --max-retries 6


def test_offline_without_dataset_is_one_line_soon(tmp_path):
    """No --dataset, no network (the Hub endpoint refuses connections), not in offline mode:
    one line naming the repo and the way out, within a few seconds."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "MISI_BENCH_REPO")
    }
    env["HF_ENDPOINT"] = f"http://127.0.0.1:{_free_port()}"
    start = time.perf_counter()
    proc = subprocess.run(
        [*CLI, "eval", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--no-progress"],
        env=env,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 2 and time.perf_counter() - start < 30
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot reach the Hugging Face Hub" in lines[0], proc.stderr
    assert "misi-bench/misi-bench" in lines[0] and "--dataset" in lines[0]


def test_ctrl_c_says_what_is_saved_and_the_command_that_resumes(data_dir, tmp_path):
    """Ctrl-C mid-run: exit 130, the saved count and a resume command; the resumed run asks
    exactly the unsaved questions, once each. Deterministic under load: the first double answers
    two questions and holds every later request open, so the run cannot finish before the
    signal and exactly two answers are saved; the resumed run talks to a second double, so its
    request counts are its own (no snapshot of the first double racing its last requests)."""
    configs = ["translation", "rotation", "zooming"]
    n = _count(data_dir, configs)
    assert n > 2
    out = tmp_path / "run"
    preds = out / "predictions.jsonl"
    with DoubleServer(Double(hold_after=2)) as srv:
        args = _eval_args(srv.url, data_dir, out, "--configs", *configs, "--concurrency", "2")
        proc = subprocess.Popen(
            [*CLI, *args, "--temperature", "0.5"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 600  # a bound on a hung child, not a synchronisation
        while not (preds.exists() and preds.read_text().count("\n") >= 2):
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr[-2000:]
    kept = {json.loads(x)["id"] for x in preds.read_text().splitlines()}
    assert len(kept) == 2 and stdout == ""
    assert f"interrupted: 2 of {n} answers are saved in {out}" in stderr
    command = stderr.split("resume with:\n", 1)[1].strip().splitlines()[0]
    words = shlex.split(command)
    assert words[:2] == ["misi-bench", "eval"] and "--temperature" in words
    at = words.index("--base-url") + 1
    assert words[at] == srv.url
    with DoubleServer(Double()) as again:
        words[at] = again.url
        resumed = subprocess.run([*CLI, *words[1:]], capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    answered = [json.loads(x)["id"] for x in preds.read_text().splitlines()]
    assert len(answered) == len(set(answered)) == n  # the same folder, nothing asked twice
    # a saved answer is never asked again; every other question (in flight or never sent) once
    assert dict(again.state.per_question) == {q: 1 for q in answered if q not in kept}
