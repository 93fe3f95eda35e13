"""lmms-eval hooks for MiSI-Bench (used by the YAML files next to this one via ``!function``).

Prompts are the dataset rows' own ``question`` text (it already names the images in order, lists
the options and fixes the answer format), so no prompt is written here. Scoring calls the one
MiSI-Bench scorer (``pip install misi-bench``), so every harness reports the same numbers.
"""

from __future__ import annotations

import importlib.util

if importlib.util.find_spec("misi_bench") is None:  # the tasks still list; loading one stops here
    raise ImportError(
        "the MiSI-Bench tasks score with the misi-bench package: run `pip install misi-bench`"
    )

import math

from misi_bench.eval_plugins.common import (
    doc_images,
    doc_prompt,
    paper_average_share,
    score_doc,
    with_build_column,
)


def misi_process_docs(dataset):
    """The split with a ``config_hash`` column naming its build, so that every logged sample
    (lmms-eval logs the row without its images) records the build it was made on and
    ``misi-bench score`` can check it."""
    return with_build_column(dataset)


def misi_doc_to_visual(doc):
    """The row's images in prompt order, as PIL RGB images."""
    return doc_images(doc)


def misi_doc_to_text(doc, lmms_eval_specific_kwargs=None):
    kwargs = lmms_eval_specific_kwargs or {}
    return doc_prompt(doc, kwargs.get("pre_prompt", ""), kwargs.get("post_prompt", ""))


def misi_doc_to_messages(doc, lmms_eval_specific_kwargs=None):
    """One user turn: every image in prompt order, then the question text."""
    content = [{"type": "image", "url": image} for image in misi_doc_to_visual(doc)]
    content.append({"type": "text", "text": misi_doc_to_text(doc, lmms_eval_specific_kwargs)})
    return [{"role": "user", "content": content}]


def misi_process_results(doc, results):
    """Score the first generation; returns one value per metric this row contributes to
    (``score``, ``exact``, ``average_headline_tasks``, ``paper_average``, T4
    ``score_positive``/``score_negative``)."""
    prediction = results[0] if results else ""
    return score_doc(doc, prediction)


def misi_mean(items):
    """Mean of the per-row values (0-1 scale); NaN when a subset has no row in this run."""
    items = [float(x) for x in items]
    return math.fsum(items) / len(items) if items else float("nan")


def misi_paper_share(items):
    """A task's share of the paper's average (see ``common.paper_average_share``); the group
    row ``misi`` / ``tiny_misi`` of ``paper_average`` is the paper's eight-column average."""
    return paper_average_share(items)
