"""Factor diagnostics (``scoring.factors``, ``scoring.factor_table``, ``score --by-factor``,
``report --by-factor``, the card's factor table) on real builds of the embedded complexes: a gold
stand-in scores 100% in every bin, a random stand-in sits at chance within each bin's interval,
the paper's Fig. 4 panels come out of a ``score`` result and an ``eval`` run, two results compare
bin by bin on paired intervals."""

from __future__ import annotations

import itertools
import json
import re
import zlib
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from misi_bench.builder.core.errors import MisiError
from misi_bench.builder.core.registry import TASK_BY_NAME, TASK_NAMES
from misi_bench.builder.scoring import baseline_prediction, score_records
from misi_bench.builder.scoring import factor_table as ft
from misi_bench.builder.scoring import factors as fs
from misi_bench.eval_plugins.api.mock import MockAnswers
from misi_bench.eval_plugins.api.testing_server import Double, DoubleServer

import misi_bench


def _rows(build, split="test"):
    rows = []
    for task in TASK_NAMES:
        for shard in sorted((Path(build) / task).glob(f"{split}-*.parquet")):
            rows += pq.read_table(
                shard, columns=["id", "task", "answer", "metadata", "options"]
            ).to_pylist()
    return rows


def _bins(build, rows):
    manifest = json.loads((Path(build) / "manifest.json").read_text())
    return ft.row_bins(rows, ft.manifest_facts(manifest))


def _gold(rows):
    return {r["id"]: r["answer"] for r in rows}


def _random(rows, seed=3):
    return {
        r["id"]: baseline_prediction(
            "random", r["task"], r, np.random.default_rng([seed, zlib.crc32(r["id"].encode())])
        )
        for r in rows
    }


def test_every_task_declares_versioned_factors_that_parse():
    """Each of the nine data files carries a versioned factors block; the shared file too; the
    bins are what the YAML says (T4 by bond count 0..3 and 4+, T3 by zoom value over 40-60)."""
    sets = {s.task: s for s in fs.factor_sets()}
    assert set(sets) == {fs.SHARED, *TASK_NAMES}
    assert all(s.version and s.factors for s in sets.values())
    t4 = {f.name: f for f in fs.factors_of("residue_ligand")}
    assert t4["bond_count"].bins == ("0", "1", "2", "3", "4+")
    zoom = {f.name: f for f in fs.factors_of("zooming")}["zoom"]
    assert fs.bin_of(zoom, 40) == "40-43" and fs.bin_of(zoom, 60) == "56-60"
    assert fs.bin_of(zoom, 61) is None and fs.bin_of(zoom, 39.5) is None
    assert fs.bin_of(t4["bond_count"], 7) == "4+" and fs.bin_of(t4["bond_count"], None) is None
    shared = {f.name for f in sets[fs.SHARED].factors}
    assert {"ligand_heavy_atoms", "pocket_residues", "chains"} <= shared


@pytest.mark.parametrize(
    "block,needle",
    [
        ({"x": {"count": "hbonds", "categories": [0]}}, "version"),
        ({"version": "1", "x": {"categories": [0]}}, "exactly one of"),
        ({"version": "1", "x": {"count": "hbonds", "edges": [3, 1]}}, "ascending"),
        ({"version": "1", "x": {"count": "hbonds"}}, "categories or edges"),
        (
            {"version": "1", "x": {"operation": {"index": 0, "part": "size"}, "edges": [0, 1]}},
            "part",
        ),
    ],
)
def test_a_bad_factor_block_is_refused_naming_the_file(block, needle):
    with pytest.raises(MisiError, match=needle) as err:
        fs.parse_factors("zooming", block, "builder/tasks/zooming.yaml")
    assert "builder/tasks/zooming.yaml" in str(err.value)


def _check_zoom(row, meta, got):
    d = int(row["answer"].split()[-1])
    assert fs.bin_of(fs.factors_of(row["task"])[0], d) == got[f"{row['task']}/zoom"]


def _check_bond_count(row, meta, got):
    n = len(meta["hbonds"])
    assert got[f"{row['task']}/bond_count"] == (str(n) if n < 4 else "4+")
    assert (n == 0) == (row["answer"] == "No")


def _check_bond_atoms(row, meta, got):
    assert got[f"{row['task']}/ligand_atom"] == meta["hbond"].split(", ")[1][0]


#: What a task's own factor must read, per task (the others: the shared factors only).
VALUE_CHECKS = {
    "zooming": _check_zoom,
    "residue_ligand": _check_bond_count,
    "interaction_location": _check_bond_atoms,
}


def test_values_come_from_metadata_and_the_builds_facts(data_dir):
    """T3's zoom is its gold `move z D`; T4's bond count its bond list; T8's atoms the elements
    of its bond; the shared facts come from the manifest (ligand heavy atoms as the build read
    them)."""
    rows = _rows(data_dir)
    manifest = json.loads((Path(data_dir) / "manifest.json").read_text())
    facts = ft.manifest_facts(manifest)
    assert set(facts) == set(manifest["inputs"]) and all(f["chains"] >= 1 for f in facts.values())
    bins = _bins(data_dir, rows)
    checked = set()
    for row in rows:
        meta = json.loads(row["metadata"])
        got = bins[row["id"]]
        if row["task"] in VALUE_CHECKS:
            VALUE_CHECKS[row["task"]](row, meta, got)
            checked.add(row["task"])
        heavy = facts[meta["pdb_id"]]["ligand_heavy_atoms"]
        assert got["*/ligand_heavy_atoms"] == fs.bin_of(
            {f.name: f for f in fs.factors_of(row["task"])}["ligand_heavy_atoms"], heavy
        )
    assert checked == set(VALUE_CHECKS)


def test_a_gold_stand_in_scores_100_in_every_bin(data_dir):
    rows = _rows(data_dir)
    result = score_records(rows, _gold(rows))
    cells = ft.bin_table(result["per_item"], _bins(data_dir, rows), resamples=200)
    assert {c.task for c in cells} == set(TASK_NAMES)
    assert {c.factor.split("/")[1] for c in cells} >= {"zoom", "bond_count", "ligand_heavy_atoms"}
    for c in cells:
        assert (c.value, c.low, c.high) == (1.0, 1.0, 1.0), c
    # every question of a task lands in one bin of each of its factors with a value
    per_task = {t: sum(1 for r in rows if r["task"] == t) for t in TASK_NAMES}
    for task in TASK_NAMES:
        for factor in fs.factors_of(task):
            n = sum(c.n for c in cells if c.task == task and c.factor == factor.key)
            assert n == per_task[task], (task, factor.key)


def test_identical_results_compare_to_exactly_zero_in_every_bin(data_dir):
    rows = _rows(data_dir)
    items = score_records(rows, _random(rows))["per_item"]
    cells = ft.compare_by_factor(items, items, _bins(data_dir, rows), resamples=200)
    assert cells and all((c.value, c.low, c.high, c.p_value) == (0, 0, 0, 1.0) for c in cells)
    gold = score_records(rows, _gold(rows))["per_item"]
    better = ft.compare_by_factor(gold, items, _bins(data_dir, rows), resamples=200)
    assert all(c.value >= 0 and c.low <= c.value <= c.high for c in better)
    assert any(c.value > 0 for c in better)


def _score_cli(data_dir, preds, out):
    path = out.with_suffix(".jsonl")
    path.write_text(
        "".join(json.dumps({"id": k, "prediction": v}) + "\n" for k, v in preds.items())
    )
    argv = ["score", "--dataset", str(data_dir), "--predictions", str(path)]
    assert misi_bench.main([*argv, "--by-factor", "--no-baselines", "--json-out", str(out)]) == 0
    return json.loads(out.read_text())


def test_score_by_factor_prints_and_writes_the_breakdown_and_figure4(data_dir, tmp_path, capsys):
    """`score --by-factor`: every bin with n and its interval, in the markdown and the JSON;
    the Fig. 4 panels with the paper's published T4 bars beside the result's bins."""
    rows = _rows(data_dir)
    result = _score_cli(data_dir, _gold(rows), tmp_path / "gold.json")
    printed = capsys.readouterr().out
    assert "T4 residue_ligand, by H-bonds of the residue with the ligand:" in printed
    assert re.search(r"\| 0 \| \d+ \(\d\) \| 100\.00 \| \[100\.00, 100\.00\] \|", printed)
    block = result["by_factor"]
    assert block["method"].startswith("percentile bootstrap") and block["facts_recorded"]
    bins = block["tasks"]["residue_ligand"]["residue_ligand/bond_count"]["bins"]
    assert sum(b["n"] for b in bins) == sum(1 for r in rows if r["task"] == "residue_ligand")
    t4, t3 = block["figure4"]
    assert t4["paper_bars"] == {"0": 89.52, "1": 64.72, "2": 28.7, "3": 20.51}
    assert t4["paper_n"] == {"0": 1746} and t3["statistic"] == "error_rate"
    assert all(b["value"] == 1.0 for b in t4["bins"]) and all(b["value"] == 0 for b in t3["bins"])
    assert [b["paper"] for b in t4["bins"] if b["bin"] == "0"] == [89.52]
    assert "no value" in t3["paper_note"]


def test_figure4_from_an_eval_run_matches_the_same_answers_scored(data_dir, tmp_path):
    """An `eval` run folder's report.json (a random stand-in behind the API) gives the same
    Fig. 4 panels and bins as `score` of the same answers: any route, one breakdown."""
    rows = _rows(data_dir)
    mock = MockAnswers(str(data_dir), "random", seed=3)
    with DoubleServer(Double(answer_request=mock.answer)) as srv:
        args = ["eval", "--base-url", srv.url, "--model", "mock", "--dataset", str(data_dir)]
        assert misi_bench.main([*args, "--out", str(tmp_path / "run"), "--no-progress"]) == 0
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    scored = _score_cli(data_dir, _random(rows), tmp_path / "random.json")
    bins = _bins(data_dir, rows)
    from_eval = ft.figure4_panels(report["per_item"], bins, resamples=200)
    from_score = ft.figure4_panels(scored["per_item"], bins, resamples=200)
    assert from_eval == from_score
    assert [p["task"] for p in from_eval] == ["residue_ligand", "zooming"]
    assert sum(b["n"] for b in from_eval[1]["bins"]) == sum(r["task"] == "zooming" for r in rows)


def test_figure4_from_lmms_eval_log_samples(data_dir, tmp_path):
    """A harness route: lmms-eval --log_samples files of T3 and T4, scored with `score
    --by-factor`, give both Fig. 4 panels (gold answers: T4 at 100% exact match in every bond
    count, T3 at 0% error in every zoom bin), every question in a bin."""
    folder = tmp_path / "results" / "org__model"
    folder.mkdir(parents=True)
    rows = _rows(data_dir)
    for panel in ft.figure4_reference():
        own = [r for r in rows if r["task"] == panel["task"]]
        lines = [
            {"doc_id": i, "target": r["answer"], "filtered_resps": [r["answer"]]}
            for i, r in enumerate(own)
        ]
        (folder / f"20260102_samples_misi_{panel['task']}.jsonl").write_text(
            "".join(json.dumps(x) + "\n" for x in lines)
        )
    argv = ["score", "--dataset", str(data_dir), "--predictions", str(tmp_path / "results")]
    out = tmp_path / "harness.json"
    assert misi_bench.main([*argv, "--by-factor", "--no-baselines", "--json-out", str(out)]) == 0
    t4, t3 = json.loads(out.read_text())["by_factor"]["figure4"]
    assert {b["value"] for b in t4["bins"]} == {1.0} and {b["value"] for b in t3["bins"]} == {0.0}
    for panel in (t4, t3):
        assert sum(b["n"] for b in panel["bins"]) == sum(r["task"] == panel["task"] for r in rows)


def test_report_by_factor_draws_every_bin_with_n_and_interval(data_dir, tmp_path, capsys):
    """`report A B --by-factor`: a self-contained page with a figure per task, Fig. 4 and the
    paired comparison; the printed tables name n and the interval of every bin."""
    pytest.importorskip("matplotlib")
    rows = _rows(data_dir)
    _score_cli(data_dir, _gold(rows), tmp_path / "gold.json")
    _score_cli(data_dir, _random(rows), tmp_path / "random.json")
    capsys.readouterr()
    out = tmp_path / "report.html"
    argv = ["report", f"gold={tmp_path / 'gold.json'}", f"random={tmp_path / 'random.json'}"]
    argv += ["--dataset", str(data_dir), "--by-factor", "--out", str(out)]
    assert misi_bench.main(argv) == 0
    printed = capsys.readouterr().out
    page = out.read_text()
    assert "<h2>By factor</h2>" in page and "<h2>The paper's Fig. 4 panels</h2>" in page
    assert "A = gold, B = random: paired on the questions both answered" in page
    assert "http://" not in page and "https://" not in page and "<script" not in page
    assert page.count('src="data:image/png;base64,') >= 1 + 9 + 1 + 1
    assert "| bin | n (complexes) | score % | 95% interval | blind floor % |" in printed
    # T4's 0-bond bin: the blind floor (always No) is 100% there
    assert re.search(
        r"\| 0 \| \d+ \(\d+\) \| 100\.00 \| \[100\.00, 100\.00\] \| 100\.00 \|", printed
    )
    lines = [ln for ln in printed.splitlines() if re.match(r"\| [^|]+ \| \d+ \(\d+\) \|", ln)]
    assert lines and all(re.search(r"\| [+-]?\d+\.\d\d \| \[[^]]+\] \|", ln) for ln in lines)


def test_report_by_factor_needs_the_dataset(data_dir, tmp_path):
    rows = _rows(data_dir)
    _score_cli(data_dir, _gold(rows), tmp_path / "gold.json")
    argv = ["report", str(tmp_path / "gold.json"), "--by-factor", "--out", str(tmp_path / "r.html")]
    assert misi_bench.main(argv) == 2


def test_the_card_lists_factors_bins_and_counts(data_dir):
    """The card's factor table: one line per task and factor, each bin with its test / tiny
    question count (the test counts of a factor add up to the task's test questions)."""
    section = (Path(data_dir) / "README.md").read_text().split("### Factors", 1)[1]
    assert "shared factors 1.0.0" in section.split("\n\n")[1]
    lines = section.split("| task | factor | bins: test / tiny questions |", 1)[1].splitlines()
    table = list(itertools.takewhile(lambda ln: ln.startswith("|"), lines[2:]))
    assert len(table) == sum(len(fs.factors_of(t)) for t in TASK_NAMES)
    assert all(ln.startswith("| T") for ln in table)
    rows = _rows(data_dir)
    n4 = sum(1 for r in rows if r["task"] == "residue_ligand")
    line = next(ln for ln in table if "H-bonds of the residue" in ln)
    counts = [int(m) for m in re.findall(r": (\d+)\*? / \d+", line)]
    assert sum(counts) == n4


@pytest.mark.slow
def test_a_random_stand_in_sits_at_chance_in_every_bin(tmp_path_factory):
    """On a build of all 19 embedded complexes (T3, T4, T6, both splits), random stand-ins
    (three seeds) sit at the chance level of each bin with questions from at least ten complexes
    and at least five expected hits and misses: its 95% interval holds the chance level in at
    least 85% of those bins (a 95% interval misses now and then), and the bins of T4's bond count
    (chance about 48% without a bond, 0% with one) each hold their own level."""
    from misi_bench.builder.dataset.build import build_dataset

    out = tmp_path_factory.mktemp("factors") / "build"
    build_dataset(
        source="samples",
        out=out,
        tasks=["zooming", "residue_ligand", "rotation_rotation"],
        tiny_per_task=2,
        progress=False,
        audit=False,
        validate=False,
    )
    rows = _rows(out, "test") + _rows(out, "train")
    bins = _bins(out, rows)
    chance = ft.chance_by_bin(rows, bins, draws=300)
    covered = []
    for seed in (3, 4, 5):
        cells = ft.bin_table(score_records(rows, _random(rows, seed))["per_item"], bins)
        for c in cells:
            level = chance[(c.task, c.factor, c.bin)]
            if c.complexes >= 10 and min(level, 1 - level) * c.n >= 5:
                covered.append(c.low - 1e-9 <= level <= c.high + 1e-9)
            if c.factor.endswith("/bond_count"):
                assert c.low - 1e-9 <= level <= c.high + 1e-9, (c, level)
    assert len(covered) >= 30 and sum(covered) >= 0.85 * len(covered), covered
    gold = ft.bin_table(score_records(rows, _gold(rows))["per_item"], bins, resamples=200)
    assert all(c.value == 1.0 for c in gold)


def test_score_by_factor_gives_each_bin_the_blind_floor_of_its_questions(data_dir, tmp_path):
    """`score --by-factor` with the baselines (the build's per-question baselines file): every
    bin names the blind floor on its own questions, and a factor whose bins hold all of a
    task's questions averages (weighted by n) back to the floor of the task's column."""
    rows = _rows(data_dir)
    path = tmp_path / "gold.jsonl"
    path.write_text(
        "".join(json.dumps({"id": k, "prediction": v}) + "\n" for k, v in _gold(rows).items())
    )
    out = tmp_path / "gold.json"
    argv = ["score", "--dataset", str(data_dir), "--predictions", str(path), "--by-factor"]
    assert misi_bench.main([*argv, "--json-out", str(out)]) == 0
    result = json.loads(out.read_text())
    columns = result["blind_floor"]["score"]["columns"]
    checked = 0
    for task in ("translation", "rotation", "docking"):
        n_task = sum(1 for r in rows if r["task"] == task)
        column = f"T{TASK_BY_NAME[task].number}"
        for factor in result["by_factor"]["tasks"][task].values():
            bins = factor["bins"]
            assert all(b["floor"] is not None and 0 <= b["floor"] <= 1 for b in bins)
            if sum(b["n"] for b in bins) == n_task and column in columns:
                mean = sum(b["floor"] * b["n"] for b in bins) / n_task
                assert mean == pytest.approx(columns[column], abs=1e-6)  # bins rounded to 7 digits
                checked += 1
    assert checked >= 3


def test_chance_by_bin_is_a_random_answer_expected_score(data_dir):
    """A letter task's bins sit near one in four (four options, a random letter); every level is
    a score between 0 and 1; the same seed gives the same levels."""
    rows = _rows(data_dir)
    bins = _bins(data_dir, rows)
    levels = ft.chance_by_bin(rows, bins, draws=200)
    assert levels and all(0 <= v <= 1 for v in levels.values())
    letters = [v for (task, _, _), v in levels.items() if task == "translation_rotation"]
    assert letters and all(abs(v - 0.25) < 0.1 for v in letters)
    assert ft.chance_by_bin(rows, bins, draws=200) == levels
