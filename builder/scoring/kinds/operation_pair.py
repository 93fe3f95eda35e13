"""A ``roll, move x`` pair (T7): half rotation part (scored as a single roll in the row's
profile), half move part; the other readings of both parts are reported (:mod:`..readings`)."""

from __future__ import annotations

from collections.abc import Sequence

from ...core.registry import OPERATION_PAIR, TaskSpec
from ...operations.language import Move, Operation, Roll, format_operations, parse_operations
from ..readings import OTHER_PAIR, alt_pair, magnitude_score, move_part, other_magnitude_score
from ..replies import parse_pair
from .base import AnswerKind, KindExamples


class OperationPair(AnswerKind):
    name = OPERATION_PAIR
    needs_commands = True
    audit = ("reproduction", "uniqueness")

    def gold(self, spec: TaskSpec, answer: str) -> tuple[Operation, ...]:
        return parse_operations(answer.strip())

    def parse_section(
        self, text: str, immediate: bool, options: Sequence[str] | None, residues: frozenset
    ):
        return parse_pair(text, immediate)

    def format(self, value) -> str:
        return format_operations(value)

    def score(self, spec: TaskSpec, pred, gold: tuple, profile: str, strict: bool) -> dict:
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

    def zero(self, spec: TaskSpec, gold, profile: str) -> dict:
        out = super().zero(spec, gold, profile)
        out.update(rotation_part=0.0, move_part=0.0, move_part_fixed=0.0, score_move_fixed=0.0)
        out.update(dict.fromkeys(OTHER_PAIR[profile], 0.0))
        return out

    def examples(self, spec: TaskSpec) -> KindExamples:
        """The registry's commands at their largest values (a roll, then a move along x): the
        pair in prose with units; the roll about another axis keeps only the move half (0.5)."""
        ops = [(cr.verb, cr.axes[0], max(cr.values)) for cr in spec.commands]
        gold = ", ".join(f"{v} {a} {m}" for v, a, m in ops)
        prose = "First " + ", then ".join(
            f"{v} {a} by {m}{'°' if v == 'roll' else ' Å'}" for v, a, m in ops
        )
        scores = [(gold, gold, 1.0), (gold, "I cannot tell from these pictures.", 0.0)]
        roll = spec.commands[0]
        if len(roll.axes) > 1:
            turned = [(roll.verb, roll.axes[1], ops[0][2]), *ops[1:]]
            scores.append((gold, ", ".join(f"{v} {a} {m}" for v, a, m in turned), 0.5))
        low = ", ".join(f"{cr.verb} {cr.axes[-1]} {min(cr.values)}" for cr in spec.commands)
        return KindExamples(golds=(gold, low), reads=((prose + ".", gold),), scores=tuple(scores))


KIND = OperationPair()
