"""The answer kinds (builder/scoring/kinds/): one object per kind owns its answers.

Each kind reads its gold answers strictly and scores them 1, reads real replies leniently,
gives an unread reply the same metric keys at 0, draws chance answers its own gold reader
accepts, names its metadata type and checks the options a row carries. Outside
``builder/core`` and the kinds folder no code compares kind names (an ``ast`` scan, with a
self-test), so a new kind is one module there and its tests.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import random
from pathlib import Path

import numpy as np
import pytest
from misi_bench.builder.core import registry
from misi_bench.builder.core.rows import ChoiceMeta, QuestionMeta, metadata_type
from misi_bench.builder.operations.language import parse_operations
from misi_bench.builder.scoring import baseline_prediction, score_prediction
from misi_bench.builder.scoring.bonds import BondAnswer
from misi_bench.builder.scoring.kinds import KINDS, kind_of
from misi_bench.builder.scoring.parsing import parse_prediction

from task_expect import expect

ROOT = Path(__file__).resolve().parent.parent
#: The registry's kind constants (every upper-case name of ``builder/core/registry.py`` whose
#: value is a kind the tasks name): comparing against one of them (or ``answer_kind``) is
#: branching on the kind.
KIND_NAMES = {
    name
    for name, value in vars(registry).items()
    if name.isupper() and isinstance(value, str) and value in registry.ANSWER_KINDS
}
#: Where comparing kinds is the job: the registry and records (core) and the kinds themselves.
OWNERS = ("builder/core/", "builder/scoring/kinds/")
#: The most places outside the owners that may compare against a kind (issue 41: at most five).
MAX_OUTSIDE = 5
#: The first task of each kind, by kind name (its examples are written for it).
FIRST_OF_KIND: dict[str, registry.TaskSpec] = {}
for _spec in registry.TASK_SPECS:
    FIRST_OF_KIND.setdefault(_spec.answer_kind, _spec)


def test_every_registry_kind_has_its_object_and_metadata_type():
    assert tuple(KINDS) == registry.ANSWER_KINDS  # the kinds list is the registry's
    assert len(KIND_NAMES) >= len(KINDS) - 1  # the constants are seen (a new kind may have none)
    for name, kind in KINDS.items():
        assert kind.name == name and kind.metadata is metadata_type(FIRST_OF_KIND[name].name)
        assert issubclass(kind.metadata, QuestionMeta)
        assert type(kind).__module__.endswith(f"kinds.{name}")  # found by its name
    with pytest.raises(ValueError, match="unknown MiSI-Bench task"):
        kind_of("no_such_task")


@pytest.mark.parametrize("spec", registry.TASK_SPECS, ids=lambda s: s.name)
def test_a_kind_reads_gold_and_unread_answers(spec):
    kind = kind_of(spec)
    gold = expect(spec.name)["gold"]
    value = kind.gold(spec, gold)
    assert kind.gold(spec, kind.format(value)) == value  # written back, read the same
    parsed = score_prediction(spec.name, gold, gold)
    assert parsed["score"] == parsed["exact"] == parsed["parsed"] == 1.0
    unread = score_prediction(spec.name, "I cannot tell from these pictures.", gold)
    assert unread["parsed"] == 0.0 and set(unread) == set(parsed)  # same keys, all at 0
    assert not any(v for k, v in unread.items() if k != spec.halves)  # halves: the gold's half
    with pytest.raises(ValueError):
        kind.gold(spec, "not an answer of any kind; 12")


@pytest.mark.parametrize("spec", registry.TASK_SPECS, ids=lambda s: s.name)
def test_a_kind_reads_real_replies_and_scores_its_examples(spec):
    """The kind's own examples for the task: its golds read strictly and score 1, the replies
    as models write them read as it says, the sample replies score what it says."""
    kind = kind_of(spec)
    examples = kind.examples(spec)
    assert examples.golds and examples.reads and examples.scores
    for gold in examples.golds:
        assert kind.gold(spec, kind.format(kind.gold(spec, gold))) == kind.gold(spec, gold)
        assert score_prediction(spec.name, gold, gold)["exact"] == 1.0
    for reply, want in examples.reads:
        assert kind.format(parse_prediction(spec.name, reply)) == want, (reply, want)
    for gold, reply, want in examples.scores:
        got = score_prediction(spec.name, reply, gold)["score"]
        assert got == pytest.approx(want), (gold, reply, got, want)


@pytest.mark.parametrize("spec", registry.TASK_SPECS, ids=lambda s: s.name)
def test_drawn_and_reworded_golds_score_one(spec):
    """What the property tests draw: gold answers the kind reads strictly and that score 1,
    written again as a model might and still scoring 1."""
    kind, rng = kind_of(spec), random.Random(0)
    for _ in range(50):
        gold = kind.draw_gold(spec, rng)
        kind.gold(spec, gold)
        assert score_prediction(spec.name, gold, gold)["score"] == 1.0, gold
        reply = kind.reword(spec, gold, rng)
        assert score_prediction(spec.name, reply, gold)["score"] == 1.0, (gold, reply)


@pytest.mark.parametrize("spec", registry.TASK_SPECS, ids=lambda s: s.name)
def test_chance_answers_are_answers_the_kind_reads(spec):
    kind, rng = kind_of(spec), np.random.default_rng(0)
    record = {"options": ["w", "x", "y", "z"]}
    for _ in range(20):
        answer = baseline_prediction("random", spec.name, record, rng)
        kind.gold(spec, answer)  # raises when the kind's own reader refuses it
        if kind.carries_options:
            assert answer in "ABCD"
        if kind.needs_commands:
            assert len(parse_operations(answer)) == len(spec.commands)
    assert baseline_prediction("always_no", spec.name, record, rng) == spec.constant_answer


def test_bond_kinds_differ_only_in_their_answer_form():
    residue, pocket = KINDS[registry.RESIDUE_BONDS], KINDS[registry.POCKET_BONDS]
    t4, t9 = FIRST_OF_KIND[residue.name], FIRST_OF_KIND[pocket.name]
    r = residue.gold(t4, "Yes: ASN OD1, O1B; ARG NH2, O3")
    p = pocket.gold(t9, "ASN 460 OD1 A, O1B")
    assert r == BondAnswer(True, frozenset({("ASN", "OD1", "O1B"), ("ARG", "NH2", "O3")}))
    assert p == BondAnswer(True, frozenset({("ASN", "460", "OD1", "A", "O1B")}))
    with pytest.raises(ValueError):
        residue.gold(t4, "ASN 460 OD1 A, O1B")  # the pocket's form
    # T9's exact match the paper's way is a pocket-bonds reading only
    both = score_prediction(t9.name, "ASN 460 OD1 A, O1B", "ASN 460 OD1 A, O1B")
    assert both["exact_bonds_present"] == 1.0
    assert "exact_bonds_present" not in score_prediction(t4.name, "No", "No")


def test_letter_rows_are_checked_against_their_metadata():
    letter = KINDS[registry.LETTER]
    meta = ChoiceMeta(
        task="any",
        pdb_id="1hvr",
        k=0,
        seed=0,
        split="test",
        template_version="1",
        params_version="1",
        camera=None,
        operations=("move x 2",),
        option_operations=(("move x 2",), ("move x 3",), ("move y 1",), ("move y 2",)),
        correct="A",
    )
    row = {"id": "q", "options": ["a", "b", "c", "d"], "answer": "A"}
    assert letter.row_problems(row, meta) == []
    same = dataclasses.replace(meta, option_operations=(("move x 2",),) * 4)
    assert any("same option_operations" in p for p in letter.row_problems(row, same))
    assert any("metadata.correct" in p for p in letter.row_problems({**row, "answer": "B"}, meta))
    assert any("1 options" in p for p in letter.row_problems({**row, "options": ["a"]}, meta))
    # a command answer carries no options
    assert KINDS[registry.SINGLE_OPERATION].row_problems({"id": "q", "options": ["a"]}, meta)


def test_the_pixel_solver_mode_is_the_single_operation_kinds():
    modes = {s.name: kind_of(s).pixel_solver_mode(s) for s in registry.TASK_SPECS}
    singles = {
        s.name for s in registry.TASK_SPECS if kind_of(s) is KINDS[registry.SINGLE_OPERATION]
    }
    assert {t for t, m in modes.items() if m} <= singles
    assert set(modes.values()) <= {None, "shift", "depth"}


def kind_comparisons(source: str) -> list[int]:
    """Lines of ``source`` that compare against an answer kind: a comparison (``==``, ``!=``,
    ``in``, ``not in``) with a kind constant, or with an ``answer_kind`` attribute."""

    def names(node):
        return {
            n.id if isinstance(n, ast.Name) else n.attr
            for n in ast.walk(node)
            if isinstance(n, (ast.Name, ast.Attribute))
        }

    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare) and (names(node) & (KIND_NAMES | {"answer_kind"})):
            lines.append(node.lineno)
    return lines


def _outside_owners() -> dict[str, list[int]]:
    found = {}
    for folder in ("builder", "eval_plugins", "scripts"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel.startswith(OWNERS):
                continue
            lines = kind_comparisons(path.read_text(encoding="utf-8"))
            if lines:
                found[rel] = lines
    return found


def test_at_most_five_places_outside_the_owners_compare_kinds():
    found = _outside_owners()
    assert sum(len(v) for v in found.values()) <= MAX_OUTSIDE, found
    assert not found, found  # today: none


def test_no_test_module_but_the_kinds_own_compares_kinds():
    """The tests ask the kind (its attributes and examples) instead of branching on its name:
    only the kinds' own test modules (this one, ``test_kind_<name>.py``) compare kinds."""
    found = {}
    for path in sorted((ROOT / "tests").glob("*.py")):
        if path.name == Path(__file__).name or path.name.startswith("test_kind_"):
            continue
        lines = kind_comparisons(path.read_text(encoding="utf-8"))
        if lines:
            found[path.name] = lines
    assert not found, found


def test_the_kind_scan_sees_a_planted_comparison():
    planted = "if spec.answer_kind == LETTER:\n    pass\nx = t in (POCKET_BONDS,)\ny = a == b\n"
    assert kind_comparisons(planted) == [1, 3]


def test_the_build_refuses_a_row_that_breaks_a_contract_by_name():
    """An undeclared metadata field or a letter row whose options do not fit its metadata: a
    TaskError naming the contract (the unit's task is then skipped and recorded)."""
    from misi_bench.builder.core.errors import TaskError
    from misi_bench.builder.core.rows import Row, parse_metadata
    from misi_bench.builder.dataset.units import _check_contracts

    spec = next(s for s in registry.TASK_SPECS if kind_of(s).carries_options)
    meta = {
        "task": spec.name,
        "pdb_id": "1a28",
        "k": 0,
        "seed": 0,
        "split": "test",
        "template_version": "1",
        "params_version": "1",
        "camera": {"distance": 90.0, "fov_deg": 30.0, "size": 512},
        "operations": ["move x 1"],
        "option_operations": [["move x 1"], ["move x 2"], ["move y 1"], ["move y 2"]],
        "correct": "A",
    }

    def row(meta, options=("a", "b", "c", "d")):
        text = json.dumps(meta, sort_keys=True, separators=(",", ":"))
        return Row(
            "q",
            spec.name,
            "test",
            "1a28",
            (b"",),
            ("front",),
            "?",
            tuple(options),
            "A",
            kind_of(spec).answer_format,
            parse_metadata(text, spec.name),
        )

    _check_contracts(row(meta))  # fits
    with pytest.raises(TaskError, match="note .*contract metadata-fields"):
        _check_contracts(row({**meta, "note": 1}))
    with pytest.raises(TaskError, match="contract options"):
        _check_contracts(row(meta, options=("a", "b")))
