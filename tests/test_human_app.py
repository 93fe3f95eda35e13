"""The human-baseline app in a real browser (headless Chromium via Playwright) on a real small
build: answer questions through the page, close and resume (browser and server), finish, and
score the predictions file with ``misi-bench score``."""

from __future__ import annotations

import json
import subprocess
import sys
from urllib.parse import parse_qs, urlparse

import playwright  # noqa: F401  (a test dependency; a missing one must fail, not skip)
import pytest
from misi_bench.eval_plugins.common import gold_by_id  # noqa: E402
from misi_bench.eval_plugins.human.session import load_questions  # noqa: E402

from browser_support import browser, human_app  # noqa: E402

#: A real browser (headless Chromium driven by Playwright): the slow lane.
pytestmark = pytest.mark.slow

SPLIT = "tiny"


def _current_id(page) -> str:
    src = page.get_attribute("#images figure img >> nth=0", "src")
    return parse_qs(urlparse(src).query)["id"][0]


def _answer(page, gold: dict, skip: bool = False) -> str:
    """Answer the shown question through the page (right, or "I don't know"); return its id."""
    page.wait_for_function(
        "[...document.querySelectorAll('#images img')].every(i => i.complete && i.naturalWidth > 0)"
    )
    qid = _current_id(page)
    before = page.inner_text("#progress")
    if skip:
        page.click("#skip")
    elif page.is_visible("#options button"):
        page.click(f"#options button[data-letter={gold[qid]}]")
        assert (
            page.get_attribute(f"#options button[data-letter={gold[qid]}]", "aria-pressed")
            == "true"
        )
        page.click("#submit")
    else:
        page.fill("#answer", gold[qid])
        page.wait_for_function(
            "document.getElementById('readas').textContent.includes('reads this as')"
        )
        page.click("#submit")
    page.wait_for_function(
        "(b) => document.getElementById('done').hidden === false || "
        "document.getElementById('progress').textContent !== b",
        arg=before,
    )
    return qid


def test_answer_close_resume_finish_and_score(data_dir, tmp_path):
    questions = load_questions(data_dir, SPLIT)
    gold = gold_by_id(data_dir, (SPLIT,))
    out = tmp_path / "answers"
    answered = []
    with human_app(data_dir, out) as url, browser() as b:
        page = b.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(url)
        page.fill("#participant", "bad name!")
        page.click("#startbtn")
        page.wait_for_function("document.getElementById('starterr').textContent.length > 0")
        assert "participant name" in page.inner_text("#starterr")
        page.fill("#participant", "p1")
        page.click("#startbtn")
        page.wait_for_selector("#quiz:not([hidden])")
        assert page.inner_text("#progress").startswith(f"p1 · question 1 of {len(questions)}")
        first = questions[0]
        assert page.inner_text("#qtitle").startswith("T1 · translation")
        captions = page.locator("#images figcaption").all_inner_texts()
        assert captions == [f"Image {k + 1}: {v}" for k, v in enumerate(first.image_views)]
        assert page.inner_text("#qtext") == first.question
        # a paper question states its own answer form (the paper's), so the page adds none;
        # an explicit question gets the registry's form hint under the text box
        hint = "move x D or move y D"
        if first.profile == "paper":
            assert hint not in page.inner_text("#form")
        else:
            assert hint in page.inner_text("#form")
        # images are large, and the lightbox enlarges and zooms them
        assert page.eval_on_selector("#images img", "i => i.getBoundingClientRect().width") >= 380
        page.click("#images figure >> nth=1")
        assert (
            page.inner_text("#lbcap")
            == f"Image 2 of {len(first.image_views)}: {first.image_views[1]}"
        )
        width = page.eval_on_selector("#lbimg", "i => i.getBoundingClientRect().width")
        page.click("#lbin")
        assert page.eval_on_selector("#lbimg", "i => i.getBoundingClientRect().width") > width * 1.2
        page.keyboard.press("Escape")
        answered.append(_answer(page, gold))
        answered.append(
            _answer(page, gold, skip=True)
        )  # "I don't know": recorded as empty, scores 0
        answered.append(_answer(page, gold))
        # no answers before the end
        assert page.request.get(f"{url}api/results?participant=p1").status == 403
        assert gold[answered[0]] not in page.content()
        again = page.request.post(
            f"{url}api/answer", data={"participant": "p1", "id": answered[0], "prediction": "x"}
        )
        assert again.status == 409  # an answer is final
        page.close()
    lines = [json.loads(x) for x in (out / "p1.jsonl").read_text().splitlines()]
    assert [x["id"] for x in lines] == answered == [q.id for q in questions[:3]]
    assert lines[1]["prediction"] == "" and all(
        x["seconds"] > 0 and x["participant"] == "p1" for x in lines
    )

    # a new server and a new browser: the session resumes at question 4
    with human_app(data_dir, out) as url, browser() as b:
        page = b.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{url}?participant=p1")
        page.wait_for_selector("#quiz:not([hidden])")
        assert page.inner_text("#progress").startswith(
            f"p1 · question 4 of {len(questions)} · 3 answered"
        )
        while len(answered) < len(questions):
            answered.append(_answer(page, gold))
        page.wait_for_selector("#done:not([hidden]) #scores")
        shown = page.inner_text("#summary")
        assert "translation" in shown and "pocket_ligand" in shown
        assert gold[answered[1]] in page.inner_text("#items")  # answers are shown now

    preds = out / "p1.jsonl"
    assert len(preds.read_text().splitlines()) == len(questions)
    report_path = tmp_path / "score.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, misi_bench; sys.exit(misi_bench.main())",
            "score",
            "--dataset",
            str(data_dir),
            "--predictions",
            str(preds),
            "--split",
            SPLIT,
            "--json-out",
            str(report_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(report_path.read_text())
    assert result["missing"] == [] and result["unknown"] == []
    tasks = result["report"]["tasks"]
    n_translation = sum(q.task == "translation" for q in questions)
    assert tasks["translation"]["score"] == pytest.approx(
        (n_translation - 1) / n_translation
    )  # the skipped one
    for task, row in tasks.items():
        if task != "translation":
            assert row["score"] == 1.0, task
    assert (
        f"{100 * tasks['translation']['score']:.1f}" in shown
    )  # the page shows the scorer's numbers
