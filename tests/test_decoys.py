"""Decoy modes and blind baselines (issue 24, docs/decoys.md): the options-only and text-only
rules, the ``balanced`` option sets (no centre), both modes on the embedded samples, and the
baselines every build writes."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest
from misi_bench.builder.checks import blind
from misi_bench.builder.core.errors import MisiError
from misi_bench.builder.core.registry import TASK_NAMES
from misi_bench.builder.dataset.build import build_dataset
from misi_bench.builder.dataset.config import BuildConfig
from misi_bench.builder.dataset.units import AnnotationCache
from misi_bench.builder.operations.language import AXES, Move, Roll
from misi_bench.builder.scoring import blind as sblind
from misi_bench.builder.scoring import fit_text_only, reference_scores
from misi_bench.builder.scoring.kinds import kind_of
from misi_bench.builder.tasks import generator
from misi_bench.builder.tasks import interaction_location as t8
from misi_bench.builder.tasks.base import LETTERS, TaskContext
from misi_bench.builder.tasks.choice import build_options, make_decoy
from misi_bench.builder.tasks.data import task_data, task_profile
from misi_bench.builder.tasks.decoys import balanced_pairs, flipped_moves

from card_support import front_matter, sections, tables
from cli_support import CLI

#: The tasks whose answer kind carries options (the registry's, asked of the kind).
CHOICE = tuple(t for t in TASK_NAMES if kind_of(t).carries_options)


def _t8_record(options, answer="A"):
    return {
        "task": "interaction_location",
        "options": [t8.option_text(o) for o in options],
        "answer": answer,
    }


# ---------------------------------------------------------------------------- options-only rules


def test_option_rules_on_small_sets():
    rng = np.random.default_rng(0)
    # (2, 3) is nearest to the other three; it also has the median magnitudes
    options = [(2, 3), (-1, 3), (2, 6), (3, 3)]
    assert sblind.options_only_prediction("option_medoid", _t8_record(options), rng) == "A"
    assert sblind.options_only_prediction("magnitude_median", _t8_record(options), rng) == "A"
    # sign majority: x is + in three options, y + in all four; only B disagrees
    assert sblind.options_only_prediction("sign_majority", _t8_record(options), rng) != "B"
    assert sblind.option_vectors(["move x 1, move y 2", "move x 1"]) is None  # different shapes
    assert (
        sblind.options_only_prediction(
            "option_medoid", {"task": "rotation_rotation", "options": ["image 5"] * 4}, rng
        )
        is None
    )
    with pytest.raises(ValueError, match="unknown options-only rule"):
        sblind.rule_scores("nearest", np.zeros((4, 2)))


def test_ties_are_broken_at_random():
    picks = {
        sblind.pick_lowest(np.array([1.0, 1.0, 2.0, 1.0]), np.random.default_rng(s))
        for s in range(40)
    }
    assert picks == {"A", "B", "D"}


def test_baseline_cells_resample_complexes_and_text_only():
    # one complex answers 3 of its 3 questions right, the other 0 of 1: the cell's mean is 3/4,
    # and a resample of two complexes draws the first twice (1.0), the second twice (0.0) or
    # both (0.75), each extreme with probability 1/4: the interval is [0, 1], not the Wilson
    # interval of four independent questions ([30, 95])
    scores = [(f"a{k}", "interaction_location", "1abc", 1.0) for k in (1, 2, 3)]
    scores.append(("b1", "interaction_location", "2xyz", 0.0))
    cell = sblind.rule_cells(scores)["interaction_location"]
    assert cell == {"n": 4, "complexes": 2, "score": 0.75, "ci95": [0.0, 1.0]}
    assert sblind.rule_cells(list(reversed(scores))) == {"interaction_location": cell}
    train = [
        {"task": "translation", "answer": a} for a in ("move x 3", "move x +3", "move y 1")
    ] + [{"task": "residue_ligand", "answer": a} for a in ("No", "No", "Yes: ASN 460 OD1, N3")]
    model = fit_text_only(train)
    assert model == {
        "residue_ligand": "No",
        "translation": "move x 3",
    }  # canonical forms counted together


def test_options_only_gate():
    data = {
        "chance": 0.25,
        "splits": {
            "test": {
                "option_medoid": {
                    "interaction_location": {
                        "n": 1000,
                        "score": 0.48,
                        "ci95": [0.449, 0.511],
                    }
                }
            }
        },
    }
    gate = blind.options_only_gate(data)
    assert not gate["ok"] and "interaction_location test" in gate["problems"][0]
    small = {
        "chance": 0.25,
        "splits": {
            "test": {
                "option_medoid": {
                    "interaction_location": {
                        "n": 9,
                        "score": 0.44,
                        "ci95": [0.137, 0.788],
                    }
                }
            }
        },
    }
    assert blind.options_only_gate(small)["ok"]  # a few lucky questions do not fail a build


# ---------------------------------------------------------------------------- balanced sets: no centre


def _medoid_share(draw, n, seed=0) -> float:
    rng = np.random.default_rng(seed)
    hits = 0.0
    for _ in range(n):
        vectors, correct = draw(rng)
        scores = sblind.rule_scores("option_medoid", np.asarray(vectors, dtype=float))
        tied = np.flatnonzero(scores <= scores.min() + 1e-9)
        hits += (correct in tied) / len(tied)
    return hits / n


def _truth(rng):
    while True:
        t = (int(rng.integers(-12, 13)), int(rng.integers(-12, 13)))
        if t != (0, 0):
            return t


def _prior_truth(rng, sd: float):
    """A true centring move as real complexes give them: small, normal about 0 with spread ``sd``
    per component (docs/decoys.md: the answer spread follows the ligand's N/O spread)."""
    while True:
        t = tuple(int(v) for v in np.rint(rng.normal(0.0, sd, size=2)))
        if t != (0, 0):
            return t


def _uniform_kernel(truth, rng, correct, spread=2):
    """The ``balanced`` T8 rule before issue 53 (``t - p_j + p_i``, ``p`` uniform), kept here
    only to show what it leaked."""
    t = np.asarray(truth)
    while True:
        p = rng.integers(-spread, spread + 1, size=(4, 2))
        options = [tuple(int(v) for v in t - p[correct] + p[i]) for i in range(4)]
        if len(set(options)) == 4 and (0, 0) not in options:
            return options


def _rule_shares(draw, n: int, seed: int = 0) -> dict[str, float]:
    """Share of ``n`` drawn T8 option sets whose truth each options-only rule picks (ties split)."""
    rng = np.random.default_rng(seed)
    hits = dict.fromkeys(sblind.OPTION_RULES, 0.0)
    for _ in range(n):
        vectors, correct = draw(rng)
        vectors = np.asarray(vectors, dtype=float)
        for rule in sblind.OPTION_RULES:
            scores = sblind.rule_scores(rule, vectors)
            tied = np.flatnonzero(scores <= scores.min() + 1e-9)
            hits[rule] += (correct in tied) / len(tied)
    return {rule: h / n for rule, h in hits.items()}


@pytest.mark.parametrize("sd", [3.0, 6.0])
def test_balanced_t8_sets_leave_every_options_only_rule_near_chance(sd):
    """``--decoys balanced`` T8 sets (``flipped_moves`` with the task's ``decoys``) on truths drawn
    as real centring moves are: every options-only rule, the smallest move included, picks the
    truth within a few points of 1 in 4 (the redraw of rejected sets for a fixed truth leaves a
    small excess, larger for very narrow answer spreads: docs/decoys.md). The uniform kernel used
    before fails the smallest-move rule by far more."""
    settings = task_data("interaction_location").decoys

    def balanced(rng):
        truth, correct = _prior_truth(rng, sd), int(rng.integers(4))
        options = flipped_moves(truth, rng, correct, settings, sd)
        assert options is not None and options[correct] == truth
        assert len(set(options)) == 4 and (0, 0) not in options
        return options, correct

    def before(rng):
        truth, correct = _prior_truth(rng, sd), int(rng.integers(4))
        return _uniform_kernel(truth, rng, correct), correct

    shares = _rule_shares(balanced, 3000)
    assert all(0.20 <= v <= 0.31 for v in shares.values()), shares
    old = _rule_shares(before, 2000)["nearest_zero"]
    assert old >= 0.32 and old >= shares["nearest_zero"] + 0.05, (old, shares)


def test_paper_decoys_of_the_explicit_profile_centre_the_truth():
    def paper(rng):
        truth, correct = _prior_truth(rng, 6.0), int(rng.integers(4))
        opts = [truth]
        while len(opts) < 4:
            cand = (t8._perturb(rng, truth[0]), t8._perturb(rng, truth[1]))
            if cand not in opts and cand != (0, 0):
                opts.append(cand)
        return opts[1 : correct + 1] + [truth] + opts[correct + 1 :], correct

    assert _rule_shares(paper, 2000)["option_medoid"] >= 0.40  # the truth sits in the centre


def _pair_vector(ops):
    """An operation pair as signed magnitudes per (kind, axis): moves in Å, rolls in 15° steps."""
    v = np.zeros(10)
    for k, op in enumerate(ops):
        scale = 1.0 if isinstance(op, Move) else 1 / 15
        v[5 * k + (0 if isinstance(op, Move) else 2) + AXES.index(op.axis)] = op.magnitude * scale
    return v


@pytest.mark.parametrize("task", ["translation_rotation", "rotation_rotation"])
def test_balanced_pairs_carry_no_centre(task):
    p = task_profile(task, "explicit").params
    settings = task_data(task).decoys
    if task == "translation_rotation":
        specs, axes, distinct = (p["move_distance"], p["roll_angle"]), (("x", "y"), AXES), False
    else:
        specs, axes, distinct = (p["roll_angle"], p["roll_angle"]), (AXES, AXES), True

    def centre(rng):
        if distinct:
            a1, a2 = [AXES[i] for i in rng.choice(3, size=2, replace=False)]
            return Roll(a1, 15 * int(rng.integers(1, 7))), Roll(a2, -15 * int(rng.integers(1, 7)))
        return Move(axes[0][int(rng.integers(2))], int(rng.integers(1, 5))), Roll(
            AXES[int(rng.integers(3))], 45
        )

    def balanced(rng):
        correct = int(rng.integers(4))
        options = balanced_pairs(centre(rng), rng, specs, axes, distinct, settings)
        assert len(set(options)) == 4
        if distinct:
            assert all(a.axis != b.axis for a, b in options)
        return [_pair_vector(o) for o in options], correct

    def paper(rng):
        f1, f2 = centre(rng)
        correct = int(rng.integers(4))
        options, _ = build_options(
            (f1, f2),
            rng,
            correct,
            lambda s, r: make_decoy(s, f1, f2, r, specs[0], specs[1], axes[0]),
            lambda a, b: False,
            50,
        )
        return [_pair_vector(o) for o in options], correct

    assert 0.21 <= _medoid_share(balanced, 3000) <= 0.29
    assert _medoid_share(paper, 1500) >= 0.33


# ---------------------------------------------------------------------------- both modes on the samples


@pytest.fixture(scope="module")
def sample_cache(sample_refs):
    refs = {r.pdb_id: r for r in sample_refs}
    return refs, AnnotationCache(refs, 10.0, 512)


@pytest.mark.parametrize("mode", ["paper", "balanced"])
def test_both_modes_on_embedded_samples(sample_cache, mode):
    refs, cache = sample_cache
    ids = sorted(refs)[:4]
    letters = []
    for task in CHOICE:
        for pdb_id in ids:
            ctx = TaskContext.for_task(
                task,
                cache.get(pdb_id),
                "train",
                3,
                "explicit",
                partners=[p for p in ids if p != pdb_id],
                load_partner=cache.get,
                decoys=mode,
            )
            for inst in generator(task)(ctx):
                meta = inst.metadata
                options = [tuple(o) for o in meta["option_operations"]]
                assert len(set(options)) == 4 and len(set(inst.options)) == 4
                assert (
                    list(options[LETTERS.index(inst.answer)]) == meta["operations"]
                )  # the truth is the answer
                if (
                    task == "interaction_location"
                ):  # the truth is the centring move whatever the mode
                    bond = next(b for b in ctx.ann.hbonds if b.pocket_text() == meta["hbond"])
                    assert inst.options[LETTERS.index(inst.answer)] == t8.option_text(
                        t8.centring_move(ctx, bond)
                    )
                else:
                    assert ("balanced" in meta["option_schemes"]) == (mode == "balanced")
                letters.append(inst.answer)
    assert set(letters) == set(LETTERS)


def test_decoy_mode_in_config_identity():
    paper, balanced = BuildConfig(), BuildConfig(decoys="balanced")
    assert "decoys" not in paper.generation_fields()  # legacy value: hash and manifest as before
    fields = balanced.generation_fields()
    assert fields["decoys"] == "balanced" and all(
        fields["task_data"][t]["decoys_version"] == task_data(t).decoys["version"] for t in CHOICE
    )
    assert paper.config_hash != balanced.config_hash
    with pytest.raises(MisiError, match="unknown decoy mode"):
        BuildConfig(decoys="fair")


# ---------------------------------------------------------------------------- on every build


def test_every_build_writes_blind_baselines(data_dir):
    data = blind.read_blind(data_dir)
    assert data is not None and set(data["splits"]) == {"train", "test"}
    test = data["splits"]["test"]
    assert {
        "option_medoid",
        "sign_majority",
        "magnitude_median",
        "options_best",
        "text_only",
    } <= set(test)
    t5_ids = {i for i in data["image_answers"]["test"] if i.startswith("translation_rotation-")}
    assert t5_ids and set(data["image_answers"]["test"].values()) <= set(LETTERS)
    assert test["option_image_medoid"]["translation_rotation"]["n"] == len(t5_ids)
    card = (data_dir / "README.md").read_text(encoding="utf-8")
    chance = sections(front_matter(card)[1])["Chance levels on this build"]
    labels = [r["baseline"] for table in tables(chance) for r in table]
    for name in (
        "text only: train's most frequent answer",
        "options only: best rule",
        "options only: option image nearest the others",
    ):
        assert any(label.startswith(name) for label in labels), (name, labels)
    assert "Decoy mode of this build: **paper**" in chance
    # the same figures through the scorer's entry point on the same rows
    import pyarrow.parquet as pq

    rows = pq.read_table(
        data_dir / "interaction_location" / "test-00000-of-00001.parquet",
        columns=["id", "task", "answer", "metadata", "options"],
    ).to_pylist()
    again = reference_scores(rows, seed=data["seed"])
    assert again["option_medoid"]["interaction_location"]["score"] == pytest.approx(
        test["option_medoid"]["interaction_location"]["score"]
    )
    assert {"random", "always_no"} <= set(again)


def test_score_command_prints_baselines(data_dir, tmp_path):
    import pyarrow.parquet as pq

    rows = pq.read_table(
        data_dir / "interaction_location" / "test-00000-of-00001.parquet", columns=["id", "answer"]
    ).to_pylist()
    preds = tmp_path / "p.jsonl"
    preds.write_text(
        "".join(json.dumps({"id": r["id"], "prediction": r["answer"]}) + "\n" for r in rows)
    )
    out = tmp_path / "s.json"
    proc = subprocess.run(
        [
            *CLI,
            "score",
            "--dataset",
            str(data_dir),
            "--predictions",
            str(preds),
            "--configs",
            "interaction_location",
            "--json-out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "options only: option nearest the others | test |" in proc.stdout
    summary = json.loads(out.read_text())
    assert summary["report"]["tasks"]["interaction_location"]["score"] == 1.0
    assert set(summary["baselines"]) >= {
        "random",
        "always_no",
        "option_medoid",
        "options_best",
        "text_only",
    }


@pytest.mark.slow
def test_balanced_build_on_samples(tmp_path):
    out = tmp_path / "balanced"
    manifest = build_dataset(
        source="samples",
        out=out,
        tasks=CHOICE,
        limit=8,
        workers=1,
        progress=False,
        decoys="balanced",
    )
    assert manifest["config"]["decoys"] == "balanced" and manifest["validation"]["ok"]
    gate = manifest["audit"]["options_only"]
    assert gate["ok"] and set(gate["worst"]) == set(CHOICE)
    assert not [i for t in manifest["audit"]["tasks"].values() for i in t.get("ambiguous", [])]
    assert "Decoy mode of this build: **balanced**" in (out / "README.md").read_text(
        encoding="utf-8"
    )
