"""Other readings of the scoring rules the paper leaves open, reported beside the main score.

The headline (``score``, the paper's average) keeps the rules of docs/spec.md section 7; each rule the
paper does not state exactly also gets its other plausible reading as a metric of its own, so a
reader can see how much the choice matters (docs/fidelity.md, "Scoring rules: ours and the
paper's"):

* ``score_steps`` and ``score_radius`` (T1, T2): the error counted in steps of the task's
  non-zero magnitudes (T1: -4..-1, 1..4 Å; T2: -90..-15, 15..90 degrees in 15-degree steps),
  divided by the largest step distance (7 for T1, 11 for T2); or the absolute error over the
  task's ``score_radius`` (8 Å, 180 degrees). The paper's printed T1/T2 cells fit sums of
  sevenths and elevenths for every row, not the eighths and twelfths that /8 Å and /180 degrees
  give, so the ``paper`` profile's headline is ``score_steps`` and ``explicit``'s is
  ``score_radius`` (:data:`HEADLINE_RULE`); both are always reported.
* ``rotation_part_radius`` and ``score_rotation_radius`` (T7, ``paper`` rows): the rotation
  part over 180 degrees (the ``explicit`` headline) instead of in steps over 11;
  ``rotation_part_steps`` and ``score_rotation_steps`` (T7, ``explicit`` rows): the other way
  round. The paper's T7 cells mix two parts and cannot decide between them.
* ``move_part_fixed`` and ``score_move_fixed`` (T7): the move part over a fixed range (T1's
  radius, 8 Å) instead of over the true distance |D|.
* ``score_precision`` and ``score_f1`` (T4 positives, T9): the set rule's base ratio read as
  |P ∩ G| / |P| (the paper's words read literally) or as F1, with the same two penalties.
* :data:`T9_PAPER_EXACT` (T9): exact match only on complexes with at least one
  H-bond (App. B), absent elsewhere so its mean is the paper's figure.
"""

from __future__ import annotations

import bisect

from ..core.profiles import PROFILES
from ..core.registry import TaskSpec
from ..operations.language import Move, Roll
from .bonds import BondAnswer

__all__ = [
    "HEADLINE_RULE",
    "READINGS",
    "T9_PAPER_EXACT",
    "alt_bonds",
    "alt_pair",
    "alt_single",
    "step_score",
]

#: The per-question metric of T9 exact match counted the paper's way (App. B: only complexes
#: with at least one H-bond); absent on a complex without one, so its mean is over the others.
T9_PAPER_EXACT = "exact_bonds_present"
#: What each other reading is (the JSON report carries this table as ``readings``).
READINGS = {
    "score_steps": "T1/T2: error in steps of the non-zero magnitudes over the largest step distance "
    "(7 for T1, 11 for T2); fits the paper's printed T1/T2 cells, which /8 and /180 do not (the "
    "'paper' profile's headline)",
    "score_radius": "T1/T2: absolute error over 8 Å / 180 degrees (the 'explicit' profile's "
    "headline; no printed cell of the paper fits it)",
    "rotation_part_radius": "T7's rotation part over 180 degrees (the 'explicit' headline's rule)",
    "score_rotation_radius": "T7 with its rotation part over 180 degrees",
    "rotation_part_steps": "T7's rotation part in 15-degree steps over 11 (the 'paper' headline's rule)",
    "score_rotation_steps": "T7 with its rotation part in 15-degree steps over 11",
    "score_move_fixed": "T7 with its move part over a fixed 8 Å (T1's radius) instead of |D|",
    "move_part_fixed": "T7's move part over a fixed 8 Å instead of |D|",
    "score_precision": "T4 positives/T9: the set rule with |P ∩ G| / |P| as its base (the paper's "
    "'correct among all provided outputs' read literally), same penalties",
    "score_f1": "T4 positives/T9: the set rule with F1 as its base, same penalties",
    T9_PAPER_EXACT: "T9 exact match on complexes with at least one H-bond only (the paper's App. B)",
}
#: The headline's reading of the T1/T2 magnitude error and of T7's rotation part, per profile:
#: ``steps`` (in steps of the allowed values, over 7 / 11) or ``radius`` (over 8 Å / 180 degrees).
HEADLINE_RULE = {p.name: p.magnitude_rule for p in PROFILES.values()}
#: T7's other-reading metrics (rotation part, score) of a profile: those of the rule that is *not*
#: its headline.
_OTHER_PAIR_OF_RULE = {
    "steps": ("rotation_part_radius", "score_rotation_radius"),
    "radius": ("rotation_part_steps", "score_rotation_steps"),
}
OTHER_PAIR = {name: _OTHER_PAIR_OF_RULE[rule] for name, rule in HEADLINE_RULE.items()}
#: The fixed range of T7's move part in the other reading: the translation task's radius.
FIXED_MOVE_RANGE = 8.0  # Å; equal to T1's score radius (tests/test_paper_fidelity.py holds it)


def _position(values: tuple[int, ...], v: float) -> float:
    """Where ``v`` falls among the sorted ``values`` (0 .. len-1, fractional between two values,
    extrapolated by the first step outside them)."""
    step = values[1] - values[0] if len(values) > 1 else 1
    if v <= values[0]:
        return (v - values[0]) / step
    if v >= values[-1]:
        return len(values) - 1 + (v - values[-1]) / step
    i = bisect.bisect_left(values, v)
    if values[i] == v:
        return float(i)
    lo, hi = values[i - 1], values[i]
    return i - 1 + (v - lo) / (hi - lo)


def step_score(spec: TaskSpec, pred: float, gold: float) -> float:
    """``max(0, 1 - steps / (n - 1))``: the error in steps of the n allowed magnitudes of the
    task's first command (T1, T2; T7's roll)."""
    values = tuple(sorted(spec.commands[0].values))
    steps = abs(_position(values, pred) - _position(values, gold))
    return max(0.0, 1.0 - steps / (len(values) - 1))


def radius_score(spec: TaskSpec, pred: float, gold: float) -> float:
    """``max(0, 1 - abs(error) / R)`` with R the task's ``score_radius``."""
    return max(0.0, 1.0 - abs(pred - gold) / float(spec.score_radius))


def magnitude_score(spec: TaskSpec, pred: float, gold: float, profile: str) -> float:
    """The headline's credit for a magnitude on the right axis in ``profile``
    (:data:`HEADLINE_RULE`)."""
    if HEADLINE_RULE.get(profile) == "steps":
        return step_score(spec, pred, gold)
    return radius_score(spec, pred, gold)


def other_magnitude_score(spec: TaskSpec, pred: float, gold: float, profile: str) -> float:
    """The credit under the reading that is not ``profile``'s headline."""
    if HEADLINE_RULE.get(profile) == "steps":
        return radius_score(spec, pred, gold)
    return step_score(spec, pred, gold)


def alt_single(spec: TaskSpec, pred, gold) -> dict[str, float]:
    """Both readings of a single-command answer (T1, T2; none for T3): ``score_steps`` and
    ``score_radius`` (one of them is the headline's ``score``, by profile); the single-operation
    kind asks for them only when the task has a ``score_radius``."""
    if not isinstance(pred, (Move, Roll)) or pred.verb != gold.verb or pred.axis != gold.axis:
        return {"score_steps": 0.0, "score_radius": 0.0}
    return {
        "score_steps": step_score(spec, pred.magnitude, gold.magnitude),
        "score_radius": radius_score(spec, pred.magnitude, gold.magnitude),
    }


def move_part(pred_moves: list, gold_move, scale: float | None = None) -> float:
    """T7's move part: 0 unless the last predicted move is a non-zero ``move x`` of the gold
    move's sign, then ``max(0, 1 - |dD| / scale)``; ``scale`` None divides by ``|D|`` (the
    headline's reading), a number by that fixed range in Å. A gold move the builder never makes
    (not a non-zero ``move x``) scores 1 only when repeated exactly; no gold move, 1 for none."""
    if gold_move is None:
        return 0.0 if pred_moves else 1.0
    if not pred_moves:
        return 0.0
    pm = pred_moves[-1]
    if (
        pm.axis == gold_move.axis == "x"
        and pm.distance != 0
        and (pm.distance > 0) == (gold_move.distance > 0)
    ):
        span = abs(gold_move.distance) if scale is None else scale
        return max(0.0, 1.0 - abs(pm.distance - gold_move.distance) / span)
    return 1.0 if pm.axis == gold_move.axis and pm.distance == gold_move.distance else 0.0


def alt_pair(
    rotation_part: float,
    pred_moves: list,
    gold_move,
    move: float = 0.0,
    other_rotation: tuple[str, float] | None = None,
) -> dict[str, float]:
    """T7's move part over a fixed range, and the score with it; with ``other_rotation``
    (``profile``, the rotation part under the reading that is not that profile's headline) also
    that rotation part and the score with it (``move``: the headline's move part)."""
    mov = move_part(pred_moves, gold_move, FIXED_MOVE_RANGE)
    out = {"move_part_fixed": mov, "score_move_fixed": 0.5 * rotation_part + 0.5 * mov}
    if other_rotation is not None:
        part_key, score_key = OTHER_PAIR[other_rotation[0]]
        out[part_key] = other_rotation[1]
        out[score_key] = 0.5 * other_rotation[1] + 0.5 * move
    return out


def _penalised(n_pred: int, n_gold: int, n_match: int, base: float) -> float:
    if n_pred > 2 * n_gold:
        return 0.0
    if n_match == n_gold and n_pred > n_gold:
        return 0.5
    return base


def alt_bonds(
    pred, gold: BondAnswer, n_match: int | None, main: dict, *, paper_exact: bool = False
) -> dict:
    """Precision- and F1-based set scores (T4, T9) and, with ``paper_exact`` (T9 on a complex
    with bonds), the exact match the paper's way. ``n_match``: |P ∩ G| when both sets are
    non-empty and the answer is a list, else None (then the other readings equal the main
    score)."""
    out: dict[str, float] = {}
    if n_match is None or not isinstance(pred, BondAnswer):
        out["score_precision"] = out["score_f1"] = main["score"]
    else:
        n_pred, n_gold = len(pred.bonds), len(gold.bonds)
        precision = n_match / n_pred if n_pred else 0.0
        f1 = 2 * n_match / (n_pred + n_gold) if n_pred + n_gold else 0.0
        out["score_precision"] = _penalised(n_pred, n_gold, n_match, precision)
        out["score_f1"] = _penalised(n_pred, n_gold, n_match, f1)
    if paper_exact:
        out[T9_PAPER_EXACT] = main["exact"]
    return out
