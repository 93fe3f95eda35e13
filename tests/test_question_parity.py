"""Humans and models get the same question (issue 53 item 4): the human app's form hints say what
form an answer takes and never a unit or range a profile's prompt withholds; disambiguated
ligand atom names (``N:1.4``) are explained in the prompt of every question whose pictures
carry them, on a real complex whose MOL2 repeats a name."""

import re
import shutil

import pytest
from misi_bench.builder.chemistry.structure import read_pdbbind_dir
from misi_bench.builder.core.registry import TASK_SPECS
from misi_bench.builder.tasks import TASKS, generator
from misi_bench.builder.tasks.base import TaskContext, annotate, disambiguated_names
from misi_bench.builder.tasks.data import task_profile
from misi_bench.eval_plugins.human.forms import form_problem
from misi_bench.eval_plugins.human.session import Question

from test_profiles import WITHHELD

#: Units and ranges a hint must not name (the paper's prompts give no unit for T1/T3).
UNITS_AND_RANGES = [
    *WITHHELD,
    r"\bunits?\b",
    r"degree",
    r"ångström|angstrom",
    r"\bwhole\b",
    r"-?\d+\s*(\.\.|to)\s*-?\d+",
]
NOTE_MARK = "N:1.4"


def test_form_hints_name_no_unit_or_range():
    hints = {spec.name: spec.form_hint for spec in TASK_SPECS if spec.form_hint}
    assert {"translation", "rotation", "zooming", "docking", "pocket_ligand"} <= set(hints)
    for task, hint in hints.items():
        for pattern in UNITS_AND_RANGES:
            assert not re.search(pattern, hint, re.IGNORECASE), (task, pattern, hint)


@pytest.mark.parametrize("profile", ["paper", "explicit"])
def test_the_t1_form_check_and_page_name_no_unit(profile):
    """What a person sees about a T1 answer's form, in either profile: the form line (explicit)
    and the form check's message (both) name no unit; the paper's T1 prompt gives none either."""
    message = form_problem("translation", "roll z 3")
    assert message and "move x D or move y D" in message
    assert "Å" not in message and "whole" not in message
    question = Question("q", "translation", "1a28", "text", (), (), "", "", profile=profile)
    assert "Å" not in question.public()["form"]
    assert "Å" not in task_profile("translation", "paper").prompt


@pytest.fixture(scope="module")
def repeated_names(sample_refs, tmp_path_factory):
    """1HVR's sample with the MOL2 naming C3 like C2 (a MOL2 that repeats a name), read."""
    src = next(r for r in sample_refs if r.pdb_id == "1hvr").path
    d = tmp_path_factory.mktemp("names") / "1hvr"
    shutil.copytree(src, d)
    mol2 = d / "1hvr_ligand.mol2"
    text = mol2.read_text()
    assert "\n      5 C3  " in text
    mol2.write_text(text.replace("\n      5 C3  ", "\n      5 C2  "))
    partner = next(r for r in sample_refs if r.pdb_id == "1a28").path
    partners = {"1a28": annotate(read_pdbbind_dir(partner))}
    return annotate(read_pdbbind_dir(d)), annotate(read_pdbbind_dir(src)), partners


def _questions(ann, task, profile, partners):
    ctx = TaskContext.for_task(
        task, ann, "test", 0, profile, partners=sorted(partners), load_partner=partners.get
    )
    return generator(task)(ctx)


@pytest.mark.parametrize("profile", ["paper", "explicit"])
@pytest.mark.parametrize("task", TASKS)
def test_disambiguated_names_are_explained_where_they_occur(repeated_names, task, profile):
    edited, plain, partners = repeated_names
    names = disambiguated_names(edited.complex.atom_names[edited.complex.is_ligand])
    assert names == ("C2:1.1", "C2:1.2")
    assert not disambiguated_names(plain.complex.atom_names[plain.complex.is_ligand])
    with_names = _questions(edited, task, profile, partners)
    without = _questions(plain, task, profile, partners)
    assert with_names and without, f"{task} asks something of 1HVR"
    note = task_profile(task, profile).names_note
    assert NOTE_MARK in note
    for inst in with_names:
        assert inst.question.count(note) == 1, task
    for inst in without:
        assert note not in inst.question and NOTE_MARK not in inst.question


def test_every_prompt_places_the_note_after_the_ligand_labels():
    for task in TASKS:
        for profile in ("paper", "explicit"):
            data = task_profile(task, profile)
            assert "names_note" in data.placeholders, (task, profile)
            before = data.prompt.split("{names_note}")[0]
            assert before.rstrip().endswith(("name.", "their element.")), (task, profile)


def test_t5_explains_the_names_of_its_target_complex(repeated_names):
    """T5's pictures show a second (target) complex: its names bring the sentence too."""
    edited, plain, _ = repeated_names
    note = task_profile("translation_rotation", "paper").names_note
    items = _questions(plain, "translation_rotation", "paper", {"1hvr": edited})
    assert items and all(inst.question.count(note) == 1 for inst in items)
