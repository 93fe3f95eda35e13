"""Per-question metrics of docs/spec.md section 7: :func:`score_prediction` (all values on a 0-1 scale)."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from ..core.profiles import PROFILE_NAMES, get_profile, profile_of_metadata
from ..core.registry import TASK_BY_NAME, TaskSpec, canonical_task
from .kinds import kind_of
from .parsing import parse
from .text import MAX_CHARS

logger = logging.getLogger(__name__)

#: The weighted-score radius R of a single-command answer (T1: Å, T2: degrees) and the angle
#: scale of an operation pair's rotation part (T7: degrees) are each task's ``score_radius`` in
#: the registry; a single command without one (T3) scores exact answers only. ``paper`` rows
#: count the error in steps of the allowed values instead (over 7 for T1, 11 for T2 and T7's
#: roll; ``readings.HEADLINE_RULE``), the reading the paper's printed cells fit.

# --------------------------------------------------------------------------------------------
# Scoring
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RowMeta:
    """What the scorer reads from a row's metadata: its profile name (``explicit`` when it names
    none; an unknown name as it is) and its choice options (None when it lists none)."""

    profile: str
    options: tuple | None


def _meta_of(metadata: Mapping) -> RowMeta:
    options = metadata.get("options")
    return RowMeta(
        profile_of_metadata(metadata),
        tuple(options) if isinstance(options, (list, tuple)) else None,
    )


@lru_cache(maxsize=4096)
def _meta_of_text(text: str | bytes) -> RowMeta:
    """The metadata record of a row's JSON text, parsed once: a row is scored many times (every
    baseline rule and random draw), and its text object (whose hash Python keeps) finds its
    record again without a second ``json.loads``."""
    try:
        value = json.loads(text)
    except (ValueError, TypeError):
        value = None
    return _meta_of(value if isinstance(value, dict) else {})


def row_meta(metadata: str | bytes | Mapping | None) -> RowMeta:
    """The :class:`RowMeta` of a row's metadata (JSON text, a mapping or None)."""
    if isinstance(metadata, Mapping):
        return _meta_of(metadata)
    if isinstance(metadata, (str, bytes)) and metadata:
        return _meta_of_text(metadata)
    return _meta_of({})


def _norm_text(text: object) -> str | None:
    """``text`` with its whitespace runs made single spaces; its case is kept (T9 chains ``A`` and
    ``a`` are two chains, so a reply that differs from the gold by case alone is parsed)."""
    if not isinstance(text, str) or len(text) > MAX_CHARS:
        return None
    return " ".join(text.split())


def _gold(spec: TaskSpec, answer: str):
    """Strict parse of a gold answer (by the task's answer kind); raises ValueError when the
    dataset row is malformed. Parsed once per (task, answer): the parsed answers are frozen."""
    if not isinstance(answer, str) or not answer.strip():
        raise ValueError(f"{spec.name}: gold answer must be a non-empty string, got {answer!r}")
    return _gold_of(spec.name, answer)


@lru_cache(maxsize=4096)
def _gold_of(task: str, answer: str):
    spec = TASK_BY_NAME[task]
    try:
        return kind_of(spec).gold(spec, answer)
    except ValueError:
        pass
    raise ValueError(f"{spec.name}: malformed gold answer {answer!r}")


def score_prediction(
    task: str,
    prediction,
    answer: str,
    metadata: str | dict | None = None,
    *,
    options: Sequence[str] | None = None,
) -> dict[str, float]:
    """Score one model output against the gold ``answer`` of one question (all values 0-1).

    ``metadata`` (the row's JSON text or a dict) may carry ``options`` (the choice list); the
    keyword ``options`` overrides it. Returns at least ``score``, ``exact`` and ``parsed``;
    an operation pair (T7) adds ``rotation_part`` / ``move_part``; a task with ``halves`` (T4)
    adds that metric (``polarity``); the other readings of rules the paper leaves open come as
    metrics of their own (:mod:`.readings`: ``score_steps``, ``score_radius``,
    ``score_move_fixed``, ``score_rotation_radius`` / ``score_rotation_steps``,
    ``score_precision``, ``score_f1``, ``exact_bonds_present``). The rules of the row's profile
    apply (``metadata["profile"]``, ``explicit`` when absent; see ``builder.core.profiles``): in
    ``paper`` rows a bond item matches only when it names every field of the answer format, and
    T1/T2 magnitudes and T7's roll are scored in steps of the allowed values (over 7 / 11).
    Never raises because of ``prediction``; raises ``ValueError`` for an unknown task or profile
    or a malformed gold answer (a dataset bug).

    >>> score_prediction("translation", "Answer: move x 3", "move x 2")["score"]  # 1 - 1/8
    0.875
    >>> round(score_prediction("translation", "move x 3", "move x 2", {"profile": "paper"})["score"], 4)
    0.8571
    >>> score_prediction("rotation_rotation", "**B**", "B")
    {'score': 1.0, 'exact': 1.0, 'parsed': 1.0}
    >>> score_prediction("docking", "I cannot tell", "roll y 30, move x 12")["score"]
    0.0
    """
    spec = TASK_BY_NAME[canonical_task(task)]
    task, kind = spec.name, kind_of(spec)
    gold = _gold(spec, answer)
    meta = row_meta(metadata)
    profile_name = meta.profile
    if profile_name not in PROFILE_NAMES:
        raise ValueError(
            f"unknown profile {profile_name!r} in the row's metadata; expected one of "
            f"{', '.join(PROFILE_NAMES)}"
        )
    strict = get_profile(profile_name).strict_bond_items
    if options is None:
        options = meta.options
    try:
        norm = _norm_text(prediction)
        if norm is not None and norm == _norm_text(answer):
            pred = gold  # verbatim gold answer: always exactly 1.0
        else:
            pred = parse(task, prediction, residues=kind.residues(gold), options=options)
        if pred is None:
            return kind.zero(spec, gold, profile_name)
        out = kind.score(spec, pred, gold, profile_name, strict)
        out["parsed"] = 1.0
        return out
    except Exception:
        logger.exception("unexpected error while scoring a %s prediction; scored 0", task)
        return kind.zero(spec, gold, profile_name)
