"""lm-evaluation-harness hooks for MiSI-Bench (used through ``!function`` by the YAML files here).

The prompt is the row's ``question`` with one ``<image>`` placeholder per image in front, in
prompt order (lm-eval's multimodal convention); scoring calls the one MiSI-Bench scorer.
"""

from __future__ import annotations

from misi_bench.eval_plugins.common import (
    doc_images,
    doc_prompt,
    load_split,
    paper_average_share,
    score_doc,
    with_build_column,
)

IMAGE_TOKEN = "<image>"


def misi_dataset(config: str, split: str = "test", **_ignored):
    """``{split: Dataset}`` for one config, from ``misi_bench.hub_repo_id()`` (Hub repo or local
    folder) at the revision ``$MISI_BENCH_REVISION``; called by lm-eval's ``custom_dataset``.
    Rows carry the build's ``config_hash`` (logged with each sample, read back by ``score``)."""
    return {split: with_build_column(load_split(config, split))}


def misi_doc_to_image(doc):
    return doc_images(doc)


def misi_doc_to_text(doc):
    return IMAGE_TOKEN * len(doc["images"]) + doc_prompt(doc)


def misi_process_results(doc, results):
    return score_doc(doc, results[0] if results else "")


def misi_paper_share(items):
    """A task's share of the paper's average (see ``common.paper_average_share``); the group
    row ``misi`` / ``tiny_misi`` of ``paper_average`` is the paper's eight-column average."""
    return paper_average_share(items)
