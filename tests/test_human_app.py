"""The human-baseline app in a real browser (headless Chromium via Playwright) on a real small
build: answer questions through the page (the answer form checked, the images of a question in
one screen with the compared ones side by side), close and resume with the resume link (browser
and server), finish without seeing the gold answers, see them with the administrator's link, and
score the predictions file with ``misi-bench score``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
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


def _box(page, k: int) -> dict:
    return page.eval_on_selector(
        f"#images figure[data-k='{k}'] img",
        "i => { const r = i.getBoundingClientRect(); "
        "return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; }",
    )


def test_answer_close_resume_finish_and_score(data_dir, tmp_path):
    questions = load_questions(data_dir, SPLIT)
    gold = gold_by_id(data_dir, (SPLIT,))
    out = tmp_path / "answers"
    answered = []
    with human_app(data_dir, out) as links, browser() as b:
        url = links.base
        without = b.new_page()
        without.goto(url)  # no token: the page says which link to open, and shows nothing
        without.wait_for_function("document.getElementById('starterr').textContent.length > 0")
        assert "?token=" in without.inner_text("#starterr")
        assert without.is_disabled("#startbtn")
        without.close()
        page = b.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(links.url)
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
        # the compared views next to each other: front, front after the operation, left, top
        assert first.image_views[3] == f"{first.image_views[0]} after operation"
        assert captions == [f"Image {k + 1}: {first.image_views[k]}" for k in (0, 3, 1, 2)]
        assert page.inner_text("#qtext") == first.question
        # a paper question states its own answer form (the paper's), so the page adds none;
        # an explicit question gets the registry's form hint under the text box
        hint = "move x D or move y D"
        if first.profile == "paper":
            assert hint not in page.inner_text("#form")
        else:
            assert hint in page.inner_text("#form")
        # images are large, all of them in one screen, image 1 (front) and image 4 (front after
        # the operation) side by side
        page.wait_for_function(
            "[...document.querySelectorAll('#images img')].every(i => i.complete && i.naturalWidth > 0)"
        )
        assert page.eval_on_selector("#images img", "i => i.getBoundingClientRect().width") >= 380
        one, four = _box(page, 0), _box(page, 3)
        assert abs(one["top"] - four["top"]) < 1 and four["left"] >= one["right"]
        boxes = [_box(page, k) for k in range(len(first.image_views))]
        assert max(x["bottom"] for x in boxes) <= 1000
        assert page.evaluate("document.documentElement.scrollHeight") <= 1000 * 1.05
        # the answer form: a roll on a translation question is refused, with the expected form
        page.fill("#answer", "roll x 30")
        page.wait_for_function("document.getElementById('problem').textContent.length > 0")
        assert "not a translation answer" in page.inner_text("#problem")
        assert "move x D or move y D" in page.inner_text("#problem")
        assert page.is_disabled("#submit")
        page.fill("#answer", "")
        # the lightbox enlarges and zooms
        page.click("#images figure[data-k='1']")
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
        # no answers before the end, and none without the session key
        key = page.evaluate("localStorage.getItem('misi-key:p1')")
        auth = {"X-Misi-Token": links.token}
        results = f"{url}api/results?participant=p1"
        assert page.request.get(f"{results}&key={key}", headers=auth).status == 403
        assert page.request.get(results, headers=auth).status == 403
        assert gold[answered[0]] not in page.content()
        again = page.request.post(
            f"{url}api/answer",
            data={"participant": "p1", "key": key, "id": answered[0], "prediction": ""},
            headers=auth,
        )
        assert again.status == 409  # an answer is final
        resume = page.get_attribute("#resume a", "href")
        assert f"key={key}" in resume and f"token={links.token}" in resume
        resume = resume.removeprefix(links.base)  # the next server listens on another free port
        page.close()
    lines = [json.loads(x) for x in (out / "p1.jsonl").read_text().splitlines()]
    assert [x["id"] for x in lines] == answered == [q.id for q in questions[:3]]
    assert lines[1]["prediction"] == "" and all(
        x["seconds"] > 0 and x["participant"] == "p1" for x in lines
    )
    build = json.loads((Path(data_dir) / "manifest.json").read_text())["config_hash"]
    assert {x["config_hash"] for x in lines} == {build}  # each answer names its build

    # a new server and a new browser: the name alone does not resume someone's session...
    with human_app(data_dir, out) as links, browser() as b:
        assert links.token in resume  # the links survive the restart (kept in the out folder)
        other = b.new_page()
        other.goto(f"{links.url}&participant=p1")
        other.wait_for_function("document.getElementById('starterr').textContent.length > 0")
        assert "already in use" in other.inner_text("#starterr")
        other.close()
        # ...the resume link does, at question 4
        page = b.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(links.base + resume)
        page.wait_for_selector("#quiz:not([hidden])")
        assert page.inner_text("#progress").startswith(
            f"p1 · question 4 of {len(questions)} · 3 answered"
        )
        while len(answered) < len(questions):
            answered.append(_answer(page, gold))
        page.wait_for_selector("#done:not([hidden]) #scores")
        shown = page.inner_text("#summary")
        assert "translation" in shown and "pocket_ligand" in shown
        assert "right answer" not in page.inner_text("#items")  # kept for the administrator
        assert "administrator" in page.inner_text("#goldnote")
        # the administrator's link shows the right answers of any participant
        admin = b.new_page(viewport={"width": 1400, "height": 1000})
        admin.goto(f"{links.admin}&participant=p1")
        admin.wait_for_selector("#done:not([hidden]) #scores")
        items = admin.inner_text("#items")
        assert "right answer" in items and all(gold[q] in items for q in answered[3:6])

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
