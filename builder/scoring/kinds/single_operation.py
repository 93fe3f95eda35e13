"""One ``move``/``roll`` command (T1-T3): weighted by the task's ``score_radius`` (exact only
when None), both readings of the magnitude error reported (:mod:`..readings`)."""

from __future__ import annotations

from collections.abc import Sequence

from ...core.registry import SINGLE_OPERATION, TaskSpec
from ...operations.language import Move, Operation, Roll, format_operations, parse_operations
from ..readings import alt_single, magnitude_score
from ..replies import parse_single_op
from .base import AnswerKind, KindExamples


def _weighted(spec: TaskSpec) -> bool:
    return spec.score_radius is not None


class SingleOperation(AnswerKind):
    name = SINGLE_OPERATION
    needs_commands = True
    audit = ("reproduction", "uniqueness")

    def gold(self, spec: TaskSpec, answer: str) -> Operation:
        ops = parse_operations(answer.strip())
        if len(ops) != 1:
            raise ValueError("not one command")
        return ops[0]

    def parse_section(
        self, text: str, immediate: bool, options: Sequence[str] | None, residues: frozenset
    ):
        return parse_single_op(text, immediate)

    def format(self, value) -> str:
        return format_operations(value)

    def score(self, spec: TaskSpec, pred, gold: Operation, profile: str, strict: bool) -> dict:
        if not isinstance(pred, (Move, Roll)) or pred.verb != gold.verb or pred.axis != gold.axis:
            return {"score": 0.0, "exact": 0.0, **self._readings(spec, pred, gold)}
        exact = float(pred.magnitude == gold.magnitude)
        if not _weighted(spec):
            return {"score": exact, "exact": exact}
        return {
            "score": magnitude_score(spec, pred.magnitude, gold.magnitude, profile),
            "exact": exact,
            **self._readings(spec, pred, gold),
        }

    def _readings(self, spec: TaskSpec, pred, gold: Operation) -> dict:
        return alt_single(spec, pred, gold) if _weighted(spec) else {}

    def zero(self, spec: TaskSpec, gold, profile: str) -> dict:
        out = super().zero(spec, gold, profile)
        if _weighted(spec):
            out.update(score_steps=0.0, score_radius=0.0)
        return out

    def pixel_solver_mode(self, spec: TaskSpec) -> str | None:
        """``shift`` for a single ``move`` along x or y (T1), ``depth`` for one along z (T3)."""
        if len(spec.commands) != 1 or spec.commands[0].verb != "move":
            return None
        return "depth" if spec.commands[0].axes == ("z",) else "shift"

    def examples(self, spec: TaskSpec) -> KindExamples:
        """The first command's range: a gold at its largest value, a reply with markdown and
        a unit, another axis (or the other verb when it has one axis) scoring 0; an exact-only
        task (no ``score_radius``) also scores a near value 0."""
        cr = spec.commands[0]
        gold = f"{cr.verb} {cr.axes[0]} {max(cr.values)}"
        unit = " Å" if cr.verb == "move" else "°"
        if len(cr.axes) > 1:
            other = f"{cr.verb} {cr.axes[1]} {max(cr.values)}"
        else:
            other = f"{'roll' if cr.verb == 'move' else 'move'} {cr.axes[0]} {max(cr.values)}"
        scores = [
            (gold, gold, 1.0),
            (gold, f"**Answer:** {gold}{unit}", 1.0),
            (gold, other, 0.0),
            (gold, "I cannot tell from these pictures.", 0.0),
        ]
        if not _weighted(spec):
            scores.append((gold, f"{cr.verb} {cr.axes[0]} {min(cr.values)}", 0.0))
        return KindExamples(
            golds=(gold, f"{cr.verb} {cr.axes[-1]} {min(cr.values)}"),
            reads=((f"**Answer:** {gold}{unit}", gold),),
            scores=tuple(scores),
        )


KIND = SingleOperation()
