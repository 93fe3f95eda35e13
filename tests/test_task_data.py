"""Issue 34, items 1 and 4: one data file per task (builder/tasks/<name>.yaml) read by one loader
(builder/tasks/data.py), so that an edit to one task moves only that task's rows and config
hash; and the build profile taken explicitly below the entry points."""

from __future__ import annotations

import ast
import inspect
from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from misi_bench.builder.core.errors import MisiError
from misi_bench.builder.core.profiles import EXPLICIT, PAPER, PROFILE_NAMES
from misi_bench.builder.core.registry import TASK_NAMES
from misi_bench.builder.dataset.config import BuildConfig
from misi_bench.builder.tasks import data as task_data_module
from misi_bench.builder.tasks import generator
from misi_bench.builder.tasks.base import TaskContext, annotate
from misi_bench.builder.tasks.data import data_file_text, parse_task_data, task_data

ROOT = Path(__file__).resolve().parent.parent
TASKS_DIR = ROOT / "builder" / "tasks"


@pytest.fixture(scope="module")
def annotations(complexes):
    return {p: annotate(cx) for p, cx in complexes.items()}


@pytest.fixture
def edited(monkeypatch):
    """``edited(task)``: from now on ``task``'s explicit prompt reads differently (its data file
    text is replaced in memory); the loader's cache is cleared before and after."""

    original = data_file_text

    def edit(task: str) -> None:
        raw = yaml.safe_load(original(task))
        raw[EXPLICIT]["prompt"] += "\nAnswer carefully."
        text = yaml.safe_dump(raw, allow_unicode=True)
        monkeypatch.setattr(
            task_data_module,
            "data_file_text",
            lambda name: text if name == task else original(name),
        )
        task_data.cache_clear()

    task_data.cache_clear()
    yield edit
    monkeypatch.undo()
    task_data.cache_clear()


def _first_question(annotations, task: str, profile: str = EXPLICIT) -> str:
    ids = sorted(annotations)
    for pdb_id in ids:  # the first complex on which the task asks anything
        ctx = TaskContext.for_task(
            task,
            annotations[pdb_id],
            "test",
            0,
            profile,
            partners=[p for p in ids if p != pdb_id],
            load_partner=annotations.get,
        )
        made = generator(task)(ctx)
        if made:
            return made[0].question
    raise AssertionError(f"{task}: no question on any sample")


def test_every_registry_task_has_its_data_file_and_no_shared_ones_remain():
    files = {p.stem for p in TASKS_DIR.glob("*.yaml")}
    assert files == set(TASK_NAMES)
    assert not (TASKS_DIR / "templates").exists()
    for task in TASK_NAMES:
        data = task_data(task)
        assert set(data.profiles) == set(PROFILE_NAMES)


@pytest.mark.parametrize("task", TASK_NAMES)
def test_one_tasks_edit_moves_only_its_rows_and_config_hash(task, edited, annotations):
    before = {t: BuildConfig(tasks=(t,), profile=EXPLICIT).config_hash for t in TASK_NAMES}
    whole = BuildConfig(profile=EXPLICIT).config_hash
    other = next(t for t in TASK_NAMES if t != task)
    questions = {t: _first_question(annotations, t) for t in (task, other)}
    edited(task)
    after = {t: BuildConfig(tasks=(t,), profile=EXPLICIT).config_hash for t in TASK_NAMES}
    assert {t for t in TASK_NAMES if before[t] != after[t]} == {task}
    assert BuildConfig(profile=EXPLICIT).config_hash != whole
    assert _first_question(annotations, task).endswith("Answer carefully.")
    assert _first_question(annotations, other) == questions[other]
    assert _first_question(annotations, task) != questions[task]


def test_the_config_names_each_tasks_versions():
    fields = BuildConfig(tasks=("rotation",), profile=PAPER).generation_fields()
    entry = fields["task_data"]["rotation"]
    assert entry["template_version"] == task_data("rotation").profile(PAPER).template_version
    assert set(fields["task_data"]) == {"rotation"} and "decoys_version" not in entry


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda raw: raw.pop(PAPER), "no 'paper' section"),
        (lambda raw: raw[EXPLICIT].update(template_version=2), "template_version must be"),
        (lambda raw: raw[EXPLICIT].pop("captions"), "no captions"),
        (lambda raw: raw[EXPLICIT]["hbond_rules"].pop("plip"), "one sentence per mode"),
        (lambda raw: raw[PAPER].update(six_views=["front"]), "six_views must order"),
        (lambda raw: raw[PAPER].pop("names_note"), "uses {names_note} but has no names_note"),
        (lambda raw: raw.pop("card"), "pocket_ligand.yaml: no card section"),
        (lambda raw: raw["card"].pop("summary"), "card.summary must be a non-empty string"),
        (lambda raw: raw["card"].update(sumary="typo"), "card has unknown fields sumary"),
        (lambda raw: raw["card"].update(readings="one"), "card.readings must be a list"),
    ],
)
def test_the_loader_refuses_an_incomplete_data_file(change, message):
    raw = yaml.safe_load(data_file_text("pocket_ligand"))
    raw[PAPER]["six_views"] = ["front", "left", "top", "back", "right", "bottom"]
    change(raw)
    with pytest.raises(MisiError, match=message):
        parse_task_data("pocket_ligand", raw)


# ---------------------------------------------------------------------------- item 4: profiles


def _profile_defaults(path: Path) -> list[str]:
    """``file:line name`` of every function of ``path`` whose ``profile`` parameter has a default."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        args = node.args
        positional = args.posonlyargs + args.args
        defaults = dict(zip([a.arg for a in positional][::-1], args.defaults[::-1]))
        defaults.update(
            {a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None}
        )
        if "profile" in defaults:
            found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
    return found


def test_lower_layers_take_the_profile_explicitly():
    files = [*sorted(TASKS_DIR.glob("*.py")), ROOT / "builder" / "core" / "profiles.py"]
    assert not [f for p in files for f in _profile_defaults(p)]
    for cls in (TaskContext,):
        assert inspect.signature(cls).parameters["profile"].default is inspect.Parameter.empty
    planted = ROOT / "tests" / "_planted_profile.py"
    try:
        planted.write_text("def f(task, profile='paper'):\n    return task\n")
        assert _profile_defaults(planted) == ["tests/_planted_profile.py:1 f"]
    finally:
        planted.unlink()


def test_captions_and_hbond_rules_follow_the_contexts_profile(annotations):
    ann = annotations["1hvr"]
    explicit = TaskContext.for_task("pocket_ligand", ann, "test", 0, EXPLICIT)
    paper = TaskContext.for_task("pocket_ligand", ann, "test", 0, PAPER)
    assert explicit.caption("front") == "the complex seen from the front"
    assert "hydrogen" in explicit.hbond_rule().lower()
    assert paper.caption("front") == "" and paper.hbond_rule() == ""  # the paper states neither
    own = replace(
        paper.data,
        captions={"front": "paper front"},
        hbond_rules={ann.hbond_mode: "paper rule"},
    )
    paper = replace(paper, data=own)
    assert paper.caption("front") == "paper front" and paper.hbond_rule() == "paper rule"
