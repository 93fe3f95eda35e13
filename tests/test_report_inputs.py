"""``misi-bench report`` inputs and labels on the small real build: an ``eval`` run folder (from a
run against the PROTOCOL DOUBLE of an OpenAI-compatible endpoint), per-column n and 95% intervals
of model rows, model names drawn literally (mathtext, HTML, very long, non-ASCII), blind rows
averaged only where they cover every task, and one line style per baseline."""

from __future__ import annotations

import csv
import json
import zlib
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from misi_bench.builder.core.registry import TASK_NAMES
from misi_bench.eval_plugins.api.testing_server import Double, DoubleServer, example_answer
from misi_bench.eval_plugins.report.cli import collect_rows
from misi_bench.eval_plugins.report.intervals import HARNESS_BLOCK, column_intervals
from misi_bench.eval_plugins.report.levels import FLOOR_NAME
from misi_bench.eval_plugins.report.reference import COLUMNS
from misi_bench.eval_plugins.report.render import (
    BASELINE_STYLES,
    LEGEND_CHARS,
    baseline_style,
    draw,
    figure_png,
)
from misi_bench.eval_plugins.report.sources import read_result

import misi_bench

WEIRD = {
    "math": r"$\undefined$ model",
    "html": "<script>alert(1)</script>",
    "long": "a-very-long-model-name/" * 15,
    "unicode": "modèle Ωmega – Größe №7",
}


def _rows(data_dir, split="test"):
    rows = []
    for task in TASK_NAMES:
        for shard in sorted((Path(data_dir) / task).glob(f"{split}-*.parquet")):
            rows += pq.read_table(shard, columns=["id", "task", "answer", "question"]).to_pylist()
    return rows


@pytest.fixture(scope="module")
def eval_run(data_dir, tmp_path_factory) -> Path:
    """A finished ``misi-bench eval`` run: gold answers for two thirds, examples for the rest."""
    answers = {
        r["id"]: r["answer"] if zlib.crc32(r["id"].encode()) % 3 else example_answer(r["question"])
        for r in _rows(data_dir)
    }
    root = tmp_path_factory.mktemp("runs")
    with DoubleServer(Double(answers=answers)) as srv:
        code = misi_bench.main(
            [
                "eval",
                "--base-url",
                srv.url,
                "--model",
                "double-7b",
                "--dataset",
                str(data_dir),
                "--out",
                str(root / "run"),
            ]
        )
    assert code == 0
    return root


def test_eval_run_folder_with_n_and_intervals(eval_run, data_dir):
    report = json.loads((eval_run / "run" / "report.json").read_text())
    for given in (eval_run, eval_run / "run", eval_run / "run" / "report.json"):
        (res,) = read_result(given)
        assert (res.label, res.source, res.split) == ("double-7b", "misi-bench eval", "test")
    rows = _rows(data_dir)
    n_task = {t: sum(r["task"] == t for r in rows) for t in TASK_NAMES}
    assert res.counts["T1"] == n_task["translation"] and res.counts["T9"] == n_task["pocket_ligand"]
    assert res.counts["T4+"] + res.counts["T4-"] == n_task["residue_ligand"]
    # the interval is the scorer's (complexes resampled), the run's own report block, and the
    # same when recomputed from the per-question entries
    low, high = report["report"]["intervals"]["statistics"]["T8"]["ci95"]
    assert res.intervals["T8"] == (round(100 * low, 2), round(100 * high, 2))
    assert res.intervals == column_intervals(report["per_item"])
    assert "paper_average" in res.intervals  # the headline has its interval
    for column in COLUMNS:  # rounded to 0.01 points
        lo, hi = res.intervals[column]
        assert 0 <= lo <= res.scores[column] + 0.005 and res.scores[column] - 0.005 <= hi <= 100


def test_score_json_rows_get_the_scorers_intervals(eval_run, data_dir, tmp_path):
    """A ``score --json-out`` file keeps its per-question scores: its intervals are the scorer's
    own, the same as the run's; a file with neither per-question scores nor the report's
    interval block has no interval (nothing to resample), never one of another method."""
    preds = eval_run / "run" / "predictions.jsonl"
    out = tmp_path / "s.json"
    argv = ["score", "--dataset", str(data_dir), "--predictions", str(preds)]
    assert misi_bench.main([*argv, "--json-out", str(out), "--no-baselines"]) == 0
    (res,) = read_result(out)
    (run,) = read_result(eval_run / "run" / "report.json")
    assert res.intervals and res.intervals == run.intervals
    data = json.loads(out.read_text())
    del data["per_item"]
    out.write_text(json.dumps(data))
    (block_only,) = read_result(out)
    assert block_only.intervals == run.intervals  # the report's block: the same numbers
    del data["report"]["intervals"]
    out.write_text(json.dumps(data))
    (bare,) = read_result(out)
    assert bare.counts == run.counts and bare.intervals == {}


def test_report_draws_names_literally(eval_run, data_dir, tmp_path):
    run = eval_run / "run" / "report.json"
    html_path, md_path, png_path = tmp_path / "r.html", tmp_path / "t.md", tmp_path / "r.png"
    argv = ["report", *(f"{label}={run}" for label in WEIRD.values()), "--dataset", str(data_dir)]
    argv += ["--split", "test", "--out", str(html_path), "--markdown", str(md_path)]
    assert misi_bench.main([*argv, "--png", str(png_path), "--title", "$x^$ title"]) == 0
    html = html_path.read_text()
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    for label in (WEIRD["math"], WEIRD["unicode"], WEIRD["long"]):
        assert label in html
    md = md_path.read_text()
    assert f"| {WEIRD['math']} |" in md and "&lt;script&gt;" in md and "<script>" not in md
    assert png_path.read_bytes().startswith(b"\x89PNG")
    rows, _ = collect_rows([f"{label}={run}" for label in WEIRD.values()], None, "test")
    fig = draw(rows, title="$\\undefined$")
    texts = [t for t in fig.legends[0].get_texts()]
    shown = [t.get_text() for t in texts]
    assert WEIRD["math"] in shown and WEIRD["html"] in shown and WEIRD["unicode"] in shown
    assert any(
        s.startswith(WEIRD["long"][: LEGEND_CHARS - 1]) and len(s) == LEGEND_CHARS for s in shown
    )
    assert all(not t.get_parse_math() for t in texts)
    assert figure_png(fig).startswith(b"\x89PNG")  # mathtext would raise on \undefined here


def test_blind_rows_average_only_complete_and_are_told_apart(eval_run, data_dir):
    rows, _ = collect_rows([str(eval_run)], str(data_dir), "test", with_paper=False)
    by = {r.label: r for r in rows}
    options = next(r for label, r in by.items() if label.startswith("Blind: options only"))
    text = next(r for label, r in by.items() if label.startswith("Blind: text only"))
    assert [c for c in COLUMNS if options.scores.get(c) is not None] != list(COLUMNS)
    assert options.average_all is None and options.average is None  # 3 tasks: no 9-task mean
    assert text.average_all is not None  # the text-only rule answers every task
    styles = [baseline_style(r.label, 0) for r in rows if r.kind == "chance"]
    # random, constant, options only, text only and the blind floor: each its own style
    assert len(styles) == 5 and any(r.label == FLOOR_NAME for r in rows)
    assert len({str(s[0]) for s in styles}) == 5 and len({s[2] for s in styles}) == 5
    assert {b[0] for b in BASELINE_STYLES} == {
        next(b[0] for b in BASELINE_STYLES if r.label.startswith(b[0]))
        for r in rows
        if r.kind == "chance"
    }
    model = by["double-7b"]
    assert model.counts and model.intervals and model.kind == "model"


def test_every_route_gives_the_same_interval_for_the_same_answers(eval_run, tmp_path):
    """The same answers read from an ``eval`` run, a ``score`` JSON, and the results files of
    lmms-eval, lm-eval and VLMEvalKit (written here in each harness's file shape from the run's
    own report: format doubles of the files; the real files come from the real harnesses in the
    slow ``test_plugins_*`` runs) give one interval per column and for the headline: the
    scorer's block, carried by each file (``misi_intervals``, the ``_acc`` table's columns)."""
    from misi_bench.eval_plugins.vlmevalkit.datasets import _acc_table

    data = json.loads((eval_run / "run" / "report.json").read_text())
    report = data["report"]
    (run,) = read_result(eval_run / "run" / "report.json")
    assert set(COLUMNS) <= set(run.intervals)
    # what `eval` printed (report.md): in %, with the same interval as every route below
    printed = (eval_run / "run" / "report.md").read_text()
    assert "| task | n | score % | exact % | 95% interval % |" in printed
    low, high = run.intervals["T2"]
    row = report["tasks"]["rotation"]
    assert f"| rotation | {row['n']} | {100 * row['score']:.2f} |" in printed
    assert f"| [{low:.2f}, {high:.2f}] |" in printed.split("| rotation |", 1)[1].splitlines()[0]
    results, samples = {}, {}
    for task, row in report["tasks"].items():
        results[f"misi_{task}"] = {"alias": f"misi_{task}", "score,none": row["score"]}
        samples[f"misi_{task}"] = {"original": row["n"], "effective": row["n"]}
    for sub, row in report["subsets"].items():
        task, _, word = sub.rpartition("_")
        results[f"misi_{task}"][f"score_{word},none"] = row["score"]
    blocks = {HARNESS_BLOCK: {"test": report["intervals"]}}
    lmms = {"results": results, "n-samples": samples, "lmms_eval_version": "0.x", **blocks}
    lm = {"results": results, "n-samples": samples, "config": {"model": "double-7b"}, **blocks}
    (tmp_path / "a_results.json").write_text(json.dumps(lmms))
    (tmp_path / "results_b.json").write_text(json.dumps(lm))
    acc = tmp_path / "double-7b_MiSI_acc.csv"
    with acc.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, ["task", "n", "score", "exact", "ci95_low", "ci95_high", "se"])
        writer.writeheader()
        writer.writerows(_acc_table(report))
    del data["per_item"]
    (tmp_path / "bare.score.json").write_text(json.dumps(data["report"] | {"scale": "0-1"}))
    routes = [
        *read_result(tmp_path / "a_results.json"),
        *read_result(tmp_path / "results_b.json"),
        *read_result(acc),
        *read_result(tmp_path / "bare.score.json"),
    ]
    assert len(routes) == 4
    for res in routes:
        # lmms-eval and lm-eval results keep a task's count, not its halves' (T4+ / T4-)
        halves = {"T4+", "T4-"} if res.source in ("lmms-eval", "lm-eval") else set()
        assert res.intervals == run.intervals, res.source  # every column and the headline
        assert "paper_average" in res.intervals
        for column in set(COLUMNS) - halves:
            assert res.counts[column] == run.counts[column], (res.source, column)


def test_score_and_report_print_one_margin_interval(eval_run, data_dir, tmp_path, capsys):
    """The margin above the blind floor, paired per question with one interval method: ``score``
    and ``report`` (from the score JSON and from the eval run) print the same cells."""
    from misi_bench.eval_plugins.report.cli import margin_table

    preds = eval_run / "run" / "predictions.jsonl"
    out = tmp_path / "s.json"
    argv = ["score", "--dataset", str(data_dir), "--predictions", str(preds)]
    assert misi_bench.main([*argv, "--json-out", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    score_line = next(x for x in printed if x.startswith("| this result minus floor |"))
    for source in (f"m={out}", f"m={eval_run}"):
        rows, _ = collect_rows([source], str(data_dir), "test", with_paper=False)
        line = next(x for x in margin_table(rows).splitlines() if x.startswith("| m |"))
        assert line.split("|")[2:] == score_line.split("|")[2:], source
    cells = score_line.split("|")[2:-1]
    assert len(cells) == len(COLUMNS) + 1 and all("[" in c for c in cells)  # headline too
