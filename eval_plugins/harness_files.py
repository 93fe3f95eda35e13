"""The harness task files, generated from the task registry: one generator for all of them.

Writes, for every task of :data:`misi_bench.builder.core.registry.TASK_SPECS`, the lmms-eval
and lm-eval task YAMLs (``misi_<task>.yaml`` on the test split, ``tiny_misi_<task>.yaml`` on the
tiny split), the groups ``misi`` and ``tiny_misi`` of each harness, and the upstream lmms-eval
patch ``eval_plugins/upstream/lmms_eval/0001-add-misi-tasks.patch`` (the lmms-eval task folder as
new files). The shared templates (``_default_template_yaml``, ``_template_yaml``), the hook
modules (``utils.py``) and the folder README are written by hand, except the README's task table
(one row per task of the registry, between ``TASK_TABLE_BEGIN`` and ``TASK_TABLE_END``) and the
templates' ``generation_kwargs`` blocks, which are written from :mod:`misi_bench.builder.core.generation`
(temperature 0, max 1024 new tokens: what ``misi-bench eval`` sends too, so every route asks a
model the same way). A task's metrics come from
:func:`misi_bench.eval_plugins.common.spec_metric_names` (T5/T6 report no averages, a task with
halves reports ``score_positive`` / ``score_negative``).

``python -m misi_bench.eval_plugins.harness_files`` rewrites the files; ``--check`` exits 1 and
names the files that differ from what it would write (the test suite runs it). VLMEvalKit needs
no generated file: its dataset classes are made from the registry at import
(:func:`misi_bench.eval_plugins.vlmevalkit.datasets.dataset_classes`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..builder.core import generation
from ..builder.core.registry import TASK_SPECS, TaskSpec
from ..builder.scoring.kinds import kind_of
from .common import HEADLINE_METRICS, spec_metric_names

HERE = Path(__file__).resolve().parent
LMMS_FOLDER = HERE / "lmms_eval" / "tasks" / "misi"
LM_FOLDER = HERE / "lm_eval" / "tasks" / "misi"
#: The upstream lmms-eval patch: ``LMMS_FOLDER`` as new files under ``UPSTREAM_DIR``.
TASK_PATCH = HERE / "upstream" / "lmms_eval" / "0001-add-misi-tasks.patch"
UPSTREAM_DIR = "lmms_eval/tasks/misi"
#: (group name, split, task-name prefix) of the two groups of each harness.
GROUPS = (("misi", "test", "misi_"), ("tiny_misi", "tiny", "tiny_misi_"))
#: The metrics every task inherits from the shared template (no ``metric_list`` of its own).
TEMPLATE_METRICS = ["score", "exact", *HEADLINE_METRICS, "paper_average"]

_GROUP_TAIL = """\
# Group rows (unweighted means over the tasks that report each metric):
#   score: average_all_tasks, the macro mean of the scores of all tasks;
#   average_headline_tasks: the macro mean over the headline's tasks, without T5 and T6 (T4
#     once);
#   paper_average: the paper's Table 1 average, the mean of its eight columns T1, T2, T3,
#     T4 positive, T4 negative, T7, T8, T9 (each task reports its columns' sum x 7/8, so only the
#     group row, with every headline task, is the paper's figure; NaN when a column has no row).
aggregate_metric_list:
  - metric: score
    aggregation: mean
    weight_by_size: false
  - metric: exact
    aggregation: mean
    weight_by_size: false
{headline}  - metric: paper_average
    aggregation: mean
    weight_by_size: false
metadata:
  version: 1.0
"""


#: The shared templates, whose ``generation_kwargs`` and ``metric_list`` blocks are generated.
LMMS_TEMPLATE = LMMS_FOLDER / "_default_template_yaml"
LM_TEMPLATE = LM_FOLDER / "_template_yaml"


def generation_block(template: Path) -> str:
    """The ``generation_kwargs`` block of a template, from the one set of generation defaults."""
    t, n = repr(float(generation.TEMPERATURE)), generation.MAX_TOKENS
    if template == LMMS_TEMPLATE:
        lines = [f"max_new_tokens: {n}", f"temperature: {t}", "do_sample: false"]
    else:
        lines = ["until: []", f"temperature: {t}", "do_sample: false", f"max_gen_toks: {n}"]
    return "generation_kwargs:\n" + "".join(f"  {line}\n" for line in lines)


def _template_mean(template: Path) -> str:
    return "!function utils.misi_mean" if template == LMMS_TEMPLATE else "mean"


def _metric_lines(names: list[str], mean: str) -> list[str]:
    return [
        f"  - metric: {name}\n    aggregation: "
        + ("!function utils.misi_paper_share" if name == "paper_average" else mean)
        + "\n    higher_is_better: true\n"
        for name in names
    ]


def _replace_block(lines: list[str], key: str, block: str) -> list[str]:
    """``lines`` with the top-level block ``key:`` (up to the next top-level key) replaced."""
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{key}:"))
    end = start + 1
    while end < len(lines) and lines[end][:1] in (" ", "\t"):
        end += 1
    return [*lines[:start], block, *lines[end:]]


def template_text(template: Path) -> str:
    """The template with its ``generation_kwargs`` block (:func:`generation_block`) and its
    ``metric_list`` (:data:`TEMPLATE_METRICS`) rewritten; the rest stays as written by hand."""
    lines = template.read_text(encoding="utf-8").splitlines(keepends=True)
    lines = _replace_block(lines, "generation_kwargs", generation_block(template))
    metrics = "metric_list:\n" + "".join(_metric_lines(TEMPLATE_METRICS, _template_mean(template)))
    return "".join(_replace_block(lines, "metric_list", metrics))


def group_yaml(group: str, prefix: str) -> str:
    """A group of every registry task (both harnesses use the same group file)."""
    tasks = "".join(f"  - {prefix}{spec.name}\n" for spec in TASK_SPECS)
    headline = "".join(
        f"  - metric: {name}\n    aggregation: mean\n    weight_by_size: false\n"
        for name in HEADLINE_METRICS
    )
    return f"group: {group}\ntask:\n{tasks}" + _GROUP_TAIL.format(headline=headline)


def _metric_block(spec: TaskSpec, mean: str) -> str:
    """The task's own ``metric_list`` (empty when it reports the template's metrics)."""
    names = spec_metric_names(spec)
    if names == TEMPLATE_METRICS:
        return ""
    if not spec.in_headline:
        note = (
            "# Left out of the paper's average and of average_headline_tasks: no such metrics"
            " here.\n"
        )
    else:
        note = f"# T{spec.number} positives and negatives are also reported apart.\n"
    return "".join([note, "metric_list:\n", *_metric_lines(names, mean)])


def lmms_task_yaml(spec: TaskSpec, split: str, prefix: str) -> str:
    tiny = f"test_split: {split}\n" if split != "test" else ""
    return (
        f"task: {prefix}{spec.name}\ndataset_name: {spec.name}\n{tiny}include: _default_template_yaml\n"
        + _metric_block(spec, "!function utils.misi_mean")
    )


def lm_task_yaml(spec: TaskSpec, split: str, prefix: str) -> str:
    return (
        f"include: _template_yaml\ntask: {prefix}{spec.name}\ntest_split: {split}\n"
        f"dataset_kwargs:\n  config: {spec.name}\n  split: {split}\n" + _metric_block(spec, "mean")
    )


#: The lmms-eval folder's README (``README.md``) has its task table generated between these lines.
TASK_TABLE_BEGIN = "<!-- task table: written by python -m misi_bench.eval_plugins.harness_files -->"
TASK_TABLE_END = "<!-- end of task table -->"


def task_table() -> str:
    """The README's task table: the groups, then one row per task of the registry."""
    rows = [
        "| name | what |",
        "|---|---|",
        "| `misi` | group: every task below on the `test` split |",
    ]
    for spec in TASK_SPECS:
        kind = " (multiple choice)" if kind_of(spec).carries_options else ""
        rows.append(f"| `{spec.config}` | T{spec.number}: {spec.label}{kind} |")
    rows.append(
        "| `tiny_misi`, `tiny_misi_<task>` | the same on the `tiny` split (questions drawn from "
        "`test` per task; the build's card says how many) |"
    )
    return "\n".join(rows) + "\n"


def _lmms_readme() -> Path:
    return LMMS_FOLDER / "README.md"


def readme_text(readme: Path | None = None) -> str:
    """The README (the lmms-eval folder's by default) with its task table (:func:`task_table`)
    rewritten between the markers."""
    readme = _lmms_readme() if readme is None else readme
    text = readme.read_text(encoding="utf-8")
    head, sep, rest = text.partition(TASK_TABLE_BEGIN + "\n")
    _, end, tail = rest.partition(TASK_TABLE_END)
    if not sep or not end:
        raise SystemExit(f"{readme}: the task table markers are missing")
    return head + sep + task_table() + end + tail


def generated_yaml() -> dict[Path, str]:
    """``{path: text}`` of every generated YAML file of both harnesses."""
    out: dict[Path, str] = {}
    for group, split, prefix in GROUPS:
        for folder, task_yaml in ((LMMS_FOLDER, lmms_task_yaml), (LM_FOLDER, lm_task_yaml)):
            out[folder / f"{group}.yaml"] = group_yaml(group, prefix)
            for spec in TASK_SPECS:
                out[folder / f"{prefix}{spec.name}.yaml"] = task_yaml(spec, split, prefix)
    return out


def new_file_diff(rel: str, text: str) -> str:
    """A git-style unified diff that creates ``rel`` with ``text`` (``patch -p1`` / ``git apply``)."""
    lines = text.splitlines(keepends=True)
    out = [
        f"diff --git a/{rel} b/{rel}\n",
        "new file mode 100644\n",
        "--- /dev/null\n",
        f"+++ b/{rel}\n",
        f"@@ -0,0 +1,{len(lines)} @@\n",
    ]
    out += ["+" + line for line in lines]
    if lines and not lines[-1].endswith("\n"):
        out.append("\n\\ No newline at end of file\n")
    return "".join(out)


def _hand_written(folder: Path) -> dict[str, str]:
    """The folder's files that are not generated YAML (templates, ``utils.py``, README)."""
    return {
        p.name: p.read_text(encoding="utf-8")
        for p in sorted(folder.iterdir())
        if p.is_file()
        and p.suffix != ".pyc"
        and not p.name.startswith(".")
        and not _is_task_yaml(p.name)
    }


def _is_task_yaml(name: str) -> bool:
    return name.endswith(".yaml") and any(name.startswith(g) for g, _, _ in GROUPS)


def lmms_patch(yaml_files: dict[Path, str] | None = None) -> str:
    """The upstream patch: the lmms-eval folder's hand-written files and generated YAML."""
    yaml_files = generated_yaml() if yaml_files is None else yaml_files
    files = _hand_written(LMMS_FOLDER)
    files[LMMS_TEMPLATE.name] = template_text(LMMS_TEMPLATE)
    files["README.md"] = readme_text()
    files.update({p.name: text for p, text in yaml_files.items() if p.parent == LMMS_FOLDER})
    return "".join(new_file_diff(f"{UPSTREAM_DIR}/{name}", files[name]) for name in sorted(files))


def generated_files() -> dict[Path, str]:
    """``{path: text}`` of every file this module writes."""
    files = generated_yaml()
    for template in (LMMS_TEMPLATE, LM_TEMPLATE):
        files[template] = template_text(template)
    files[_lmms_readme()] = readme_text()
    files[TASK_PATCH] = lmms_patch(files)
    return files


def stale_files() -> list[Path]:
    """Files that differ from what :func:`generated_files` writes, are missing, or are task YAML
    the registry no longer has."""
    files = generated_files()
    out = [
        p for p, text in files.items() if not p.exists() or p.read_text(encoding="utf-8") != text
    ]
    for folder in (LMMS_FOLDER, LM_FOLDER):
        out += [p for p in sorted(folder.iterdir()) if _is_task_yaml(p.name) and p not in files]
    return out


def write_files() -> list[Path]:
    """Write every generated file, remove task YAML the registry no longer has; returns the
    paths changed."""
    changed = stale_files()
    files = generated_files()
    for path in changed:
        if path in files:
            path.write_text(files[path], encoding="utf-8")
        else:
            path.unlink()
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="exit 1 if a committed file is out of date"
    )
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_files()
        for path in stale:
            print(
                f"{path} is out of date: run python -m misi_bench.eval_plugins.harness_files",
                file=sys.stderr,
            )
        return 1 if stale else 0
    for path in write_files():
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
