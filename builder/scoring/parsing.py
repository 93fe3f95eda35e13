"""Parsing of model output into answer values: :func:`parse_prediction` is the public entry.
The task's answer kind (:mod:`.kinds`) reads each section of the reply: operations (T1, T2, T3,
T7) and letters (T5, T6, T8) through :mod:`.replies`, bond lists (T4, T9) through :mod:`.bonds`."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from ..core.registry import TASK_BY_NAME, canonical_task
from .bonds import KNOWN_RESIDUES
from .kinds import kind_of
from .replies import INVALID
from .text import clean, sections

logger = logging.getLogger(__name__)

# --------------------------------------------------------------------------------------------
# Public parsing
# --------------------------------------------------------------------------------------------


def parse(
    task: str,
    text: object,
    *,
    residues: frozenset = KNOWN_RESIDUES,
    options: Sequence[str] | None = None,
):
    kind = kind_of(TASK_BY_NAME[task])
    cleaned = clean(text, tables=kind.tables)
    if cleaned is None or not cleaned.strip():
        return None
    for section, immediate in sections(cleaned):
        value = kind.parse_section(section, immediate, options, residues)
        if value is INVALID:
            return None
        if value is not None:
            return value
    return None


def parse_prediction(task: str, text: object, options: Sequence[str] | None = None):
    """Parse a model's output for ``task`` leniently; None when nothing valid is found.

    Returns, by the task's answer kind (registry): a single operation (T1-T3): one
    :class:`Move`/:class:`Roll` (the last command; in a list like ``move x 3, move y 0`` the last
    non-zero one); an operation pair (T7): a tuple of operations (the last list of commands; a
    missing roll or move is taken from earlier text); a letter (T5, T6, T8): ``"A"``..``"D"``
    (``options``, when given, also lets a written-out option count); bond answers (T4, T9): a
    :class:`BondAnswer`.

    Tolerates case, markdown, prose, ``Answer:`` prefixes, ``<think>`` blocks, unicode minus
    signs, ``+`` signs, units (°, Å, degrees). Magnitudes must be integers (``3`` or ``3.0``); a
    final command with a fractional magnitude makes the answer invalid (None). Long outputs are
    read in two windows (see :func:`.text.clean`). Never raises for any ``text``; raises
    ``ValueError`` for an unknown ``task``.
    """
    task = canonical_task(task)
    try:
        return parse(task, text, options=options)
    except Exception:
        logger.exception(
            "unexpected error while parsing a %s prediction; scored as unparseable", task
        )
        return None


def format_parsed(task: str, value) -> str | None:
    """Write a parsed value back in the benchmark's answer format (None stays None)."""
    task = canonical_task(task)
    if value is None:
        return None
    return kind_of(task).format(value)
