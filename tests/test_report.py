"""``misi-bench report`` on real result files: score reports written by ``misi-bench score`` and the
result files that real runs of lmms-eval, VLMEvalKit and lm-eval write (weight-free oracle and
constant models on a real small build); the HTML, PNG and markdown are checked for content."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from misi_bench.builder.core.errors import MisiError
from misi_bench.builder.scoring import baseline_prediction, score_records
from misi_bench.builder.scoring.report import COLUMN_KEYS
from misi_bench.eval_plugins.report.reference import (
    PAPER_AVERAGE_COLUMNS,
    column_key,
    paper_average,
    reference_rows,
)
from misi_bench.eval_plugins.report.render import PALETTE
from misi_bench.eval_plugins.report.sources import ModelResult, merge_results, read_result

from cli_support import CLI

CONSTANT = "roll z -45"


def _run(args, env=None) -> subprocess.CompletedProcess:
    proc = subprocess.run(args, capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


def _rows(data_dir: Path, split: str = "test") -> list[dict]:
    import pyarrow.parquet as pq

    out = []
    for shard in sorted(data_dir.glob(f"*/{split}-*.parquet")):
        out += pq.read_table(
            shard, columns=["id", "task", "answer", "metadata", "options"]
        ).to_pylist()
    return out


@pytest.fixture(scope="module")
def score_results(data_dir, tmp_path_factory) -> dict[str, Path]:
    """Two score reports written by ``misi-bench score``: an oracle and a half-right model."""
    work = tmp_path_factory.mktemp("scores")
    rows = _rows(data_dir)
    out = {}
    for name, pick in (
        ("oracle", lambda i, r: r["answer"]),
        ("half", lambda i, r: r["answer"] if i % 2 else "No"),
    ):
        preds = work / f"{name}.jsonl"
        preds.write_text(
            "".join(
                json.dumps({"id": r["id"], "prediction": pick(i, r)}) + "\n"
                for i, r in enumerate(rows)
            )
        )
        out[name] = work / f"{name}.score.json"
        _run(
            [
                *CLI,
                "score",
                "--dataset",
                str(data_dir),
                "--predictions",
                str(preds),
                "--json-out",
                str(out[name]),
            ]
        )
    return out


@pytest.fixture(scope="module")
def results(score_results, data_dir, tmp_path_factory) -> dict[str, Path]:
    """Real result files: the two score reports, and one run of each harness."""
    work = tmp_path_factory.mktemp("results")
    out = dict(score_results)
    env = {
        **os.environ,
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_OFFLINE": "1",
        "MISI_BENCH_REPO": str(data_dir),
        "HF_HOME": str(work / "hf"),
        "MISI_BENCH_CACHE": str(work / "misi"),
        "LMUData": str(work / "lmu"),
        "TOKENIZERS_PARALLELISM": "false",
        "MISI_CONSTANT_ANSWER": "No",
    }
    (work / "lmu").mkdir()
    lmms = textwrap.dedent("""
        import sys
        from misi_bench.eval_plugins.lmms_eval import cli
        from misi_bench.eval_plugins.lmms_eval.models import misi_oracle as oracle
        oracle.register()
        sys.exit(cli.run(sys.argv[1:]))""")
    _run(
        [
            sys.executable,
            "-c",
            lmms,
            "--model",
            "misi_oracle",
            "--tasks",
            "misi",
            "--limit",
            "3",
            "--output_path",
            str(work / "lmms"),
            "--verbosity",
            "WARNING",
        ],
        env,
    )
    vlm = textwrap.dedent("""
        import sys
        from misi_bench.eval_plugins import vlmevalkit
        vlmevalkit.register()
        from misi_bench.eval_plugins.vlmevalkit import oracle
        oracle.register()
        sys.exit(vlmevalkit.run(sys.argv[1:]))""")
    _run(
        [
            sys.executable,
            "-c",
            vlm,
            "--data",
            "MiSI",
            "--model",
            "misi_constant",
            "--work-dir",
            str(work / "vlm"),
        ],
        env,
    )
    lm = textwrap.dedent("""
        import argparse, sys
        from misi_bench.eval_plugins._torch_compat import ensure_torchvision_importable
        ensure_torchvision_importable()
        from lm_eval.api.model import LM
        from lm_eval.api.registry import register_model
        from misi_bench.eval_plugins import harness_commands

        @register_model("misi_fixed")
        class Fixed(LM):  # a weight-free model that always gives the same answer
            MULTIMODAL = True
            def __init__(self, answer="", **kwargs):
                super().__init__()
                self.answer = answer
            @classmethod
            def create_from_arg_string(cls, text, additional_config=None):
                return cls(**dict(kv.split("=", 1) for kv in text.split(",") if kv))
            def generate_until(self, requests):
                return [self.answer for _ in requests]
            def loglikelihood(self, requests):
                raise NotImplementedError
            def loglikelihood_rolling(self, requests):
                raise NotImplementedError

        sys.exit(harness_commands.cmd_lm_eval(argparse.Namespace(passthrough=sys.argv[1:])))""")
    _run(
        [
            sys.executable,
            "-c",
            lm,
            "--model",
            "misi_fixed",
            "--model_args",
            f"answer={CONSTANT}",
            "--tasks",
            "misi",
            "--output_path",
            str(work / "lmeval"),
        ],
        env,
    )
    out.update(lmms=work / "lmms", vlm=work / "vlm", lmeval=work / "lmeval")
    return out


def test_paper_reference_and_average():
    rows = {r.label: r for r in reference_rows()}
    human = rows["Human (paper)"]
    assert human.average == pytest.approx(81.18)
    # (100 + 70.18 + 30 + 100 + 100 + 74.54 + 92 + 82.78) / 8 = 81.1875, which the paper prints as 81.18
    assert paper_average(human.scores) == pytest.approx(81.18, abs=0.01)
    assert rows["Qwen2.5-VL-7B-SFT (paper)"].average == pytest.approx(62.96)
    assert rows["Qwen2.5-VL-7B-SFT (paper)"].scores["T9"] == pytest.approx(10.72)
    assert rows["Claude Sonnet 4.5 (paper)"].average == pytest.approx(34.37)
    # --paper-rows: all twelve, none, names; an unknown name lists the names
    assert len(reference_rows("all")) == 12 and reference_rows("none") == ()
    assert [r.label for r in reference_rows("o3,GPT-4.1")] == ["O3 (paper)", "GPT-4.1 (paper)"]
    with pytest.raises(MisiError, match="unknown row 'gpt-9'.*GPT-4.1"):
        reference_rows("gpt-9")
    assert all("2512.10867" in r.source for r in rows.values())
    assert (
        paper_average({c: 50.0 for c in PAPER_AVERAGE_COLUMNS[:-1]}) is None
    )  # a missing column: no average
    assert [
        column_key(k) for k in ("T4+", "t4_negative", "rotation", "residue_ligand_positive", "x")
    ] == ["T4+", "T4-", "T2", "T4+", None]


def test_reference_rows_are_the_scorers():
    """The report shows the scorer's reference data (the one place it is kept), in percent."""
    from misi_bench.builder import scoring

    source = {r.name: r for r in scoring.select_paper_rows("default")}
    got = reference_rows()
    assert len(got) == len(source)
    for row in got:
        ref = next(r for name, r in source.items() if row.label.lower().startswith(name.lower()))
        assert row.average == pytest.approx(100 * ref.paper_average)
        for key, value in ref.scores.items() if isinstance(ref.scores, dict) else ref.scores:
            column = column_key(key)
            assert row.scores[column] == (None if value is None else pytest.approx(100 * value))


@pytest.mark.slow
def test_readers_match_the_files(results, data_dir):
    (oracle,) = read_result(results["oracle"])
    assert oracle.label == "oracle" and oracle.paper_average == 100.0
    (half,) = read_result(results["half"], label="Half")
    report = json.loads(results["half"].read_text())["report"]
    assert half.scores["T2"] == pytest.approx(100 * report["tasks"]["rotation"]["score"])
    assert half.scores["T4-"] == pytest.approx(
        100 * report["subsets"]["residue_ligand_negative"]["score"]
    )
    (lmms,) = read_result(results["lmms"])
    per_task = {}
    for r in _rows(data_dir):
        per_task[r["task"]] = per_task.get(r["task"], 0) + 1
    assert (lmms.source, lmms.split, lmms.n) == (
        "lmms-eval",
        "test",
        sum(min(3, n) for n in per_task.values()),
    )
    assert all(lmms.scores[c] == 100.0 for c in ("T1", "T2", "T3", "T5", "T6", "T7", "T8", "T9"))
    (vlm,) = read_result(results["vlm"])  # the folder holds both report.json and acc.csv: read once
    assert (vlm.label, vlm.source, vlm.split) == ("misi_constant", "VLMEvalKit", "test")
    assert vlm.scores["T4-"] == 100.0 and vlm.scores["T4+"] == 0.0
    # "No" also earns T9 credit on complexes without H-bonds: the expected average is the scorer's own
    said_no = score_records(_rows(data_dir), {r["id"]: "No" for r in _rows(data_dir)})["report"]
    assert vlm.paper_average == pytest.approx(100 * said_no["paper_average"])
    acc = next(results["vlm"].rglob("*_acc.csv"))
    assert read_result(acc)[0].scores == vlm.scores
    (lm,) = read_result(results["lmeval"])
    assert lm.source == "lm-eval" and lm.label == f"misi_fixed ({CONSTANT})"
    expected = score_records(_rows(data_dir), {r["id"]: CONSTANT for r in _rows(data_dir)})[
        "report"
    ]
    assert lm.scores["T2"] == pytest.approx(100 * expected["tasks"]["rotation"]["score"])
    assert lm.scores["T7"] == pytest.approx(100 * expected["tasks"]["docking"]["score"])
    assert lm.scores["T2"] > 0  # the constant is right on some rotation questions of this build


def test_per_task_files_of_one_model_merge():
    a = ModelResult("m", "VLMEvalKit", "a.csv", "test", {"T2": 40.0, "T4+": None}, 6)
    b = ModelResult("m", "VLMEvalKit", "b.csv", "test", {"T2": None, "T4": 50.0, "T4+": 20.0}, 14)
    c = ModelResult("m", "VLMEvalKit", "c.csv", "tiny", {"T2": 10.0}, 2)
    merged = merge_results([a, b, c])
    assert [(r.split, r.n) for r in merged] == [("test", 20), ("tiny", 2)]
    assert (
        merged[0].scores == {"T2": 40.0, "T4+": 20.0, "T4": 50.0} and merged[0].average_all == 45.0
    )


def test_reader_errors_name_the_file(tmp_path):
    bad = tmp_path / "notes.json"
    bad.write_text('{"hello": 1}')
    with pytest.raises(MisiError, match="notes.json: not a recognised result file"):
        read_result(bad)
    with pytest.raises(MisiError, match="missing.json: no such result file"):
        read_result(tmp_path / "missing.json")
    (tmp_path / "x.json").write_text("{not json")
    with pytest.raises(MisiError, match="x.json: cannot read"):
        read_result(tmp_path / "x.json")


@pytest.mark.slow
def test_report_html_png_markdown(results, data_dir, tmp_path):
    from PIL import Image

    html_path, png_path, md_path = (
        tmp_path / "r" / "report.html",
        tmp_path / "report.png",
        tmp_path / "table.md",
    )
    proc = _run(
        [
            *CLI,
            "report",
            str(results["oracle"]),
            f"Half right={results['half']}",
            str(results["lmms"]),
            str(results["vlm"]),
            str(results["lmeval"]),
            "--dataset",
            str(data_dir),
            "--out",
            str(html_path),
            "--png",
            str(png_path),
            "--markdown",
            str(md_path),
            "--title",
            "Test report",
        ]
    )
    md = md_path.read_text()
    assert md in proc.stdout
    lines = {line.split(" | ")[0].lstrip("| "): line for line in md.splitlines()[2:]}
    assert set(lines) == {
        "oracle",
        "Half right",
        "misi_oracle",
        "misi_constant",
        f"misi_fixed ({CONSTANT})",
        "Human (paper)",
        "Qwen2.5-VL-7B-SFT (paper)",
        "Claude Sonnet 4.5 (paper)",
        "Chance: random answer",
        "Chance: constant (No / None / A)",
        "Blind: text only: train's most frequent answer",
        "Blind: options only: best rule",
        "Blind floor: best blind baseline per column",
    }
    assert lines["oracle"].count("100.00") == len(COLUMN_KEYS) + 2  # the columns, two averages
    # the floor row has T4's halves and a paper average; every model row its margin above it
    floor = lines["Blind floor: best blind baseline per column"].split("|")
    assert all(c.strip() not in ("", "-", "–") for c in floor[2:-2]), floor
    assert "Margin above the build's blind floor" in proc.stdout
    margins = proc.stdout[proc.stdout.index("Margin above the build's blind floor") :]
    assert "| oracle | +" in margins and "| Human (paper) | " in margins
    assert (
        "| 81.18 |" in lines["Human (paper)"] and "| 62.96 |" in lines["Qwen2.5-VL-7B-SFT (paper)"]
    )
    # chance levels: the scorer's baselines over the build's test questions
    rows = _rows(data_dir)
    rng = __import__("numpy").random.default_rng(0)
    constant = score_records(
        rows, {r["id"]: baseline_prediction("always_no", r["task"], r, rng) for r in rows}
    )["report"]
    cells = lines["Chance: constant (No / None / A)"].strip("| \n").split(" | ")
    assert cells[5] == "100.00"  # T4-: "No" is right on every negative
    assert float(cells[6]) == pytest.approx(
        100 * constant["tasks"]["translation_rotation"]["score"], abs=0.005
    )
    assert float(cells[11]) == pytest.approx(
        paper_average(
            dict(
                zip(
                    ("T1", "T2", "T3", "T4+", "T4-", "T5", "T6", "T7", "T8", "T9"),
                    map(float, cells[1:11]),
                )
            )
        ),
        abs=0.01,
    )

    html = html_path.read_text()
    assert html.startswith("<!DOCTYPE html>") and "Test report" in html
    assert not re.search(r"""(src|href)=["'](?!data:)""", html)  # self-contained: nothing fetched
    embedded = re.search(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)
    assert embedded and base64.b64decode(embedded[1]) == png_path.read_bytes()
    for label in (
        "Half right",
        "misi_constant",
        "Human (paper)",
        "Chance: random answer",
        "2512.10867",
        str(data_dir),
    ):
        assert label in html, label
    assert html.count('<tr class="model">') == 5 and html.count('<tr class="paper">') == 3

    img = Image.open(png_path)
    assert img.format == "PNG" and img.size[0] >= 1600 and img.size[1] >= 800
    colours = {c for _, c in img.convert("RGB").getcolors(maxcolors=1 << 20)}
    for hex_colour in PALETTE[:5]:  # one bar colour per model (Okabe-Ito)
        assert tuple(int(hex_colour[i : i + 2], 16) for i in (1, 3, 5)) in colours, hex_colour
    grey = img.convert("L")
    assert len(grey.getcolors(maxcolors=1 << 16)) > 50  # hatching and markers survive in grey-scale
    assert png_path.stat().st_size > 50_000


def test_report_of_score_reports_in_process(score_results, data_dir, tmp_path):
    """The fast lane's report: two score reports (no harness run), HTML, PNG and markdown written by
    the command in this process."""
    from misi_bench import main

    html_path, png_path, md_path = (
        tmp_path / "report.html",
        tmp_path / "report.png",
        tmp_path / "table.md",
    )
    code = main(
        [
            "report",
            str(score_results["oracle"]),
            f"Half right={score_results['half']}",
            "--dataset",
            str(data_dir),
            "--out",
            str(html_path),
            "--png",
            str(png_path),
            "--markdown",
            str(md_path),
        ]
    )
    assert code == 0
    lines = {
        line.split(" | ")[0].lstrip("| "): line for line in md_path.read_text().splitlines()[2:]
    }
    assert {"oracle", "Half right", "Human (paper)", "Chance: random answer"} <= set(lines)
    assert lines["oracle"].count("100.00") == len(COLUMN_KEYS) + 2  # the columns, two averages
    assert lines["Half right"].count("100.00") < len(COLUMN_KEYS) + 2
    html = html_path.read_text()
    assert not re.search(r"""(src|href)=["'](?!data:)""", html)  # self-contained: nothing fetched
    embedded = re.search(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)
    assert embedded and base64.b64decode(embedded[1]) == png_path.read_bytes()
    assert html.count('<tr class="model">') == 2 and html.count('<tr class="paper">') == 3


def test_report_without_models_is_an_error(tmp_path):
    proc = subprocess.run(
        [*CLI, "report", str(tmp_path / "nothing.json"), "--out", str(tmp_path / "r.html")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode != 0 and "nothing.json: no such result file" in proc.stderr + proc.stdout
    assert not (tmp_path / "r.html").exists()
