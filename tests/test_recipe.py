"""The recipe of ``docs/extending.md`` adds a task (issue 21 step 6).

In a temporary copy of the package, a throwaway tenth task (``view_turn``: which option shows
the front view after one quarter turn?) is added by exactly the edits the recipe lists: a
registry entry, a task module ending with its ``Room``, its line in ``builder/tasks/__init__.py``,
its prompt template and parameters, and the regenerated harness files. The copy then builds it
from real embedded complexes, validates, audits and scores the build, and its harness files
check clean with the new task in every group. Nothing else of the copy is edited.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TASK = "view_turn"

REGISTRY_ENTRY = """    TaskSpec(
        "view_turn", 10, MULTIPLE_CHOICE, "choice", LETTER, "view turn", "view turn",
        in_headline=False, constant_answer="A", form=CHOICE_FORM, aliases=("quarter_turn",)),
"""

MODULE = '''"""T10 view turn (the recipe's example): which option shows the front view after one quarter
turn about x or y?"""
from __future__ import annotations

from ..core.registry import TASK_BY_NAME
from ..operations.language import Roll
from .base import (LETTERS, ImageSpec, TaskContext, TaskInstance, caption, fill_prompt, letter_for, metadata,
                   options_block, request)
from .choice import check_option_pair, option_space
from .room import Room, ops_of

TASK = "view_turn"
TURNS = (Roll("x", 90), Roll("x", -90), Roll("y", 90), Roll("y", -90))


def question_images(ann, options) -> tuple[ImageSpec, ...]:
    """The front view, then the front view after each option."""
    images = [ImageSpec("front", ann.pdb_id, request(ann, "front"))]
    images += [ImageSpec(f"option {letter}", ann.pdb_id, request(ann, "front", ops=ops))
               for letter, ops in zip(LETTERS, options)]
    return tuple(images)


def generate(ctx: TaskContext) -> list[TaskInstance]:
    ann, out = ctx.ann, []
    for k in range(ctx.count()):
        rng = ctx.rng(TASK, k)
        truth = TURNS[int(rng.integers(len(TURNS)))]
        correct = letter_for(ctx, TASK, k)
        others = [t for t in TURNS if t != truth]
        options = [(op,) for op in others[:correct] + [truth] + others[correct:]]
        texts = tuple(f"image {2 + i}" for i in range(4))
        lines = [caption("front")] + [caption("option_same", letter=letter) for letter in LETTERS]
        question = fill_prompt(TASK, lines, pdb_id=ann.pdb_id.upper(), turn=str(truth),
                               options_block=options_block(texts))
        meta = metadata(ctx, TASK, k, operations=[str(truth)],
                        option_operations=[[str(op) for op in ops] for ops in options])
        out.append(TaskInstance(TASK, ann.pdb_id, k, question, texts, LETTERS[correct],
                                question_images(ann, options), meta))
    return out


def replay(row, meta, ann, load):
    return question_images(ann, [ops_of(o) for o in meta["option_operations"]])


ROOM = Room(TASK_BY_NAME[TASK], generate, replay, check_option_pair, answer_space=option_space)
'''

PROMPT = """  view_turn: |-
    These pictures show the protein-ligand complex {pdb_id}.
    {image_lines}
    {display}
    {frame}
    {commands}
    Which option shows the model of image 1 after `{turn}`?
    {options_block}
    Reply with the letter of the right option only, for example: C
"""

PARAMS = """  view_turn:
    counts: {train: 1, test: 2}
"""


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{path}: the recipe's anchor {old!r} is not there once"
    path.write_text(text.replace(old, new), encoding="utf-8")


def _copy_package(dest: Path) -> Path:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("builder", "eval_plugins", "dataset_card"):
        shutil.copytree(ROOT / name, dest / name, ignore=ignore)
    for name in ("misi_bench.py", "pyproject.toml"):
        shutil.copy(ROOT / name, dest / name)
    return dest


def _apply_recipe(copy: Path) -> list[str]:
    """The edits of docs/extending.md ("A new task"); returns the paths touched."""
    registry = copy / "builder/core/registry.py"
    _edit(registry, "\n)\nTASK_BY_NAME", "\n" + REGISTRY_ENTRY.rstrip("\n") + "\n)\nTASK_BY_NAME")
    (copy / f"builder/tasks/{TASK}.py").write_text(MODULE, encoding="utf-8")
    init = copy / "builder/tasks/__init__.py"
    _edit(
        init,
        "    translation_rotation,\n    zooming,\n)\nfrom .room",
        "    translation_rotation,\n    view_turn,\n    zooming,\n)\nfrom .room",
    )
    _edit(
        init,
        "    interaction_location,\n    pocket_ligand,\n)",
        "    interaction_location,\n    pocket_ligand,\n    view_turn,\n)",
    )
    prompts = copy / "builder/tasks/templates/prompts.yaml"
    prompts.write_text(
        prompts.read_text(encoding="utf-8").rstrip("\n") + "\n" + PROMPT, encoding="utf-8"
    )
    _edit(copy / "builder/tasks/templates/params.yaml", "\nchoice:\n", "\n" + PARAMS + "choice:\n")
    return [
        "builder/core/registry.py",
        f"builder/tasks/{TASK}.py",
        "builder/tasks/__init__.py",
        "builder/tasks/templates/prompts.yaml",
        "builder/tasks/templates/params.yaml",
    ]


def _run(copy: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(copy), "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run(
        [sys.executable, *args], cwd=copy, env=env, capture_output=True, text=True, timeout=1200
    )
    if check:
        assert proc.returncode == 0, (
            f"{args}: exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        )
    return proc


def _cli(copy: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    return _run(
        copy,
        "-c",
        "import sys, misi_bench; sys.exit(misi_bench.main(sys.argv[1:]))",
        *args,
        check=check,
    )


def test_recipe_names_every_file_the_test_touches():
    text = (ROOT / "docs/extending.md").read_text(encoding="utf-8")
    section = text.split("## A new task", 1)[1].split("\n## ", 1)[0]
    for path in (
        "builder/core/registry.py",
        "builder/tasks/<name>.py",
        "builder/tasks/__init__.py",
        "builder/tasks/templates/prompts.yaml",
        "builder/tasks/templates/params.yaml",
        "python -m misi_bench.eval_plugins.harness_files",
    ):
        assert path in section, f"docs/extending.md's new-task recipe does not name {path}"


@pytest.mark.slow
def test_a_tenth_task_by_the_recipe_builds_validates_audits_scores_and_gets_harness_files(tmp_path):
    copy = _copy_package(tmp_path / "copy")
    _apply_recipe(copy)
    # harness files: regenerated by the one generator, then clean
    _run(copy, "-m", "misi_bench.eval_plugins.harness_files")
    _run(copy, "-m", "misi_bench.eval_plugins.harness_files", "--check")
    for folder in ("eval_plugins/lmms_eval/tasks/misi", "eval_plugins/lm_eval/tasks/misi"):
        assert "  - misi_view_turn\n" in (copy / folder / "misi.yaml").read_text()
        assert (
            "task: tiny_misi_view_turn" in (copy / folder / "tiny_misi_view_turn.yaml").read_text()
        )
    assert (
        "+++ b/lmms_eval/tasks/misi/misi_view_turn.yaml"
        in (copy / "eval_plugins/upstream/lmms_eval/0001-add-misi-tasks.patch").read_text()
    )
    # the room tests hold in the copy: the new task has its room, complete registry data, and no
    # shared module spells its name
    shutil.copytree(ROOT / "tests", copy / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    _run(
        copy,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "tests/test_rooms.py",
        "tests/test_harness_files.py",
    )

    out = tmp_path / "build"
    build = _cli(
        copy,
        "build",
        "--source",
        "samples",
        "--limit",
        "4",
        "--workers",
        "1",
        "--tasks",
        TASK,
        "zooming",
        "--profile",
        "explicit",  # the recipe adds an explicit-profile task (docs/extending.md, step 4)
        "--out",
        str(out),
        "--quiet",
    )
    assert "validation: ok" in build.stdout and "audit: ok" in build.stdout, build.stdout
    # the default (paper) profile has no template for it: one clear line before any work
    paper = _cli(
        copy,
        "build",
        "--source",
        "samples",
        "--limit",
        "1",
        "--tasks",
        TASK,
        "--out",
        str(tmp_path / "paper"),
        "--quiet",
        check=False,
    )
    assert paper.returncode != 0
    assert f"task '{TASK}' has no prompt template or parameters in the 'paper' profile" in (
        paper.stdout + paper.stderr
    )
    assert not (tmp_path / "paper" / "manifest.json").exists()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["counts"][TASK]["test"] > 0 and manifest["audit"]["tasks"][TASK]["unique"] > 0
    _cli(copy, "validate", str(out))
    audit = _cli(copy, "audit", str(out), "--configs", TASK, "--json", "--quiet")
    report = json.loads(audit.stdout[audit.stdout.index("{") :])
    assert report["tasks"][TASK]["reproduced"] == report["tasks"][TASK]["questions"] > 0

    # score: the gold answers score 1 under the task's own name; the card lists the task
    rows = _run(
        copy,
        "-c",
        (
            "import json, sys; from misi_bench.builder.dataset.parquet import iter_config_rows; "
            f"rows = iter_config_rows(sys.argv[1], '{TASK}', 'test'); "
            "print(json.dumps([{'id': r['id'], 'answer': r['answer']} for r in rows]))"
        ),
        str(out),
    ).stdout
    rows = json.loads(rows)
    gold = tmp_path / "gold.jsonl"
    gold.write_text(
        "".join(json.dumps({"id": r["id"], "prediction": r["answer"]}) + "\n" for r in rows)
    )
    scored = _cli(
        copy, "score", "--dataset", str(out), "--predictions", str(gold), "--config", TASK
    )
    assert re.search(rf"\| {TASK} \| {len(rows)} \| 100\.00 \| 100\.00 \|", scored.stdout), (
        scored.stdout
    )
    card = (out / "README.md").read_text()
    assert TASK in card
