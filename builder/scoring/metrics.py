"""Per-question metrics of docs/spec.md section 7: :func:`score_prediction` (all values on a 0-1 scale)."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence

from ..core.profiles import PROFILE_NAMES, get_profile, profile_of_metadata
from ..core.registry import (
    LETTER,
    OPERATION_PAIR,
    SINGLE_OPERATION,
    TASK_BY_NAME,
    TaskSpec,
    canonical_task,
)
from ..operations.language import Move, Operation, Roll, parse_operations
from .bonds import KNOWN_RESIDUES, BondAnswer, count_matched, gold_bonds, set_score
from .parsing import parse
from .readings import (
    alt_bonds,
    alt_pair,
    alt_single,
    alt_zero,
    magnitude_score,
    move_part,
    other_magnitude_score,
)
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


def _metadata_dict(metadata: str | Mapping | None) -> dict:
    if isinstance(metadata, Mapping):
        return dict(metadata)
    if isinstance(metadata, (str, bytes)) and metadata:
        try:
            value = json.loads(metadata)
        except (ValueError, TypeError):
            return {}
        return value if isinstance(value, dict) else {}
    return {}


def _norm_text(text: object) -> str | None:
    if not isinstance(text, str) or len(text) > MAX_CHARS:
        return None
    return " ".join(text.split()).casefold()


def _gold(spec: TaskSpec, answer: str):
    """Strict parse of a gold answer; raises ValueError when the dataset row is malformed."""
    task, kind = spec.name, spec.answer_kind
    if not isinstance(answer, str) or not answer.strip():
        raise ValueError(f"{task}: gold answer must be a non-empty string, got {answer!r}")
    try:
        if kind == SINGLE_OPERATION:
            ops = parse_operations(answer.strip())
            if len(ops) == 1:
                return ops[0]
        elif kind == OPERATION_PAIR:
            return parse_operations(answer.strip())
        elif kind == LETTER:
            letter = answer.strip().upper()
            if len(letter) == 1 and "A" <= letter <= "Z":
                return letter
        else:
            value = gold_bonds(kind, answer)
            if value is not None:
                return value
    except ValueError:
        pass
    raise ValueError(f"{task}: malformed gold answer {answer!r}")


def _score_single_op(spec: TaskSpec, pred, gold: Operation, profile: str) -> dict[str, float]:
    if not isinstance(pred, (Move, Roll)) or pred.verb != gold.verb or pred.axis != gold.axis:
        return {"score": 0.0, "exact": 0.0, **alt_single(spec, pred, gold)}
    exact = float(pred.magnitude == gold.magnitude)
    if spec.score_radius is None:
        return {"score": exact, "exact": exact}
    return {
        "score": magnitude_score(spec, pred.magnitude, gold.magnitude, profile),
        "exact": exact,
        **alt_single(spec, pred, gold),
    }


def _score_pair(
    spec: TaskSpec, pred, gold: tuple[Operation, ...], profile: str
) -> dict[str, float]:
    gold_roll = next((op for op in gold if isinstance(op, Roll)), None)
    gold_move = next((op for op in gold if isinstance(op, Move)), None)
    ops = list(pred) if isinstance(pred, tuple) else []
    rolls = [op for op in ops if isinstance(op, Roll)]
    moves = [op for op in ops if isinstance(op, Move)]
    rot = other_rot = 0.0
    if gold_roll is not None and rolls and rolls[-1].axis == gold_roll.axis:
        rot = magnitude_score(spec, rolls[-1].angle, gold_roll.angle, profile)
        other_rot = other_magnitude_score(spec, rolls[-1].angle, gold_roll.angle, profile)
    elif gold_roll is None and not rolls:
        rot = other_rot = 1.0
    mov = move_part(moves, gold_move)
    exact = float(sorted(map(str, ops)) == sorted(map(str, gold)))
    return {
        "score": 0.5 * rot + 0.5 * mov,
        "exact": exact,
        "rotation_part": rot,
        "move_part": mov,
        **alt_pair(rot, moves, gold_move, mov, (profile, other_rot)),
    }


def _halves(spec: TaskSpec, gold) -> dict[str, float]:
    """The metric that splits the task's paper column in two (T4: ``polarity`` 1 for a residue
    that makes H-bonds, 0 for one that makes none)."""
    if spec.halves is not None and isinstance(gold, BondAnswer):
        return {spec.halves: float(gold.present)}
    return {}


def _score_bonds(spec: TaskSpec, pred, gold: BondAnswer, strict: bool = False) -> dict[str, float]:
    out = _halves(spec, gold)
    n_match = None
    if not isinstance(pred, BondAnswer):
        main = {"score": 0.0, "exact": 0.0}
    elif not gold.present or not gold.bonds:
        ok = float(pred.present == gold.present and not pred.bonds)
        main = {"score": ok, "exact": ok}
    elif not pred.present:
        main = {"score": 0.0, "exact": 0.0}
    else:
        n_match = count_matched(pred.bonds, gold.bonds, strict=strict)
        n_pred, n_gold = len(pred.bonds), len(gold.bonds)
        exact = float(n_match == n_gold == n_pred)
        main = {"score": set_score(n_pred, n_gold, n_match), "exact": exact}
    return {**main, **out, **alt_bonds(spec, pred, gold, n_match, main)}


def _zero_metrics(spec: TaskSpec, gold, profile: str) -> dict[str, float]:
    out = {"score": 0.0, "exact": 0.0, "parsed": 0.0}
    if spec.answer_kind == OPERATION_PAIR:
        out.update(rotation_part=0.0, move_part=0.0)
    out.update(_halves(spec, gold))
    out.update(alt_zero(spec, gold, profile))
    return out


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
    task, kind = spec.name, spec.answer_kind
    gold = _gold(spec, answer)
    profile_name = profile_of_metadata(metadata)
    if profile_name not in PROFILE_NAMES:
        raise ValueError(
            f"unknown profile {profile_name!r} in the row's metadata; expected one of "
            f"{', '.join(PROFILE_NAMES)}"
        )
    strict = get_profile(profile_name).strict_bond_items
    if options is None:
        meta_options = _metadata_dict(metadata).get("options")
        options = meta_options if isinstance(meta_options, (list, tuple)) else None
    try:
        norm = _norm_text(prediction)
        if norm is not None and norm == _norm_text(answer):
            pred = gold  # verbatim gold answer: always exactly 1.0
        else:
            residues = KNOWN_RESIDUES
            if isinstance(gold, BondAnswer) and gold.bonds:
                residues = KNOWN_RESIDUES | frozenset(k[0] for k in gold.bonds)
            pred = parse(task, prediction, residues=residues, options=options)
        if pred is None:
            return _zero_metrics(spec, gold, profile_name)
        if kind == SINGLE_OPERATION:
            out = _score_single_op(spec, pred, gold, profile_name)
        elif kind == OPERATION_PAIR:
            out = _score_pair(spec, pred, gold, profile_name)
        elif kind == LETTER:
            ok = float(pred == gold)
            out = {"score": ok, "exact": ok}
        else:
            out = _score_bonds(spec, pred, gold, strict=strict)
        out["parsed"] = 1.0
        return out
    except Exception:
        logger.exception("unexpected error while scoring a %s prediction; scored 0", task)
        return _zero_metrics(spec, gold, profile_name)
