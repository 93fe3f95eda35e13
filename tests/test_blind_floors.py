"""Issue 37: scores that mean the pictures were read. The `paper` profile's T8 options do not
point at the truth, its T7 shifts lie in the paper's 9-17 Å and T5/T6 draw exchangeable options,
all on real complexes the samples do not contain (``tests/data/heldout``); the blind floor and
a result's margin above it (``scoring.floors``) on a real build."""

from __future__ import annotations

import math

import numpy as np
import pytest
from misi_bench.builder import scoring
from misi_bench.builder.core.rows import SCORE_COLUMNS
from misi_bench.builder.dataset.units import AnnotationCache
from misi_bench.builder.operations.language import parse_operations
from misi_bench.builder.scoring import floors
from misi_bench.builder.scoring.blind import OPTION_RULES, rule_cells
from misi_bench.builder.store.parquet import iter_config_rows
from misi_bench.builder.store.sources import discover
from misi_bench.builder.tasks import generator
from misi_bench.builder.tasks import interaction_location as t8
from misi_bench.builder.tasks.base import TaskContext

HELDOUT = "tests/data/heldout"


@pytest.fixture(scope="module")
def heldout():
    refs = {r.pdb_id: r for r in discover(HELDOUT)}
    cache = AnnotationCache(refs, 10.0, 256)
    return cache, sorted(refs)


def _questions(heldout, task, seeds, **more):
    cache, ids = heldout
    for seed in seeds:
        for pdb_id in ids:
            ann = cache.get(pdb_id)
            ctx = TaskContext.for_task(task, ann, "train", seed, "paper", **more)
            for inst in generator(task)(ctx):
                yield ann, ctx, inst


def _raw_centroid(ann, hbond_text):
    bond = next(b for b in ann.hbonds if b.pocket_text() == hbond_text)
    return -(ann.screen[bond.protein_atom, :2] + ann.screen[bond.ligand_atom, :2]) / 2.0


def test_t8_paper_options_are_spread_and_never_the_other_rounding(heldout):
    n = far = flipped = 0
    right = dict.fromkeys(OPTION_RULES, 0)
    cells: dict[str, list] = {rule: [] for rule in OPTION_RULES}
    rng = np.random.default_rng(0)
    for ann, ctx, inst in _questions(heldout, "interaction_location", range(24)):
        opts = [tuple(op.magnitude for op in parse_operations(o)) for o in inst.options]
        truth = opts["ABCD".index(inst.answer)]
        assert truth == t8.centring_move(
            ctx, next(b for b in ann.hbonds if b.pocket_text() == inst.metadata["hbond"])
        )
        assert len(set(opts)) == 4 and (0, 0) not in opts
        for i in range(4):
            for j in range(i + 1, 4):
                assert max(abs(a - b) for a, b in zip(opts[i], opts[j])) >= 2, opts
        # a component within 0.25 Å of a .5 boundary: its other rounding is never an option
        raw = _raw_centroid(ann, inst.metadata["hbond"])
        for axis, value in enumerate(raw):
            if abs(abs(value) % 1.0 - 0.5) < 0.25:
                other = math.floor(value) if truth[axis] == math.ceil(value) else math.ceil(value)
                alt = list(truth)
                alt[axis] = other
                assert tuple(alt) not in opts
        # the wrong options change components by up to ~6 Å, and flip signs
        far += any(abs(a - b) >= 4 for o in opts for a, b in zip(o, truth))
        flipped += any(a * b < 0 for o in opts for a, b in zip(o, truth))
        record = {"task": "interaction_location", "options": list(inst.options)}
        for rule in OPTION_RULES:
            hit = scoring.options_only_prediction(rule, record, rng) == inst.answer
            right[rule] += hit
            cells[rule].append((str(n), "interaction_location", ann.pdb_id, float(hit)))
        n += 1
    assert n >= 300 and far > n / 2 and flipped > n / 4
    for rule, k in right.items():
        low = rule_cells(cells[rule])["interaction_location"]["ci95"][0]  # complexes resampled
        assert low < 0.30, (rule, k, n)  # no options-only rule clearly above chance
    assert right["option_medoid"] / n <= 0.32


def test_t7_paper_shifts_lie_in_the_papers_range(heldout):
    shifts = [
        abs(parse_operations(inst.answer)[1].distance)
        for _, _, inst in _questions(heldout, "docking", range(3))
    ]
    assert len(shifts) >= 100 and min(shifts) >= 9
    assert 9 <= float(np.median(shifts)) <= 17
    assert np.mean([9 <= d <= 17 for d in shifts]) > 0.8


def test_t5_t6_paper_options_are_exchangeable(heldout):
    cache, ids = heldout
    schemes = [
        inst.metadata["option_schemes"]
        for _, _, inst in _questions(
            heldout,
            "rotation_rotation",
            (0,),
            partners=ids,
            load_partner=cache.get,
        )
    ]
    assert schemes and all(s.count("balanced") == 3 and "correct" in s for s in schemes)


def _rows(data_dir, split):
    tasks = scoring.TASK_NAMES
    return [r for t in tasks for r in iter_config_rows(data_dir, t, split, list(SCORE_COLUMNS))]


def test_blind_floor_and_margins_on_a_real_build(data_dir):
    rows, train = _rows(data_dir, "test"), _rows(data_dir, "train")
    built = floors.blind_floor(rows, train)
    floor = built["score"]
    assert floor.values["T4_negative"] == 1.0 and floor.rules["T4_negative"] == "always_no"
    assert floor.values["T4_positive"] is not None and floor.paper_average is not None
    assert floor.paper_average == pytest.approx(
        sum(floor.values[c] for c in scoring.PAPER_AVERAGE_COLUMNS) / 8
    )
    gold = scoring.score_records(rows, {r["id"]: r["answer"] for r in rows})
    got = floors.margins(gold["per_item"], floor)
    for column, margin in got.items():
        assert margin.low <= margin.value <= margin.high
        expect = 1.0 - (floor.values[column] if column != "paper_average" else floor.paper_average)
        assert margin.value == pytest.approx(expect)
    # answering like the floor's rule: no margin in the columns that rule wins
    text = scoring.fit_text_only(train)
    preds = {r["id"]: text[r["task"]] for r in rows if r["task"] in text}
    same = floors.margins(scoring.score_records(rows, preds)["per_item"], floor)
    text_columns = [c for c, rule in floor.rules.items() if rule == "text_only" and c in same]
    assert text_columns
    for column in text_columns:  # the floor's own answers: exactly 0.0 [0.0, 0.0]
        assert (same[column].value, same[column].low, same[column].high) == (0.0, 0.0, 0.0)
    # per-question scores equal to the floor rule's on every question of every column (the
    # random rule's are means of draws, which no single answer gives): every margin, the
    # paper average's included, is exactly 0.0 [0.0, 0.0]
    polar = {
        r["id"]: scoring.score_prediction(r["task"], None, r["answer"], r.get("metadata"))
        for r in rows
    }
    like_floor = []
    for r in rows:
        column = floors.column_of(r["task"], polar[r["id"]])
        if r["id"] in floor.items.get(column, {}):
            metrics = {**polar[r["id"]], "score": floor.items[column][r["id"]]}
            like_floor.append(
                {
                    "id": r["id"],
                    "task": r["task"],
                    "complex": scoring.complex_of(r),
                    "metrics": metrics,
                }
            )
    zero = floors.margins(like_floor, floor)
    assert "paper_average" in zero and len(zero) == len(scoring.COLUMN_KEYS) + 1
    assert {(m.value, m.low, m.high) for m in zero.values()} == {(0.0, 0.0, 0.0)}
    # gold answers beat the floor; the interval is over complexes, inside what a margin can reach
    assert all(-1.0 <= m.low <= m.value <= m.high <= 1.0 for m in got.values())
    # the paper's rows beside it: the floor is a row of Table 1 with its paper average
    text_md = scoring.format_paper_rows_markdown(None, "paper", None, None, floors=built)
    line = next(x for x in text_md.splitlines() if floors.FLOOR_LABEL in x)
    assert line.rstrip(" |").split("|")[-1].strip() == f"{100 * floor.paper_average:.2f}"
