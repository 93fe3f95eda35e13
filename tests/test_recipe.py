"""The recipe of ``docs/extending.md`` adds a task (issue 21 step 6, issue 34 item 2).

The recipe's section holds a worked example, a throwaway tenth task ``view_turn``, as fenced
blocks whose first line names the file they go to; the section on a new answer kind holds a
throwaway eleventh task ``atom_distance`` of a new kind ``distance`` (a number scored within a
tolerance), issue 50. This test reads those blocks from the doc and applies them, and nothing
else, to a temporary copy of the package: the kind's module and its own test module, the
registry entries, the room modules, the data files, then the recipe's one command that writes
the generated files and snapshots. The fast tests check that the recipe touches at most four
hand-written things and a new kind only its module, its test module and its task's three files;
the slow ones check that the copy's shared tests (tasks, rooms, kinds, scoring, contracts, rows,
harness files) hold with both tasks, and build, validate, audit and score each. A doc that no
longer matches the code fails here. A second throwaway tenth task,
``ligand_size`` (the recipe's registry entry under another name, a room and a data file of its
own), is a letter task whose options are numbers: it declines uniqueness with its reason instead
of faking an ``answer_space``, and its build says "uniqueness: not applicable (options are not
pictures)" in its manifest, summary and card.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from card_support import front_matter, table_under

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs/extending.md"
TASK = "view_turn"
#: The new-kind section's task and its kind.
KIND_TASK, KIND = "atom_distance", "distance"
#: Where the registry entry goes: after ``TASK_SPECS``, before the tables made from it.
REGISTRY_ANCHOR = "\n)\nTASK_BY_NAME"


def recipe_section(title: str = "A new task") -> str:
    text = DOC.read_text(encoding="utf-8")
    return text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def recipe_blocks(title: str = "A new task") -> list[tuple[str, str, str]]:
    """(language, first line, body) of every fenced block of the section, dedented."""
    blocks = []
    for match in re.finditer(r"\n( *)```(\w+)\n(.*?)\n\1```", recipe_section(title), re.S):
        indent, lang, body = match.groups()
        lines = [line[len(indent) :] for line in body.split("\n")]
        blocks.append((lang, lines[0], "\n".join(lines[1:]) + "\n"))
    return blocks


def recipe_steps(title: str = "A new task") -> tuple[list[tuple[str, str]], list[str]]:
    """The files the section writes or edits, as (path, text), and its commands."""
    files, commands = [], []
    for lang, first, body in recipe_blocks(title):
        if lang == "sh":
            commands.append((first + "\n" + body).strip())
            continue
        target = re.match(r"# (\S+)", first)
        assert target, f"docs/extending.md: a {lang} block does not name its file: {first!r}"
        files.append((target.group(1).rstrip(":"), body))
    return files, commands


def _copy_package(dest: Path) -> Path:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("builder", "eval_plugins", "dataset_card", "tests", "docs"):
        shutil.copytree(ROOT / name, dest / name, ignore=ignore)
    for name in ("misi_bench.py", "pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, dest / name)
    return dest


def _apply_recipe(copy: Path) -> list[str]:
    """The edits of docs/extending.md ("A new task", then "A new answer kind"), read from its
    blocks, then the recipe's command; returns the hand-written paths touched (the command's
    generated files aside)."""
    files, commands = recipe_steps()
    kind_files, kind_commands = recipe_steps("A new answer kind")
    assert not kind_commands  # the new kind's task takes the recipe's one command
    for path, text in [*files, *kind_files]:
        target = copy / path
        if path == "builder/core/registry.py":
            old = target.read_text(encoding="utf-8")
            assert old.count(REGISTRY_ANCHOR) == 1, "the registry's TASK_SPECS no longer ends there"
            target.write_text(
                old.replace(REGISTRY_ANCHOR, "\n)\n" + text + "TASK_BY_NAME"),
                encoding="utf-8",
            )
        else:
            assert not target.exists(), f"{path}: the recipe writes a new file"
            target.write_text(text, encoding="utf-8")
    for command in commands:
        _shell(copy, command)
    return [path for path, _ in [*files, *kind_files]]


def _shell(copy: Path, command: str) -> None:
    """A recipe command, run by bash in the copy with this interpreter as ``python``."""
    line = re.sub(r"(?<![\w/.])python(?= )", shlex.quote(sys.executable), command)
    env = {**os.environ, "PYTHONPATH": str(copy), "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run(
        ["bash", "-c", line], cwd=copy, env=env, capture_output=True, text=True, timeout=900
    )
    assert proc.returncode == 0, (
        f"{command}: exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    )


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


def test_the_recipe_touches_at_most_four_hand_written_things():
    files, commands = recipe_steps()
    assert [path for path, _ in files] == [
        "builder/core/registry.py",
        f"builder/tasks/{TASK}.py",
        f"builder/tasks/{TASK}.yaml",
    ]
    assert len(files) + len(commands) <= 4 and len(commands) == 1
    assert "misi_bench.eval_plugins.harness_files" in commands[0]
    assert "MISI_UPDATE_SNAPSHOTS=1" in commands[0]


def test_a_new_kind_is_its_module_its_tests_and_its_tasks_three_files():
    """The new-kind section writes the kind's module and its own test module, then the task's
    three files: no other module (no kinds list, no shared test) is edited."""
    files, commands = recipe_steps("A new answer kind")
    assert [path for path, _ in files] == [
        f"builder/scoring/kinds/{KIND}.py",
        f"tests/test_kind_{KIND}.py",
        "builder/core/registry.py",
        f"builder/tasks/{KIND_TASK}.py",
        f"builder/tasks/{KIND_TASK}.yaml",
    ]
    assert not commands
    registry_entry = dict(files)["builder/core/registry.py"]
    assert f'"{KIND}",' in registry_entry  # the task names the kind; the kind is found by it


@pytest.fixture(scope="module")
def recipe_copy(tmp_path_factory):
    copy = _copy_package(tmp_path_factory.mktemp("recipe") / "copy")
    _apply_recipe(copy)
    return copy


@pytest.mark.slow  # the copy's shared tests in a child pytest (37 s); fast: the file count, test_rooms.py
def test_a_tenth_task_by_the_recipe_passes_the_shared_task_tests(recipe_copy):
    """The copy's own tests of rooms, task data, generators, prompts and harness files hold
    with the tenth task: the recipe is enough for them."""
    copy = recipe_copy
    snapshot = json.loads((copy / "tests/snapshots/prompts.json").read_text(encoding="utf-8"))
    assert "Which option shows the model of image 1 after" in snapshot[TASK]
    for folder in ("eval_plugins/lmms_eval/tasks/misi", "eval_plugins/lm_eval/tasks/misi"):
        assert "  - misi_view_turn\n" in (copy / folder / "misi.yaml").read_text()
    _run(
        copy,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "tests/test_rooms.py",
        "tests/test_task_data.py",
        "tests/test_tasks.py",
        "tests/test_harness_files.py",
        "tests/test_scoring.py",
        "tests/test_task_contracts.py",
        "tests/test_answer_kinds.py",
        "tests/test_scoring_cases.py",
        "tests/test_rows.py",
        f"tests/test_kind_{KIND}.py",
        "-k",
        "not edit_moves",
    )
    headline = _run(
        copy,
        "-c",
        "from misi_bench.builder.core.registry import TASK_SPECS as S, TASK_BY_NAME as T; "
        "from misi_bench.builder.scoring.kinds import KINDS; "
        "print(T['view_turn'].in_headline, T['view_turn'].number - S[-3].number, "
        "T['atom_distance'].number - S[-2].number, list(KINDS)[-1])",
    )
    # a new task joins the headline only when asked; it is numbered after the last task; the
    # new kind is listed by the task that names it
    assert headline.stdout.split() == ["False", "1", "1", KIND]


@pytest.mark.slow
def test_a_tenth_task_by_the_recipe_builds_validates_audits_scores(recipe_copy, tmp_path):
    copy = recipe_copy
    _run(copy, "-m", "misi_bench.eval_plugins.harness_files", "--check")
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
        "--configs",
        TASK,
        "zooming",
        "--out",
        str(out),
        "--quiet",
    )
    assert "validation: ok" in build.stdout and "audit: ok" in build.stdout, build.stdout
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
            "import json, sys; from misi_bench.builder.store.parquet import iter_config_rows; "
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
        copy, "score", "--dataset", str(out), "--predictions", str(gold), "--configs", TASK
    )
    assert re.search(rf"\| {TASK} \| {len(rows)} \| 100\.00 \| 100\.00 \|", scored.stdout), (
        scored.stdout
    )
    card = (out / "README.md").read_text()
    tasks = table_under(card, "Tasks")  # the card's task table: the build's two tasks, T10 last
    assert [r["config"] for r in tasks] == ["`zooming`", f"`{TASK}`"]
    from misi_bench.builder.core.registry import TASK_SPECS

    number = TASK_SPECS[-1].number + 1  # the recipe's task comes after the last one
    assert tasks[1]["task"].startswith(f"T{number}: ") and tasks[1]["format"] == "choice A-D"
    assert [c["config_name"] for c in front_matter(card)[0]["configs"]] == ["zooming", TASK, "all"]


@pytest.mark.slow
def test_an_eleventh_task_of_a_new_kind_builds_validates_audits_scores(recipe_copy, tmp_path):
    """The new kind's task: built, validated (the distance re-derived from the freshly read
    structure), audited (reproduction: the kind asks no uniqueness check) and scored: the gold
    answers score 1, the gold moved by 0.4 Å too, by 0.6 Å not."""
    copy, out = recipe_copy, tmp_path / "build"
    args = ("build", "--source", "samples", "--limit", "4", "--workers", "1", "--quiet")
    build = _cli(copy, *args, "--configs", KIND_TASK, "--out", str(out))
    assert "validation: ok" in build.stdout and "audit: ok" in build.stdout, build.stdout
    _cli(copy, "validate", str(out))
    rows = _run(
        copy,
        "-c",
        (
            "import json, sys; from misi_bench.builder.store.parquet import iter_config_rows; "
            f"rows = iter_config_rows(sys.argv[1], '{KIND_TASK}', 'test'); "
            "print(json.dumps([{'id': r['id'], 'answer': r['answer']} for r in rows]))"
        ),
        str(out),
    ).stdout
    rows = json.loads(rows)
    assert rows and all(re.fullmatch(r"\d+\.\d", r["answer"]) for r in rows)
    for shift, want in ((0.0, "100.00"), (0.4, "100.00"), (0.6, "0.00")):
        preds = tmp_path / f"shift{shift}.jsonl"
        preds.write_text(
            "".join(
                json.dumps({"id": r["id"], "prediction": f"{float(r['answer']) + shift:.1f} Å"})
                + "\n"
                for r in rows
            )
        )
        scored = _cli(
            copy,
            "score",
            "--dataset",
            str(out),
            "--predictions",
            str(preds),
            "--configs",
            KIND_TASK,
        )
        assert re.search(rf"\| {KIND_TASK} \| {len(rows)} \| {want} \|", scored.stdout), (
            shift,
            scored.stdout,
        )
    card = (out / "README.md").read_text()
    assert [r["config"] for r in table_under(card, "Tasks")] == [f"`{KIND_TASK}`"]


def _shard_digests(out: Path, tasks) -> dict[str, str]:
    import hashlib

    return {
        str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
        for task in tasks
        for p in sorted((out / task).glob("*.parquet"))
    }


@pytest.mark.slow
def test_a_tenth_task_leaves_the_nine_tasks_shards_byte_identical(recipe_copy, tmp_path):
    """The same small build with and without the recipe's task: every shard of the other tasks
    is the same bytes (adding a task rewrites none of their outputs)."""
    from misi_bench.builder.core.registry import TASK_NAMES

    args = ("build", "--source", "samples", "--limit", "2", "--workers", "1", "--quiet")
    with_task, without = tmp_path / "with", tmp_path / "without"
    _cli(recipe_copy, *args, "--out", str(with_task))
    _cli(ROOT, *args, "--out", str(without))
    before, after = _shard_digests(without, TASK_NAMES), _shard_digests(with_task, TASK_NAMES)
    assert len(before) >= len(TASK_NAMES) and after == before
    assert list((with_task / TASK).glob("*.parquet"))  # the tenth task was built beside them


# ---------------------------------------------------------------------------- a tenth task whose
# options are numbers (issue 50): a letter task that declines the checks it cannot take, with
# its reasons, instead of faking their hooks

NUMBERS = "ligand_size"
#: The room of a letter task whose options are numbers: the ligand's heavy atoms, counted. It
#: gives no answer_space (its options are not pictures) and declines uniqueness and the
#: options-only gate with their reasons.
NUMBERS_ROOM = '''"""Ligand size (a throwaway task of tests/test_recipe.py): how many heavy atoms has the
ligand? Four numbers as options."""

from __future__ import annotations

from ..core.registry import TASK_BY_NAME
from .base import LETTERS, ImageSpec, TaskContext, TaskInstance, letter_for, metadata
from .base import options_block, request
from .room import Declined, Room

TASK = "ligand_size"


def question_images(ann) -> tuple[ImageSpec, ...]:
    return (ImageSpec("front", ann.pdb_id, request(ann, "front")),)


def generate(ctx: TaskContext) -> list[TaskInstance]:
    ann, out = ctx.ann, []
    truth = int(ann.complex.is_ligand.sum())
    for k in range(ctx.count()):
        correct = letter_for(ctx, TASK, k)
        others = [truth + d for d in (-2, 1, 3, 5, -4) if truth + d > 0][:3]
        options = [str(n) for n in others[:correct] + [truth] + others[correct:]]
        question = ctx.prompt(
            [ctx.caption("front")], pdb_id=ann.pdb_id.upper(), options_block=options_block(options)
        )
        meta = metadata(
            ctx,
            TASK,
            k,
            operations=[str(truth)],
            option_operations=[[o] for o in options],
            correct=LETTERS[correct],
        )
        images, answer = question_images(ann), LETTERS[correct]
        out.append(
            TaskInstance(TASK, ann.pdb_id, k, question, tuple(options), answer, images, meta, ctx.profile)
        )
    return out


def replay(row, meta, ann, load):
    return question_images(ann)


def check(row, meta, subject) -> list[str]:
    truth = str(int(subject.complex.is_ligand.sum()))
    got = row["options"][ord(row["answer"]) - ord("A")]
    return [] if got == truth else [f"{row['id']}: the ligand has {truth} heavy atoms, not {got}"]


ROOM = Room(
    TASK_BY_NAME[TASK],
    generate,
    replay,
    check,
    declines=(
        Declined("uniqueness", "options are not pictures"),
        Declined("options_only", "the options are numbers; the options-only rules read commands"),
    ),
)
'''
NUMBERS_DATA = """explicit:
  template_version: "1.0.0"
  params_version: "1.0.0"
  params:
    counts: {train: 1, test: 2}
  captions:
    front: "the complex seen from the front"
  prompt: |-
    This picture shows the protein-ligand complex {pdb_id}.
    {image_lines}
    What is drawn: the ligand and the pocket residues as sticks; hydrogens are hidden.
    Axes are fixed to the screen: +x points to the right, +y points up.
    How many heavy atoms has the ligand?
    {options_block}
    Reply with the letter of the right option only, for example: C
paper:
  template_version: "paper-1.0.0"
  params_version: "paper-1.0.0"
  params:
    counts: {train: 1, test: 2}
  prompt: |-
    There is one picture of protein {pdb_id} and a small-molecule ligand bound to it.
    How the molecules are drawn:
    - Binding pocket: carbon atoms are either purple (#BF99F2) or orange (#F2B366).
    - In pocket and ligand alike, oxygen atoms are red and nitrogen atoms blue.
    Task: how many heavy atoms has the ligand?
    {options_block}
    Answer with a single letter: A, B, C or D.
card:
  summary: "how many heavy atoms the ligand has, among four numbers"
  answer: "`C`"
  asks: "how large the ligand is"
  scoring: "accuracy"
expect:
  sample: 1a28
  questions_per_complex: 2
  needs_hbond: false
  seed_free: false
  gold: "C"
  explicit_mentions: ["+x points to the right"]
  paper_mentions: ["A, B, C or D"]
"""


@pytest.fixture(scope="module")
def numbers_copy(tmp_path_factory):
    """A copy of the package with a tenth task whose options are numbers: the recipe's registry
    entry under another name, the room and data file above, and the recipe's command."""
    copy = _copy_package(tmp_path_factory.mktemp("numbers") / "copy")
    files, commands = recipe_steps()
    entry = dict(files)["builder/core/registry.py"]
    entry = entry.replace(f'"{TASK}"', f'"{NUMBERS}"').replace('"view turn"', '"ligand size"')
    entry = entry.replace('"quarter_turn"', '"heavy_atom_count"')
    registry_file = copy / "builder/core/registry.py"
    old = registry_file.read_text(encoding="utf-8")
    registry_file.write_text(old.replace(REGISTRY_ANCHOR, "\n)\n" + entry + "TASK_BY_NAME"))
    (copy / f"builder/tasks/{NUMBERS}.py").write_text(NUMBERS_ROOM, encoding="utf-8")
    (copy / f"builder/tasks/{NUMBERS}.yaml").write_text(NUMBERS_DATA, encoding="utf-8")
    for command in commands:
        _shell(copy, command)
    return copy


@pytest.mark.slow  # a build of two complexes in a copy of the package (about 30 s)
def test_a_tenth_task_whose_options_are_numbers_says_uniqueness_does_not_apply(
    numbers_copy, tmp_path
):
    """No hollow hook: the room gives no answer_space and declines uniqueness; the build
    validates and audits it and says, in its manifest, its summary and its card, that
    uniqueness does not apply and why, and never that its questions are all unique."""
    copy, out = numbers_copy, tmp_path / "build"
    room = _run(
        copy,
        "-c",
        "from misi_bench.builder.tasks import room_of; "
        f"print(room_of('{NUMBERS}').answer_space is None)",
    )
    assert room.stdout.split() == ["True"]
    # the copy's contract test holds for the task: no declared check lacks its hook, no hook
    # serves a check the task does not take
    _run(copy, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_task_contracts.py")
    args = ("build", "--source", "samples", "--limit", "2", "--workers", "1", "--quiet")
    build = _cli(copy, *args, "--configs", NUMBERS, "--out", str(out))
    said = "uniqueness: not applicable (options are not pictures)"
    assert "validation: ok" in build.stdout and "audit: ok" in build.stdout, build.stdout
    assert said in build.stdout
    assert "all unique" not in build.stdout, build.stdout
    manifest = json.loads((out / "manifest.json").read_text())
    checks = manifest["checks"][NUMBERS]
    assert checks["uniqueness"] == "not applicable (options are not pictures)"
    assert checks["answers"] == checks["reproduction"] == checks["letter_balance"] == "ran"
    assert checks["options_only"].startswith("not applicable (the options are numbers")
    assert said in (out / "README.md").read_text()
    assert manifest["audit"]["tasks"][NUMBERS]["reproduced"] > 0
    assert "checked_unique" not in manifest["audit"]["tasks"][NUMBERS]
