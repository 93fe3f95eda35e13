"""The human-baseline app's JSON routes without a browser (the fast lane's test of the server;
``test_human_app.py`` drives the page in Chromium in the slow lane): a session on the small real
build answers every tiny question, is refused the answers before the end and a repeated answer,
and its file is what ``misi-bench score`` reads. Every call carries the run's participant token
(``test_human_security.py`` checks what happens without it)."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request

import pytest
from misi_bench.builder.scoring import read_predictions
from misi_bench.eval_plugins.common import gold_by_id
from misi_bench.eval_plugins.human.access import Tokens
from misi_bench.eval_plugins.human.server import HumanApp, make_server
from misi_bench.eval_plugins.human.session import load_questions

TOKEN = "participant-token-of-this-test"


@pytest.fixture()
def app_url(data_dir, tmp_path):
    tokens = Tokens(TOKEN, "admin-token-of-this-test")
    app = HumanApp(
        data_dir, load_questions(data_dir, "tiny"), "tiny", tmp_path / "out", tokens=tokens
    )
    server = make_server(app, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", tmp_path / "out"
    finally:
        server.shutdown()
        server.server_close()


def _call(url: str, body: dict | None = None, token: str = TOKEN) -> tuple[int, bytes]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url, data=data, headers={"Content-Type": "application/json", "X-Misi-Token": token}
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_session_over_the_json_routes(app_url, data_dir):
    base, out = app_url
    gold = gold_by_id(data_dir, splits=("tiny",))
    status, page = _call(base + "/")
    assert status == 200 and b"<html" in page.lower()
    config = json.loads(_call(base + "/api/config")[1])
    assert config["split"] == "tiny" and config["total"] == len(gold) > 0

    state = json.loads(_call(base + "/api/start", {"participant": "tester"})[1])
    key = state["key"]
    first = state["question"]
    assert state["answered"] == 0 and not state["done"] and "answer" not in first
    status, png = _call(f"{base}/api/image?id={first['id']}&k=0")
    assert status == 200 and png.startswith(b"\x89PNG")
    assert _call(f"{base}/api/results?participant=tester&key={key}")[0] == 403  # not before the end
    assert _call(base + "/api/start", {"participant": "../x"})[0] == 400  # the name is a file name

    answered = []
    while not state["done"]:
        qid = state["question"]["id"]
        read = json.loads(
            _call(base + "/api/parse", {"id": qid, "text": f"Answer: {gold[qid]}"})[1]
        )
        assert read["read_as"]
        status, body = _call(
            base + "/api/answer",
            {
                "participant": "tester",
                "key": key,
                "id": qid,
                "prediction": gold[qid],
                "seconds": 1.5,
            },
        )
        assert status == 200, body
        state = json.loads(body)
        answered.append(qid)
    assert sorted(answered) == sorted(gold) and state["answered"] == len(gold)
    assert (
        _call(
            base + "/api/answer",
            {
                "participant": "tester",
                "key": key,
                "id": answered[0],
                "prediction": gold[answered[0]],
            },
        )[0]
        == 409
    )

    results = json.loads(_call(f"{base}/api/results?participant=tester&key={key}")[1])
    assert len(results["items"]) == len(gold) and not results["gold"]
    assert all("answer" not in item and "score" not in item for item in results["items"])
    assert all(row["score"] == 1.0 for row in results["report"]["tasks"].values())
    admin = json.loads(
        _call(f"{base}/api/results?participant=tester", token="admin-token-of-this-test")[1]
    )
    assert admin["gold"] and all(item["score"] == 1.0 for item in admin["items"])
    assert {item["id"]: item["answer"] for item in admin["items"]} == gold
    lines = [json.loads(line) for line in (out / "tester.jsonl").read_text().splitlines()]
    assert [r["id"] for r in lines] == answered and {r["seconds"] for r in lines} == {1.5}
    assert read_predictions(out / "tester.jsonl").predictions == {
        r["id"]: r["prediction"] for r in lines
    }
