"""lm-evaluation-harness integration: the task folder loads through ``include_path``, the hooks
score through lm-eval's task API, and ``simple_evaluate`` runs an oracle and a constant model."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest
from misi_bench.builder.core.registry import TASK_BY_NAME
from misi_bench.eval_plugins._torch_compat import ensure_torchvision_importable

ensure_torchvision_importable()  # CPU-only torch next to PyPI's CUDA torchvision (see module)
import lm_eval  # noqa: E402,F401  (the extra is installed in CI; a missing harness must fail, not skip)
from misi_bench.eval_plugins.common import GROUP_SHARE, TASKS, score_doc
from misi_bench.eval_plugins.lm_eval import include_path

from harness_support import expected_averages, expected_block, same_figure

LIMIT = 2


@pytest.fixture()
def offline(monkeypatch, data_dir, tmp_path):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("MISI_BENCH_REPO", str(data_dir))


@pytest.fixture(scope="module")
def manager():
    """lm-eval's TaskManager over our folder only (its whole index: the slow test below)."""
    from lm_eval.tasks import TaskManager

    return TaskManager(include_path=include_path(), include_defaults=False)


def _check_lists_our_tasks(manager) -> None:
    assert sorted(manager.match_tasks(["misi_*"])) == sorted(f"misi_{t}" for t in TASKS)
    assert {"misi", "tiny_misi"} <= set(manager.all_groups)
    assert {f"tiny_misi_{t}" for t in TASKS} <= set(manager.all_subtasks)


def test_task_manager_lists_our_tasks(manager):
    _check_lists_our_tasks(manager)


@pytest.mark.slow  # lm-eval's whole task index (41 s on a loaded machine)
def test_task_manager_lists_our_tasks_beside_every_lm_eval_task():
    from lm_eval.tasks import TaskManager

    _check_lists_our_tasks(TaskManager(include_path=include_path()))


def test_hooks_score_gold_through_the_task_api(manager, offline):
    tasks = manager.load_task_or_group(["misi"])
    flat = {}

    def walk(d):
        for k, v in d.items():
            if isinstance(v, dict):
                walk(v)
            else:
                flat[k] = v

    walk(tasks)
    assert set(flat) == {f"misi_{t}" for t in TASKS}
    # the rows name their build: lm-eval logs each doc in its samples, `score` reads it back
    build = json.loads((Path(os.environ["MISI_BENCH_REPO"]) / "manifest.json").read_text())
    for name, task in flat.items():
        docs = list(task.test_docs())
        assert docs, name
        assert {doc["config_hash"] for doc in docs} == {build["config_hash"]}, name
        agg = task.aggregation()
        values: dict[str, list[float]] = {}
        for doc in docs:
            images = task.doc_to_image(doc)
            text = task.doc_to_text(doc)
            assert len(images) == len(doc["image_views"]) and all(im.mode == "RGB" for im in images)
            assert text == "<image>" * len(images) + doc["question"]
            for key, val in task.process_results(doc, [doc["answer"]]).items():
                values.setdefault(key, []).append(val)
        for key, vals in values.items():
            if key == "paper_average":  # a task's share: its columns' sum x 7/8 (see common.py)
                columns = {item["column"] for item in vals}
                assert agg[key](vals) == pytest.approx(GROUP_SHARE * len(columns)), (name, key)
            else:
                assert agg[key](vals) == 1.0, (name, key)
        headline = TASK_BY_NAME[name.removeprefix("misi_")].in_headline
        assert ("average_headline_tasks" in values) == headline and (
            "paper_average" in values
        ) == headline


@pytest.mark.slow
def test_simple_evaluate_oracle_and_constant(manager, offline, data_dir):
    from lm_eval import evaluator
    from lm_eval.api.model import LM

    class Fixed(LM):
        MULTIMODAL = True

        def __init__(self, answer=None):
            super().__init__()
            self.answer = answer

        def generate_until(self, requests):
            return [req.doc["answer"] if self.answer is None else self.answer for req in requests]

        def loglikelihood(self, requests):
            raise NotImplementedError

        def loglikelihood_rolling(self, requests):
            raise NotImplementedError

    gold = evaluator.simple_evaluate(
        model=Fixed(), tasks=["misi"], task_manager=manager, limit=LIMIT
    )
    for task in TASKS:
        assert gold["results"][f"misi_{task}"]["score,none"] == 1.0, task
    assert gold["results"]["misi"]["score,none"] == 1.0
    want = expected_averages(data_dir, LIMIT, lambda row: row["answer"])
    assert same_figure(gold["results"]["misi"]["paper_average,none"], want["paper_average"])
    assert same_figure(
        gold["results"]["misi"]["average_headline_tasks,none"], want["average_headline_tasks"]
    )

    import datasets
    from misi_bench.eval_plugins import harness_intervals

    constant = "roll z -45"
    harness_intervals.reset()  # what the launcher does around lm-eval's simple_evaluate
    const = evaluator.simple_evaluate(
        model=Fixed(constant), tasks=["misi"], task_manager=manager, limit=LIMIT
    )
    harness_intervals.add_intervals(const)
    block = expected_block(data_dir, LIMIT, lambda row: constant)
    assert const["misi_intervals"]["test"] == block  # the scorer's, for the same answers
    stats = block["statistics"]
    assert const["results"]["misi"]["score_stderr,none"] == stats["average_all_tasks"]["se"]
    for task in TASKS:
        assert const["results"][f"misi_{task}"]["score_stderr,none"] == stats[task]["se"], task
    for task in TASKS:
        rows = datasets.load_dataset(str(data_dir), task, split="test").select(range(LIMIT))
        expected = math.fsum(score_doc(r, constant)["score"] for r in rows) / LIMIT
        assert const["results"][f"misi_{task}"]["score,none"] == pytest.approx(expected), task
    want = expected_averages(data_dir, LIMIT, lambda row: constant)
    group = const["results"]["misi"]
    assert same_figure(group["score,none"], want["average_all_tasks"])
    assert same_figure(group["average_headline_tasks,none"], want["average_headline_tasks"])
    assert same_figure(group["paper_average,none"], want["paper_average"])
