"""``misi-bench eval`` against a PROTOCOL DOUBLE of an OpenAI-compatible endpoint (real sockets on
127.0.0.1, :mod:`misi_bench.eval_plugins.api.testing_server`), on the shared real sample build."""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from misi_bench.builder.core.registry import TASK_NAMES
from misi_bench.builder.scoring import score_records
from misi_bench.eval_plugins.api.client import RetryPolicy, parse_retry_after
from misi_bench.eval_plugins.api.store import RunSettings, RunStore
from misi_bench.eval_plugins.api.testing_server import (
    FAULT_KINDS,
    Double,
    DoubleServer,
    FaultPlan,
    example_answer,
)

import misi_bench
from cli_support import eval_args

KEY = "sk-double-secret-123"


def _rows(data_dir, split="test", columns=("id", "task", "answer", "metadata", "options")):
    rows = []
    for task in TASK_NAMES:
        for shard in sorted((Path(data_dir) / task).glob(f"{split}-*.parquet")):
            rows.extend(pq.read_table(shard, columns=list(columns)).to_pylist())
    return rows


def _answers(data_dir) -> dict[str, str]:
    """Gold for two thirds of the questions, the question's own example answer for the rest."""
    out = {}
    for row in _rows(data_dir, columns=("id", "answer", "question")):
        out[row["id"]] = (
            row["answer"] if zlib.crc32(row["id"].encode()) % 3 else example_answer(row["question"])
        )
    return out


def _eval(url, data_dir, out, *extra, model="double") -> int:
    backoff = ("--backoff", "0.05", "--max-backoff", "0.2")
    return misi_bench.main(eval_args(url, data_dir, out, *backoff, *extra, model=model))


def _predictions(run_dir) -> list[dict]:
    return [
        json.loads(line) for line in (Path(run_dir) / "predictions.jsonl").read_text().splitlines()
    ]


def _score_cli(data_dir, preds, tmp_path) -> dict:
    out = tmp_path / "score.json"
    assert (
        misi_bench.main(
            [
                "score",
                "--dataset",
                str(data_dir),
                "--predictions",
                str(preds),
                "--json-out",
                str(out),
            ]
        )
        == 0
    )
    return json.loads(out.read_text())


@pytest.mark.slow
def test_full_run_matches_the_scorer(data_dir, tmp_path, monkeypatch, capsys):
    answers = _answers(data_dir)
    monkeypatch.setenv("MY_ENDPOINT_KEY", KEY)
    double = Double(answers=answers, api_key=KEY, record=True)
    with DoubleServer(double) as srv:
        rc = _eval(
            srv.url,
            data_dir,
            tmp_path / "run",
            "--api-key-env",
            "MY_ENDPOINT_KEY",
            "--concurrency",
            "6",
            "--max-tokens",
            "64",
            "--temperature",
            "0",
            "--system",
            "Answer briefly.",
            "--extra-body",
            '{"top_p": 0.5, "seed": 7}',
            "--progress",
        )
    assert rc == 0
    printed = capsys.readouterr()
    assert "paper_average" in printed.out and "average_headline_tasks" in printed.out
    assert "failed=0" in printed.err  # the progress bar shows error counts
    rows = _rows(data_dir)
    preds = _predictions(tmp_path / "run")
    assert sorted(p["id"] for p in preds) == sorted(r["id"] for r in rows)  # each question once
    assert all(p["prediction"] == answers[p["id"]] for p in preds)
    build = json.loads((Path(data_dir) / "manifest.json").read_text())["config_hash"]
    assert {p["config_hash"] for p in preds} == {build}  # each answer names its build
    assert all(double.state.per_question[r["id"]] == 1 for r in rows)
    # the request: system turn, then one user turn with the row's PNGs in order and its text last
    full = {r["id"]: r for r in _rows(data_dir, columns=("id", "question", "images"))}
    for qid, body in double.state.bodies.items():
        assert body["model"] == "double" and body["max_tokens"] == 64 and body["temperature"] == 0
        assert body["top_p"] == 0.5 and body["seed"] == 7
        assert body["messages"][0] == {"role": "system", "content": "Answer briefly."}
        user = body["messages"][1]
        assert user["role"] == "user" and len(body["messages"]) == 2
        *images, text = user["content"]
        assert text == {"type": "text", "text": full[qid]["question"]}
        assert [
            base64.b64decode(p["image_url"]["url"].removeprefix("data:image/png;base64,"))
            for p in images
        ] == [img["bytes"] for img in full[qid]["images"]]
    # the report is the one scorer's, and `misi-bench score` on the file gives the same numbers
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    direct = score_records(rows, {p["id"]: p["prediction"] for p in preds})
    assert (
        report["report"]
        == direct["report"]
        == _score_cli(data_dir, tmp_path / "run" / "predictions.jsonl", tmp_path)["report"]
    )
    assert report["per_item"] == direct["per_item"] and report["missing"] == []
    # per_item.jsonl: how each answer was read, with the build's config hash (issue 30 item 7)
    manifest = json.loads((Path(data_dir) / "manifest.json").read_text())
    assert report["config_hash"] == manifest["config_hash"]
    lines = (tmp_path / "run" / "per_item.jsonl").read_text().splitlines()
    items = [json.loads(line) for line in lines]
    assert [i["id"] for i in items] == [i["id"] for i in direct["per_item"]]
    assert [i["read_as"] for i in items] == [i["parsed"] for i in direct["per_item"]]
    assert [i["score"] for i in items] == [i["metrics"]["score"] for i in direct["per_item"]]
    assert {i["config_hash"] for i in items} == {manifest["config_hash"]}
    gold = [i for i in direct["per_item"] if answers[i["id"]] == i["answer"]]
    assert gold and all(i["metrics"]["score"] == 1.0 for i in gold)
    assert 0 < report["report"]["average_headline_tasks"] < 1
    usage = [p["usage"] for p in preds]
    assert report["tokens"]["completion_tokens"] == sum(u["completion_tokens"] for u in usage) > 0
    assert report["session"]["answered"] == len(rows) and report["session"]["questions_per_s"] > 0
    # the key never reaches the disk
    for path in (tmp_path / "run").iterdir():
        assert KEY not in path.read_text(errors="replace"), path


def test_run_key_follows_settings(data_dir, tmp_path):
    with DoubleServer(Double()) as srv:
        args = [
            "eval",
            "--base-url",
            srv.url,
            "--model",
            "m/x",
            "--dataset",
            str(data_dir),
            "--configs",
            "zooming",
            "--split",
            "tiny",
            "--runs-root",
            str(tmp_path),
        ]
        assert misi_bench.main(args) == 0
        assert misi_bench.main(args) == 0  # identical settings: same folder, nothing asked again
        assert srv.state.requests == 2
        assert misi_bench.main([*args, "--temperature", "0.7"]) == 0
    dirs = sorted(p.name for p in tmp_path.iterdir())
    assert len(dirs) == 2 and all(d.startswith("m_x-") for d in dirs)
    base = dict(model="m", dataset="d", revision="r")
    assert (
        RunSettings(**base).key()
        == RunSettings(**base).key()
        != RunSettings(**base, max_tokens=5).key()
    )
    with pytest.raises(misi_bench.MisiError, match="other settings"):
        with RunStore(tmp_path / dirs[0], RunSettings(**base)):
            pass


def test_every_fault_is_survived(data_dir, tmp_path):
    answers = _answers(data_dir)
    ids = [r["id"] for r in _rows(data_dir)]
    doomed = {ids[3], ids[-2]}
    plan = FaultPlan(
        cycle=len(FAULT_KINDS) + 2,
        always_500=frozenset(doomed),
        retry_after_s=0.4,
        hang_s=1.2,
        slow_s=0.2,
    )
    double = Double(answers=answers, plan=plan, record=True)
    with DoubleServer(double) as srv:
        rc = _eval(
            srv.url,
            data_dir,
            tmp_path / "run",
            "--concurrency",
            "8",
            "--timeout",
            "0.6",
            "--max-retries",
            "3",
            "--no-progress",
        )
    assert rc == 3  # some questions failed; the run itself finished
    assert set(double.state.faults) == set(FAULT_KINDS)
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert {f["id"] for f in report["failed"]} == doomed == set(report["missing"])
    scored = _score_cli(data_dir, tmp_path / "run" / "predictions.jsonl", tmp_path)
    assert scored["report"] == report["report"] and set(scored["missing"]) == doomed
    assert {p["id"]: p["prediction"] for p in _predictions(tmp_path / "run")} == {
        i: answers[i] for i in ids if i not in doomed
    }
    assert all(double.state.per_question[i] == 4 for i in doomed)  # 1 + max_retries
    # 429: the retry waited at least Retry-After; slow replies (0.2 s) stayed within the timeout
    rate_limited = [i for i in ids if i not in doomed and plan.fault(i, 1) == "429"]
    assert rate_limited
    for qid in rate_limited:
        first, second = double.state.arrivals[qid][:2]
        assert second - first >= plan.retry_after_s
    for qid in [i for i in ids if plan.fault(i, 1) == "slow" and i not in doomed]:
        assert double.state.per_question[qid] == 1
    assert report["session"]["retried_errors"]["429"] == double.state.faults["429"]
    # a rerun once the endpoint recovered asks only the failed questions
    recovered = Double(answers=answers)
    with DoubleServer(recovered) as srv:
        assert _eval(srv.url, data_dir, tmp_path / "run", "--no-progress") == 0
    assert set(recovered.state.per_question) == doomed
    assert json.loads((tmp_path / "run" / "report.json").read_text())["missing"] == []


def test_kill_9_then_resume_equals_uninterrupted_run(data_dir, tmp_path):
    answers = _answers(data_dir)
    n = len(_rows(data_dir))
    cmd = [
        sys.executable,
        "-c",
        "import sys, misi_bench; sys.exit(misi_bench.main())",
        "eval",
        "--model",
        "double",
        "--dataset",
        str(data_dir),
        "--concurrency",
        "4",
        "--no-progress",
    ]
    env = dict(os.environ)
    double = Double(answers=answers, delay_s=0.15)
    killed = tmp_path / "killed"
    with DoubleServer(double) as srv:
        proc = subprocess.Popen(
            [*cmd, "--base-url", srv.url, "--out", str(killed)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        preds = killed / "predictions.jsonl"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if preds.exists() and preds.read_text().count("\n") >= n // 3:
                break
            time.sleep(0.02)
        assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        proc.stderr.close()
        before = {p["id"] for p in _predictions(killed)}
        asked_before = dict(double.state.per_question)
        assert n // 3 <= len(before) < n
        assert len(set(asked_before) - before) <= 4  # lost: at most the requests in flight
        resumed = subprocess.run(
            [*cmd, "--base-url", srv.url, "--out", str(killed)], env=env, capture_output=True
        )
        assert resumed.returncode == 0, resumed.stderr.decode()[-2000:]
        for qid in before:  # no answered question asked again
            assert double.state.per_question[qid] == asked_before[qid] == 1
    with DoubleServer(Double(answers=answers)) as srv:
        assert _eval(srv.url, data_dir, tmp_path / "straight", "--no-progress") == 0
    after, straight = _predictions(killed), _predictions(tmp_path / "straight")
    assert len(after) == len({p["id"] for p in after}) == n  # no duplicate answers
    assert {p["id"]: p["prediction"] for p in after} == {p["id"]: p["prediction"] for p in straight}
    rep_k = json.loads((killed / "report.json").read_text())
    rep_s = json.loads((tmp_path / "straight" / "report.json").read_text())
    assert rep_k["report"] == rep_s["report"] and rep_k["run_key"] == rep_s["run_key"]


def test_concurrency_overlaps_requests(data_dir, tmp_path):
    delay = 0.4
    double = Double(delay_s=delay)
    with DoubleServer(double) as srv:
        start = time.perf_counter()
        assert (
            _eval(
                srv.url,
                data_dir,
                tmp_path / "c8",
                "--configs",
                "residue_ligand",
                "rotation",
                "--concurrency",
                "8",
                "--no-progress",
            )
            == 0
        )
        wall = time.perf_counter() - start
        n = double.state.requests
        asked = sum(
            r["task"] in ("residue_ligand", "rotation") for r in _rows(data_dir, columns=("task",))
        )
        assert n == asked > 8 and double.state.max_in_flight == 8  # more questions than workers
        assert wall < 0.5 * n * delay  # sequential would take n x delay; ideal is 3 waves = 1.2 s
        one = Double(delay_s=0.05)
    with DoubleServer(one) as srv:
        assert (
            _eval(
                srv.url,
                data_dir,
                tmp_path / "c1",
                "--configs",
                "translation",
                "--concurrency",
                "1",
                "--no-progress",
            )
            == 0
        )
    assert one.state.max_in_flight == 1 and one.state.requests == 4


def test_fatal_error_stops_the_run(data_dir, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("WRONG_KEY", "sk-wrong-key-456")
    double = Double(api_key=KEY)
    with DoubleServer(double) as srv:
        rc = _eval(
            srv.url,
            data_dir,
            tmp_path / "run",
            "--api-key-env",
            "WRONG_KEY",
            "--concurrency",
            "2",
            "--no-progress",
        )
        assert (
            double.state.requests <= 2
        )  # the requests in flight when the first 401 came; none retried
    err = capsys.readouterr().err
    assert rc == 2 and "401" in err and "sk-wrong-key-456" not in err
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert report["fatal_error"] and len(report["missing"]) == len(_rows(data_dir))
    assert (
        misi_bench.main(
            [
                "eval",
                "--base-url",
                "http://127.0.0.1:9/v1",
                "--model",
                "m",
                "--dataset",
                str(data_dir),
                "--api-key-env",
                "NOT_SET_ANYWHERE_X",
            ]
        )
        == 2
    )
    assert (
        misi_bench.main(
            [
                "eval",
                "--base-url",
                "http://127.0.0.1:9/v1",
                "--model",
                "m",
                "--dataset",
                str(data_dir),
                "--extra-body",
                "[1]",
            ]
        )
        == 2
    )
    assert "--extra-body" in capsys.readouterr().err
    # nothing listens: the run stops after the first question's retries instead of trying them all
    start = time.perf_counter()
    assert (
        _eval(
            "http://127.0.0.1:9/v1",
            data_dir,
            tmp_path / "down",
            "--concurrency",
            "1",
            "--max-retries",
            "1",
            "--no-progress",
        )
        == 2
    )
    assert time.perf_counter() - start < 20 and "ConnectError" in capsys.readouterr().err
    assert len(json.loads((tmp_path / "down" / "report.json").read_text())["failed"]) == 1
    assert (
        misi_bench.main(
            ["eval", "--base-url", "localhost:8000/v1", "--model", "m", "--dataset", str(data_dir)]
        )
        == 2
    )


def test_torn_line_is_cut_on_reopen(tmp_path):
    settings = RunSettings(model="m", dataset="d", revision="r")
    with RunStore(tmp_path, settings) as store:
        store.add_answer({"id": "a", "prediction": "A"})
    with open(tmp_path / "predictions.jsonl", "ab") as fh:
        fh.write(b'{"id": "b", "predic')  # a crash in the middle of a line
    with RunStore(tmp_path, settings) as store:
        assert set(store.answers) == {"a"}
        store.add_answer({"id": "b", "prediction": "B"})
    assert [
        json.loads(x)["id"] for x in (tmp_path / "predictions.jsonl").read_text().splitlines()
    ] == ["a", "b"]


def test_retry_waits():
    import random

    rng = random.Random(0)
    policy = RetryPolicy(backoff_s=1.0, max_backoff_s=8.0)
    for attempt, base in ((1, 1.0), (2, 2.0), (3, 4.0), (6, 8.0)):
        waits = [policy.delay(attempt, None, rng) for _ in range(200)]
        assert base / 2 <= min(waits) and max(waits) <= base and len(set(waits)) > 100
    assert all(3.0 <= policy.delay(1, 3.0, rng) <= 3.25 for _ in range(50))
    assert (
        parse_retry_after("2.5") == 2.5
        and parse_retry_after("soon") is None
        and parse_retry_after(None) is None
    )
    assert (
        50
        < parse_retry_after(
            time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 60))
        )
        <= 60
    )


def test_request_body_is_the_json_of_the_request(data_dir):
    from misi_bench.eval_plugins.api.data import QuestionSource, build_messages, request_body

    source = QuestionSource(str(data_dir))
    assert source.local and source.revision.startswith("manifest:")
    wanted = {r["id"] for r in _rows(data_dir)[::9]}
    questions = list(source.questions(list(TASK_NAMES), "test", wanted))
    assert {q.id for q in questions} == wanted and all(q.images for q in questions)
    system = 'Say "A" ✓ @misi-image-0@ \\n'
    for q in questions:
        body = request_body(
            q, "m", system=system, max_tokens=9, extra_body={"max_tokens": 5, "top_k": 1}
        )
        want = {"model": "m", "messages": build_messages(q, system), "max_tokens": 5, "top_k": 1}
        assert json.loads(body) == want


def test_hub_reader_matches_local_reader(data_dir):
    """A Hub repo is read from its revision's snapshot folder in the Hub cache, through the same
    checked shard reader as a local folder (issue 49; before, through ``datasets``, unchecked);
    the snapshot here is the folder itself (the real download: ``test_release``)."""
    from misi_bench.eval_plugins.api.data import QuestionSource

    local = QuestionSource(str(data_dir))
    hub = QuestionSource(str(data_dir))
    hub.local, hub.revision = False, "main"
    hub._hub["tiny"] = Path(data_dir)  # the split's snapshot, as local_copy would give it
    configs = ["rotation", "docking"]
    assert hub.records(configs, "tiny") == local.records(configs, "tiny")
    ids = {r["id"] for r in local.records(configs, "tiny")}
    assert list(hub.questions(configs, "tiny", ids)) == list(local.questions(configs, "tiny", ids))


def test_broken_row_fails_alone(data_dir, tmp_path):
    import pyarrow as pa

    shard = next((Path(data_dir) / "rotation").glob("test-*.parquet"))
    table = pq.read_table(shard)
    rows = table.to_pylist()
    rows[1]["images"][0] = {"bytes": b"not an image", "path": None}
    (tmp_path / "data" / "rotation").mkdir(parents=True)
    pq.write_table(
        pa.Table.from_pylist(rows, schema=table.schema), tmp_path / "data" / "rotation" / shard.name
    )
    with DoubleServer(Double()) as srv:
        assert (
            _eval(
                srv.url,
                tmp_path / "data",
                tmp_path / "run",
                "--configs",
                "rotation",
                "--no-progress",
            )
            == 3
        )
        assert srv.state.requests == len(rows) - 1
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert [f["id"] for f in report["failed"]] == report["missing"] == [rows[1]["id"]]
    assert "bad row" in report["failed"][0]["error"]


def test_each_distinct_image_is_encoded_once_per_run(data_dir, monkeypatch):
    """The run's ImageCache: questions that show the same view share one bytes object, each
    distinct image is base64-encoded once, the body is the same as without the cache, and the
    cache stays under its byte bound (dropping the least recently used images)."""
    from misi_bench.eval_plugins.api import data

    source = data.QuestionSource(str(data_dir))
    configs = list(TASK_NAMES)
    ids = {str(r["id"]) for r in source.records(configs, "test")}
    cache = data.ImageCache()
    questions = list(source.questions(configs, "test", ids, cache))
    pngs = [p for q in questions for p in q.images]
    distinct = {p for p in pngs}
    assert len(distinct) < len(pngs)  # views are shared between questions
    assert len({id(p) for p in pngs}) == len(distinct)  # ... and held once
    encoded = []
    monkeypatch.setattr(
        data, "_b64encode", lambda b, _real=data._b64encode: encoded.append(1) or _real(b)
    )
    for q in questions:
        assert data.request_body(q, "m", images=cache) == data.request_body(q, "m")
    assert len(encoded) == len(distinct) + len(
        pngs
    )  # once per image with the cache, every time without
    small = data.ImageCache(max_bytes=3 * max(len(p) for p in pngs))
    for p in pngs:
        assert base64.b64decode(small.b64(p)) == p
        assert small._bytes <= small.max_bytes + len(p) * 4 // 3 + 4
    assert 1 <= len(small) < len(distinct)


def test_cached_body_is_the_json_of_the_request_without_the_cache(data_dir):
    """With the run's ImageCache (small, so it also evicts) the body is byte for byte
    ``json.dumps`` of the request built without any splicing, and parses back to it."""
    from misi_bench.eval_plugins.api import data

    source = data.QuestionSource(str(data_dir))
    configs = list(TASK_NAMES)
    ids = {str(r["id"]) for r in source.records(configs, "test")}
    questions = list(source.questions(configs, "test", ids, data.ImageCache()))
    biggest = max(len(p) for q in questions for p in q.images)
    cache = data.ImageCache(max_bytes=16 * biggest)
    system = 'Say "A" ✓ \\u00e9 @misi-image-0@ \n'
    for q in questions:
        body = data.request_body(q, "m", system=system, temperature=0.0, images=cache)
        old = {"model": "m", "messages": data.build_messages(q, system), "temperature": 0.0}
        assert json.loads(body) == old
        assert body == json.dumps(old, ensure_ascii=False, separators=(",", ":")).encode()
    assert cache.misses > len(cache) and cache.hits > 0  # entries were dropped and reused


def test_image_cache_never_merges_images_with_the_same_tail(data_dir):
    """The cache's key hashes a PNG's length and last bytes only; images that agree there but
    differ earlier still get their own entries and their own base64."""
    from misi_bench.eval_plugins.api import data

    row = _rows(data_dir, columns=("id", "images"))[0]
    png = row["images"][0]["bytes"]
    assert len(png) > 2 * data._KEY_TAIL
    other = png[:100] + bytes([png[100] ^ 1]) + png[101:]
    cache = data.ImageCache()
    assert cache.intern(png) is png and cache.intern(other) is other
    assert cache.intern(bytes(bytearray(png))) is png and len(cache) == 2
    assert base64.b64decode(cache.b64(other)) == other != png == base64.b64decode(cache.b64(png))


def test_image_cache_interns_views_without_merging_or_copying_twice(data_dir):
    """Given views into a page (as the page reader passes them), the cache copies an image
    only when it does not hold that content yet: an equal view gets the bytes object it
    already holds, a view that differs only before the hashed tail gets its own entry."""
    from misi_bench.eval_plugins.api import data

    row = _rows(data_dir, columns=("id", "images"))[0]
    png = row["images"][0]["bytes"]
    page = bytearray(b"head" + png + png[:100] + bytes([png[100] ^ 1]) + png[101:])
    first = memoryview(page)[4 : 4 + len(png)]
    other = memoryview(page)[4 + len(png) :]
    cache = data.ImageCache()
    held = cache.intern(first)
    assert type(held) is bytes and held == png and cache.misses == 1
    assert cache.intern(png) is held and cache.intern(memoryview(bytes(png))) is held
    assert cache.intern(memoryview(page)[4 : 4 + len(png)]) is held and cache.hits == 3
    changed = cache.intern(other)
    assert changed is not held and changed == bytes(other) != png and len(cache) == 2
    assert base64.b64decode(cache.b64(first)) == png
    assert base64.b64decode(cache.b64(other)) == bytes(other)
    page[4] ^= 1  # the cache holds its own copies, not views into the page
    assert held == png and cache.intern(png) is held


def test_uncompressed_chunk_images_are_views_into_the_mapped_shard(data_dir, tmp_path):
    """An uncompressed image chunk is decoded where it lies in the mapped shard: its images
    are views into the map (no copy), equal to what pyarrow reads."""
    import mmap

    from misi_bench.eval_plugins.api import pages

    shard = next((Path(data_dir) / "rotation").glob("test-*.parquet"))
    out = tmp_path / "rotation" / shard.name
    _rewrite(shard, out, compression="none")
    pf = pq.ParquetFile(out)
    with open(out, "rb") as fh:
        mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    values, rows = pages.row_group_images(mapped, pf, 0, pages.image_column(pf))
    assert all(v.obj is mapped and v.readonly for v in values)
    want = _pyarrow_images(out, 0)
    assert [[bytes(values[i]) for i in r] for r in rows] == [
        [img["bytes"] for img in w] for w in want
    ]


def test_fast_and_standard_base64_encoders_give_the_same_bytes(monkeypatch):
    """``pybase64`` (the ``eval-fast`` extra, installed in CI) and the standard library's
    fallback encode a real PNG to the same bytes, and each is picked when it should be."""
    import pybase64
    from misi_bench.eval_plugins.api import data

    png = (
        Path(misi_bench.__file__).parent / "eval_plugins/human/screenshots/question.png"
    ).read_bytes()
    want = base64.b64encode(png)
    monkeypatch.setattr(data, "_ENCODER", [])
    assert data._b64encode(png) == want and data._ENCODER[0] is pybase64.b64encode
    monkeypatch.setattr(data, "_ENCODER", [])
    monkeypatch.setitem(sys.modules, "pybase64", None)  # as if the extra were not installed
    assert data._b64encode(png) == want and data._ENCODER[0] is base64.b64encode


def _pyarrow_images(shard, group):
    return pq.ParquetFile(shard).read_row_group(group, columns=["images"]).column(0).to_pylist()


@pytest.mark.parametrize("source", ["map", "file"])
def test_page_reader_reads_every_row_group_as_pyarrow_does(data_dir, source):
    """The image column's own page reader gives, for every row group of every shard of a real
    build, the rows' images exactly as pyarrow decodes them, each distinct image once; whether
    it decodes the pages where they lie in the mapped shard (as the run does) or reads the
    column chunk from the open file."""
    import mmap

    from misi_bench.eval_plugins.api import pages

    shards = sorted(Path(data_dir).glob("*/*.parquet"))
    assert len(shards) >= 27
    shared = 0
    for shard in shards:
        pf = pq.ParquetFile(shard)
        column = pages.image_column(pf)
        assert column is not None
        with open(shard, "rb") as fh:
            if source == "map":
                fh = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            for group in range(pf.num_row_groups):
                values, rows = pages.row_group_images(fh, pf, group, column)
                want = _pyarrow_images(shard, group)
                assert [
                    [{"bytes": bytes(values[i]), "path": None} for i in r] for r in rows
                ] == want
                assert len({bytes(v) for v in values}) == len(values)  # each distinct image once
                shared += sum(len(r) for r in rows) - len({i for r in rows for i in r})
    assert shared > 0  # rows do share images through the dictionary


def _rewrite(shard, out, **kwargs):
    table = pq.read_table(shard)
    out.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, out, **{"dictionary_pagesize_limit": 1 << 30, **kwargs})
    return table


@pytest.mark.parametrize(
    "kwargs",
    [
        {"compression": "snappy", "data_page_version": "2.0"},
        {"compression": "none", "data_page_size": 64},
        {"compression": "zstd", "use_dictionary": False},
        {"compression": "zstd", "dictionary_pagesize_limit": 1},
    ],
    ids=["snappy-v2", "uncompressed-small-pages", "no-dictionary", "dictionary-fallback"],
)
def test_questions_are_the_same_whatever_the_shard_layout(data_dir, tmp_path, kwargs):
    """Other codecs, data page v2 and many small pages are read by the page reader; a chunk
    without a dictionary or one that fell back to plain values is read by pyarrow instead;
    either way the questions hold the images pyarrow reads."""
    from misi_bench.eval_plugins.api import data, pages

    shard = next((Path(data_dir) / "rotation_rotation").glob("test-*.parquet"))
    out = tmp_path / "data" / "rotation_rotation" / shard.name
    _rewrite(shard, out, **kwargs)
    pf = pq.ParquetFile(out)
    try:
        with open(out, "rb") as fh:
            pages.row_group_images(fh, pf, 0, pages.image_column(pf))
        paged = True
    except pages.Unsupported:
        paged = False
    assert paged == (
        kwargs.get("use_dictionary", True) and "dictionary_pagesize_limit" not in kwargs
    )
    assert pf.metadata.row_group(0).column(pages.image_column(pf)).compression == (
        kwargs["compression"].upper().replace("NONE", "UNCOMPRESSED")
    )
    local = data.QuestionSource(str(tmp_path / "data"))
    ids = {r["id"] for r in local.records(["rotation_rotation"], "test")}
    got = list(local.questions(["rotation_rotation"], "test", ids, data.ImageCache()))
    want = [
        (r["id"], r["question"], tuple(img["bytes"] for img in r["images"]))
        for r in pq.read_table(out).to_pylist()
    ]
    assert [(q.id, q.question, q.images) for q in got] == want
    assert len(got) == len(ids) and all(q.images and not q.error for q in got)


def test_null_image_fails_its_row_alone_on_the_page_reader(data_dir, tmp_path):
    """A row whose image entry is null (definition level of a null element) fails alone with a
    clear error; the other rows of its row group keep their images."""
    import pyarrow as pa
    from misi_bench.eval_plugins.api import data, pages

    shard = next((Path(data_dir) / "rotation").glob("test-*.parquet"))
    table = pq.read_table(shard)
    rows = table.to_pylist()
    rows[1]["images"][0] = None
    out = tmp_path / "data" / "rotation" / shard.name
    out.parent.mkdir(parents=True)
    pq.write_table(
        pa.Table.from_pylist(rows, schema=table.schema),
        out,
        compression="zstd",
        dictionary_pagesize_limit=1 << 30,
    )
    pf = pq.ParquetFile(out)
    with open(out, "rb") as fh:
        _, decoded = pages.row_group_images(fh, pf, 0, pages.image_column(pf))
    assert decoded[1][0] is None and None not in decoded[0]
    source = data.QuestionSource(str(tmp_path / "data"))
    got = list(source.questions(["rotation"], "test", {r["id"] for r in rows}))
    assert [q.id for q in got] == [r["id"] for r in rows]
    assert "neither bytes nor a path" in got[1].error and not got[1].images
    assert all(
        not q.error and len(q.images) == len(r["images"])
        for q, r in zip(got, rows)
        if q is not got[1]
    )


def test_rows_that_show_the_same_view_share_one_read(data_dir):
    """On the page reader each distinct image of a row group becomes one bytes object even
    without the run's cache, and the body built with the cache equals the one built without."""
    from misi_bench.eval_plugins.api import data

    source = data.QuestionSource(str(data_dir))
    ids = {r["id"] for r in source.records(["rotation"], "test")}
    questions = list(source.questions(["rotation"], "test", ids))
    pngs = [p for q in questions for p in q.images]
    assert len({id(p) for p in pngs}) == len(set(pngs)) < len(pngs)
    cache = data.ImageCache()
    for q in questions:
        assert data.request_body(q, "m", images=cache) == data.request_body(q, "m")


def test_page_reader_decodes_wide_indices_and_empty_rows(tmp_path):
    """Dictionary indices wider than a byte (300 distinct values), runs and bit-packed groups,
    rows with a null or an empty image list: decoded as pyarrow does (a decoder unit test on
    small byte strings, not images)."""
    import pyarrow as pa
    from misi_bench.builder.store.parquet import arrow_schema
    from misi_bench.eval_plugins.api import pages

    schema = arrow_schema()
    rows = []
    for k in range(700):
        n = 0 if k % 11 == 5 else 1 + (k * 7) % 5
        images = [{"bytes": b"v%d" % ((k + j * 350) % 300), "path": None} for j in range(n)]
        row = {name: None for name in schema.names}
        row.update(id=f"r{k}", images=None if k % 97 == 3 else images)
        rows.append(row)
    path = tmp_path / "t.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path, data_page_size=256)
    pf = pq.ParquetFile(path)
    with open(path, "rb") as fh:
        values, decoded = pages.row_group_images(fh, pf, 0, pages.image_column(pf))
    assert len(values) == 300
    want = pf.read_row_group(0, columns=["images"]).column(0).to_pylist()
    assert [[{"bytes": bytes(values[i]), "path": None} for i in r] for r in decoded] == [
        w or [] for w in want
    ]


def test_page_decode_that_disagrees_with_image_views_falls_back_to_pyarrow(data_dir, monkeypatch):
    """A row group whose decoded image counts differ from its rows' ``image_views`` (a layout
    the page reader misread) is read by pyarrow: the questions still hold every image."""
    from misi_bench.eval_plugins.api import data, pages

    real = pages.row_group_images

    def drops_an_image(fh, pf, group, column):
        values, rows = real(fh, pf, group, column)
        return values, [r[:-1] if k == 0 else r for k, r in enumerate(rows)]

    source = data.QuestionSource(str(data_dir))
    ids = {r["id"] for r in source.records(["rotation"], "test")}
    want = [(q.id, q.images) for q in source.questions(["rotation"], "test", ids)]
    monkeypatch.setattr(pages, "row_group_images", drops_an_image)
    got = [(q.id, q.images) for q in source.questions(["rotation"], "test", ids)]
    assert got == want and all(images for _, images in got)
