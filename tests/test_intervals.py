"""The one interval method (``scoring.bootstrap``: complexes resampled, percentile intervals),
paired differences and ``misi-bench compare``, on hand-made cases and on the small real build."""

from __future__ import annotations

import json

import numpy as np
import pytest
from misi_bench.builder import scoring
from misi_bench.builder.core.rows import SCORE_COLUMNS
from misi_bench.builder.scoring import bootstrap
from misi_bench.builder.scoring.columns import column_of
from misi_bench.builder.scoring.compare import compare_results
from misi_bench.builder.store.parquet import iter_config_rows

import misi_bench


def _items(n_complexes=30, seed=1, per_task=3):
    """Random per-question scores over every task (T4 alternating halves)."""
    rng = np.random.default_rng(seed)
    ids, tasks, units, cols, values = [], [], [], [], []
    for c in range(n_complexes):
        for task in scoring.TASK_NAMES:
            for k in range(per_task):
                ids.append(f"{task}-{c}-{k}")
                tasks.append(task)
                units.append(f"c{c:03d}")
                cols.append(column_of(task, {"polarity": float(k % 2)}))
                values.append(float(rng.random() < 0.4) if k else float(rng.random()))
    return ids, tasks, units, cols, values


def test_deterministic_whatever_the_input_order_and_named_in_the_json():
    ids, tasks, units, cols, values = _items()
    items = bootstrap.items_of(ids, tasks, units, cols, values)
    got = bootstrap.bootstrap_intervals(items)
    back = [list(reversed(x)) for x in (ids, tasks, units, cols, values)]
    assert bootstrap.bootstrap_intervals(bootstrap.items_of(*back)) == got
    assert bootstrap.bootstrap_intervals(items, seed=1) != got  # the seed is used
    block = bootstrap.interval_json(got, len(items.units))
    assert block["resamples"] == bootstrap.RESAMPLES == 2000 and block["seed"] == 0
    assert block["method"] == bootstrap.METHOD and "complex" in block["unit"]
    assert block["complexes"] == 30
    stats = block["statistics"]
    assert set(stats) == set(bootstrap.STATISTICS)
    for name, cell in stats.items():  # never outside what the statistic can reach
        assert 0.0 <= cell["ci95"][0] <= cell["value"] <= cell["ci95"][1] <= 1.0, name
    # the averages are recomputed on each resample: the paper average is the mean of the eight
    # column means, and narrower than a column's interval
    columns = [got[c].value for c in scoring.PAPER_AVERAGE_COLUMNS]
    assert got["paper_average"].value == pytest.approx(sum(columns) / 8)
    width = got["paper_average"].high - got["paper_average"].low
    assert width < min(got[c].high - got[c].low for c in scoring.PAPER_AVERAGE_COLUMNS)
    assert json.dumps(block) == json.dumps(bootstrap.interval_json(got, 30))


def test_a_complex_is_one_unit():
    """Ten questions of one complex are not ten independent draws: with all the scores of a
    task inside two complexes (all right in one, all wrong in the other), the interval spans
    [0, 1], where independent questions would give a narrow one."""
    ids = [f"q{k}" for k in range(20)]
    units = ["1abc"] * 10 + ["2xyz"] * 10
    values = [1.0] * 10 + [0.0] * 10
    items = bootstrap.items_of(ids, ["rotation"] * 20, units, ["T2"] * 20, values)
    got = bootstrap.bootstrap_intervals(items)["rotation"]
    assert (got.value, got.low, got.high, got.n) == (0.5, 0.0, 1.0, 20)
    assert got.se == pytest.approx(0.5**1.5, abs=0.03)  # sd of {1, .5, .5, 0}: 0.354


def test_paired_differences_and_the_sign_flip_test():
    ids, tasks, units, cols, values = _items()
    a = bootstrap.items_of(ids, tasks, units, cols, values)
    same = bootstrap.paired(a, a)
    zero = bootstrap.bootstrap_intervals(same)
    assert {(iv.value, iv.low, iv.high, iv.se) for iv in zero.values()} == {(0.0, 0.0, 0.0, 0.0)}
    assert set(bootstrap.paired_test(same).values()) == {1.0}
    gold = bootstrap.items_of(ids, tasks, units, cols, [1.0] * len(ids))
    diff = bootstrap.paired(gold, a)
    found = bootstrap.bootstrap_intervals(diff)
    p = bootstrap.paired_test(diff)
    assert found["paper_average"].value == pytest.approx(
        1.0 - bootstrap.bootstrap_intervals(a)["paper_average"].value
    )
    assert found["paper_average"].low > 0 and p["paper_average"] == pytest.approx(1 / 2001)
    # a result against a small perturbation of itself on two questions: not significant
    nudged = list(values)
    nudged[0], nudged[5] = 1.0 - nudged[0], 1.0 - nudged[5]
    near = bootstrap.paired(a, bootstrap.items_of(ids, tasks, units, cols, nudged))
    assert bootstrap.paired_test(near)["average_all_tasks"] > 0.05
    with pytest.raises(ValueError, match="another complex"):
        bootstrap.paired(a, bootstrap.items_of(ids, tasks, ["x"] * len(ids), cols, values))


def _score(data_dir, tmp_path, name, answer):
    rows = [
        r
        for t in scoring.TASK_NAMES
        for r in iter_config_rows(data_dir, t, "test", list(SCORE_COLUMNS))
    ]
    preds = tmp_path / f"{name}.jsonl"
    rng = np.random.default_rng(3)
    preds.write_text(
        "".join(json.dumps({"id": r["id"], "prediction": answer(r, rng)}) + "\n" for r in rows)
    )
    out = tmp_path / f"{name}.json"
    argv = ["score", "--dataset", str(data_dir), "--predictions", str(preds), "--no-baselines"]
    assert misi_bench.main([*argv, "--json-out", str(out)]) == 0
    return out


def test_compare_on_a_real_build(data_dir, tmp_path, capsys):
    gold = _score(data_dir, tmp_path, "gold", lambda r, rng: r["answer"])
    rand = _score(
        data_dir,
        tmp_path,
        "random",
        lambda r, rng: scoring.baseline_prediction("random", r["task"], r, rng),
    )
    capsys.readouterr()
    assert misi_bench.main(["compare", str(gold), str(gold)]) == 0
    lines = capsys.readouterr().out.splitlines()
    head = next(x for x in lines if x.startswith("| paper_average |"))
    assert head.endswith("| +0.00 | [+0.00, +0.00] | 1.0000 |")
    out = tmp_path / "cmp.json"
    assert misi_bench.main(["compare", str(gold), str(rand), "--json-out", str(out)]) == 0
    data = json.loads(out.read_text())
    stats = data["difference"]["statistics"]
    a, b = json.loads(gold.read_text()), json.loads(rand.read_text())
    assert stats["paper_average"]["value"] == pytest.approx(
        a["report"]["paper_average"] - b["report"]["paper_average"], abs=1e-6
    )
    assert stats["paper_average"]["ci95"][0] > 0  # gold is above random on every resample
    assert data["difference"]["test"] == bootstrap.TEST and data["questions"] == len(a["per_item"])
    # two test complexes allow four sign patterns: no test can call it significant (stated)
    assert stats["paper_average"]["p_value"] > 0.05
    # another build: refused with one line naming both
    other = dict(b, config_hash="0123456789abcdef")
    other_path = tmp_path / "other.json"
    other_path.write_text(json.dumps(other))
    assert misi_bench.main(["compare", str(gold), str(other_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "0123456789abcdef" in err[0] and a["config_hash"] in err[0]
    assert str(gold) in err[0] and str(other_path) in err[0]


def test_compare_refuses_a_file_without_per_question_results(data_dir, tmp_path):
    gold = json.loads(_score(data_dir, tmp_path, "g", lambda r, rng: r["answer"]).read_text())
    bare = {k: v for k, v in gold.items() if k != "per_item"}
    with pytest.raises(misi_bench.MisiError, match="no per-question results"):
        compare_results(gold, bare, "gold", "bare")


@pytest.mark.slow  # a build of the 19 embedded complexes (two configs): about a minute
def test_compare_gold_and_random_is_significant_on_nineteen_complexes(tmp_path, capsys):
    from misi_bench.builder.dataset.build import build_dataset

    out = tmp_path / "b19"
    configs = ["translation", "residue_ligand"]
    build_dataset(source="samples", out=out, tasks=configs, progress=False, audit=False)
    rows = [r for t in configs for r in iter_config_rows(out, t, "train", list(SCORE_COLUMNS))]
    assert len({scoring.complex_of(r) for r in rows}) >= 12
    paths = {}
    for name in ("gold", "random"):
        rng = np.random.default_rng(5)
        preds = tmp_path / f"{name}.jsonl"
        preds.write_text(
            "".join(
                json.dumps(
                    {
                        "id": r["id"],
                        "prediction": r["answer"]
                        if name == "gold"
                        else scoring.baseline_prediction("random", r["task"], r, rng),
                    }
                )
                + "\n"
                for r in rows
            )
        )
        paths[name] = tmp_path / f"{name}.json"
        argv = ["score", "--dataset", str(out), "--predictions", str(preds), "--split", "train"]
        assert misi_bench.main([*argv, "--no-baselines", "--json-out", str(paths[name])]) == 0
    cmp = tmp_path / "cmp.json"
    assert (
        misi_bench.main(
            ["compare", str(paths["gold"]), str(paths["random"]), "--json-out", str(cmp)]
        )
        == 0
    )
    stats = json.loads(cmp.read_text())["difference"]["statistics"]
    for name in ("translation", "residue_ligand", "average_all_tasks"):
        assert stats[name]["p_value"] < 0.01 and stats[name]["ci95"][0] > 0, name
    assert (
        misi_bench.main(["compare", str(paths["gold"]), str(paths["gold"]), "--json-out", str(cmp)])
        == 0
    )
    same = json.loads(cmp.read_text())["difference"]["statistics"]
    assert {(s["value"], *s["ci95"], s["p_value"]) for s in same.values()} == {(0.0, 0.0, 0.0, 1.0)}


def test_per_question_records_without_complexes_get_no_interval(data_dir, tmp_path):
    """Records written before the intervals resampled complexes (no ``complex``): ``compare``
    refuses them and ``report`` gives no interval, rather than resampling questions."""
    from misi_bench.eval_plugins.report.intervals import column_intervals

    gold = json.loads(_score(data_dir, tmp_path, "g", lambda r, rng: r["answer"]).read_text())
    assert column_intervals(gold["per_item"])  # with complexes: intervals
    old = dict(
        gold, per_item=[{k: v for k, v in i.items() if k != "complex"} for i in gold["per_item"]]
    )
    assert column_intervals(old["per_item"]) == {}
    with pytest.raises(misi_bench.MisiError, match="do not name their complex"):
        compare_results(old, gold, "old", "gold")


def test_score_prints_zero_margin_for_the_floors_own_answers(data_dir, tmp_path, capsys):
    """``score`` on predictions that are the floor rule's answers (the train split's most
    frequent answer, in the columns where that rule is the floor): "+0.0 [+0.0, +0.0]"."""
    from misi_bench.builder.scoring import floors

    split = {
        s: [
            r
            for t in scoring.TASK_NAMES
            for r in iter_config_rows(data_dir, t, s, list(SCORE_COLUMNS))
        ]
        for s in ("train", "test")
    }
    floor = floors.blind_floor(split["test"], split["train"])["score"]
    text = scoring.fit_text_only(split["train"])
    out = _score(data_dir, tmp_path, "text", lambda r, rng: text[r["task"]])
    argv = ["score", "--dataset", str(data_dir), "--predictions", str(tmp_path / "text.jsonl")]
    assert misi_bench.main([*argv, "--json-out", str(out)]) == 0
    line = next(
        x
        for x in capsys.readouterr().out.splitlines()
        if x.startswith("| this result minus floor |")
    )
    cells = dict(zip(scoring.COLUMN_KEYS, [c.strip() for c in line.split("|")[2:-2]]))
    columns = [c for c, rule in floor.rules.items() if rule == "text_only"]
    assert columns and all(cells[c] == "+0.0 [+0.0, +0.0]" for c in columns), cells
    margins = json.loads(out.read_text())["blind_floor"]["score"]["margins"]
    assert all(margins[c]["margin"] == 0.0 and margins[c]["ci95"] == [0.0, 0.0] for c in columns)


def test_harness_fields_left_alone_when_this_process_scored_only_a_share():
    """Several ranks: a process that scored fewer questions than the harness counted leaves the
    harness's fields as they were (no interval from a part of the questions)."""
    from misi_bench.eval_plugins import harness_intervals

    harness_intervals.reset()
    for k in range(3):
        doc = {"id": f"q{k}", "task": "rotation", "pdb_id": f"c{k}"}
        harness_intervals.collect(doc, {"score": 1.0, "exact": 1.0})
    results = {
        "results": {"misi": {"score_stderr,none": "N/A"}, "misi_rotation": {"score,none": 1.0}},
        "n-samples": {"misi_rotation": {"effective": 4}},
    }
    harness_intervals.add_intervals(results)
    assert (
        "misi_intervals" not in results and results["results"]["misi"]["score_stderr,none"] == "N/A"
    )
    results["n-samples"]["misi_rotation"]["effective"] = 3
    harness_intervals.add_intervals(results)
    block = results["misi_intervals"]["test"]
    assert block["statistics"]["rotation"]["ci95"] == [1.0, 1.0] and block["complexes"] == 3
    assert results["results"]["misi"]["score_stderr,none"] == 0.0
    harness_intervals.reset()


def test_a_baseline_cell_from_few_complexes_never_counts_as_beating_chance():
    """Two complexes whose options-only answers are right half the time: the bootstrap over two
    clusters gives an interval clear of chance (too narrow), so the cell counts its complexes
    and ``chance_excess`` does not read it; the same rate over 25 complexes is read."""
    from misi_bench.builder.scoring.blind import MIN_COMPLEXES, chance_excess, rule_cells

    def cells(n_complexes: int) -> dict:
        scores = [
            (f"q{c}-{k}", "rotation_rotation", f"c{c:02d}", float(k % 2))
            for c in range(n_complexes)
            for k in range(4)
        ]
        return rule_cells(scores)["rotation_rotation"]

    few, many = cells(2), cells(25)
    assert few["complexes"] == 2 and many["complexes"] == 25 >= MIN_COMPLEXES
    assert few["ci95"][0] > 0.25  # the narrow interval the count guards against
    assert chance_excess(few) == float("-inf")
    assert chance_excess(many) == pytest.approx(many["ci95"][0] - 0.25)
    assert chance_excess({k: v for k, v in few.items() if k != "complexes"}) > 0  # older cells
