"""The answer kind's interface: everything shared code asks about one kind of answer.

A task's registry entry names its kind (``TaskSpec.answer_kind``); :func:`.kind_of` gives the
kind object, and the scorer, the baselines, the validator, the audit and the card ask it instead
of comparing kind names. One module per kind (this folder) subclasses :class:`AnswerKind`.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ...core.registry import (
    CHOICE_FORM,
    FILL_IN,
    MULTIPLE_CHOICE,
    TEXT_FORM,
    CommandRange,
    TaskSpec,
)
from ...core.rows import METADATA_TYPES, QuestionMeta
from ...operations.language import Move, Roll, format_operations
from ..bonds import KNOWN_RESIDUES


def draw_command(draw: CommandRange, rng: np.random.Generator) -> Move | Roll:
    """One random command of ``draw``'s range (the random baseline); the axis first, or the
    value first when ``draw.magnitude_first`` (the order fixes the random stream)."""

    def axis() -> str:
        return str(rng.choice(list(draw.axes))) if len(draw.axes) > 1 else draw.axes[0]

    if draw.magnitude_first:
        value = int(rng.choice(list(draw.values)))
        axis_name = axis()
    else:
        axis_name = axis()
        value = int(rng.choice(list(draw.values)))
    return Move(axis_name, value) if draw.verb == "move" else Roll(axis_name, value)


@dataclass(frozen=True)
class KindExamples:
    """A kind's examples for one task of the kind: the data the shared tests iterate, so that
    no test spells a kind or a task (a new kind brings its own). ``golds``: gold answers as the
    build writes them; ``reads``: (a reply as models write it, the answer the kind reads from
    it, in the benchmark's format); ``scores``: (gold, reply, the ``score`` the reply gets)."""

    golds: tuple[str, ...]
    reads: tuple[tuple[str, str], ...]
    scores: tuple[tuple[str, str, float], ...]


def _command(cr: CommandRange, rng: random.Random) -> Move | Roll:
    cls = Move if cr.verb == "move" else Roll
    return cls(rng.choice(cr.axes), rng.choice(cr.values))


def command_gold(spec: TaskSpec, rng: random.Random) -> str:
    """A gold answer of a command task: one command per entry of ``spec.commands``, drawn from
    its axes and values."""
    return format_operations(tuple(_command(cr, rng) for cr in spec.commands))


def command_reworded(gold: str, rng: random.Random) -> str:
    """A command answer as a verbose model writes it: the commands in another order (a roll and
    a move commute), capitals, signs, units (Å for a move, ° for a roll), markdown and prose."""
    ops = [op.strip().split() for op in gold.split(",")]
    rng.shuffle(ops)
    words = [
        f"{verb.upper()} {axis.upper()} {int(value):+d}{' Å' if verb == 'move' else '°'}"
        for verb, axis, value in ops
    ]
    return "Looking at both images, the change is:\n**" + " and then ".join(words) + "**"


class AnswerKind:
    """One kind of answer. Class attributes say what the kind is; methods do its work.

    ``name``: the registry's kind name. ``tables``: the reply's markdown tables are read as text
    rows (bond lists). ``carries_options``: rows carry an option list in ``options`` and the gold
    is a letter among them (the options-only blind baselines apply). ``audit``: the audit checks
    every question of the kind calls for by default (``checks.declared.AUDIT_CHECKS`` names; a
    room may add more, e.g. legibility for T8's question about an H-bond, or decline one with its
    reason), each run only where the task's room gives the hook it needs; a check a task does
    not take is reported per task as "not applicable (why)" by the build
    (``builder.checks.declared``, the manifest's ``checks`` block).
    ``blind``: the blind baselines that apply (``options_only``, ``text_only``)."""

    name: str = ""
    #: the answer is commands: the registry entry lists them (``commands``), the random baseline
    #: draws them; otherwise the entry names a ``constant_answer``
    needs_commands: bool = False
    tables: bool = False
    carries_options: bool = False
    audit: tuple[str, ...] = ("reproduction",)
    blind: tuple[str, ...] = ("text_only",)

    # -- the row ---------------------------------------------------------------------------

    @property
    def answer_format(self) -> str:
        """The rows' ``answer_format`` column: ``multiple_choice`` exactly when the kind carries
        options."""
        return MULTIPLE_CHOICE if self.carries_options else FILL_IN

    @property
    def form(self) -> str:
        """The human app's answer form: option buttons exactly when the kind carries options,
        else a text box (with the task's ``form_hint``)."""
        return CHOICE_FORM if self.carries_options else TEXT_FORM

    @property
    def metadata(self) -> type[QuestionMeta]:
        """The metadata type of the kind's rows (``builder.core.rows``)."""
        return METADATA_TYPES.get(self.name, QuestionMeta)

    def row_problems(self, row: Mapping, meta: QuestionMeta) -> list[str]:
        """Problems of a stored row's options against its answer and metadata (the validator);
        the base kind carries no options, so a row with options is a problem."""
        if list(row.get("options") or ()):
            return [
                f"{row.get('id')}: a {self.name} answer carries no options, got {len(row['options'])}"
            ]
        return []

    # -- the gold and the reply ----------------------------------------------------------------

    def gold(self, spec: TaskSpec, answer: str):
        """The gold answer's value, read strictly; ValueError when it is not in the kind's form."""
        raise NotImplementedError

    def residues(self, gold) -> frozenset:
        """The residue names a reply's bond items may use (bond kinds add the gold's)."""
        return KNOWN_RESIDUES

    def parse_section(
        self, text: str, immediate: bool, options: Sequence[str] | None, residues: frozenset
    ):
        """The answer in one section of a cleaned reply: a value, None (no answer here) or
        ``replies.INVALID`` (an invalid answer; scores 0)."""
        raise NotImplementedError

    def format(self, value) -> str:
        """A parsed value in the benchmark's answer format."""
        return str(value)

    # -- the metric and its other readings ------------------------------------------------------

    def score(self, spec: TaskSpec, pred, gold, profile: str, strict: bool) -> dict[str, float]:
        """The metrics of a parsed reply (``score``, ``exact`` and the other readings)."""
        raise NotImplementedError

    def zero(self, spec: TaskSpec, gold, profile: str) -> dict[str, float]:
        """The metrics of an unparsed reply: the same keys as :meth:`score`, all 0."""
        return {"score": 0.0, "exact": 0.0, "parsed": 0.0}

    # -- baselines ------------------------------------------------------------------------------

    def random_answer(self, spec: TaskSpec, record: Mapping, rng: np.random.Generator) -> str:
        """The random baseline's answer: one random command per entry of the task's
        ``commands``, else its constant answer."""
        if spec.commands:
            return format_operations(tuple(draw_command(d, rng) for d in spec.commands))
        return spec.constant_answer

    def constant_answer(self, spec: TaskSpec) -> str:
        """The constant baseline's answer (the registry's ``constant_answer``)."""
        return spec.constant_answer

    # -- the pixel solver ----------------------------------------------------------------------

    def pixel_solver_mode(self, spec: TaskSpec) -> str | None:
        """How the pixel solver answers the task's questions (None: it does not)."""
        return None

    # -- examples: the data the shared tests iterate ---------------------------------------------

    def draw_gold(self, spec: TaskSpec, rng: random.Random) -> str:
        """A gold answer of ``spec`` in the kind's form, drawn by ``rng`` (the property tests
        draw many): the base draws one command per entry of ``spec.commands``."""
        return command_gold(spec, rng)

    def reword(self, spec: TaskSpec, gold: str, rng: random.Random) -> str:
        """``gold`` written as a verbose model might (order, markdown, prose, units): a reply
        that must score as the gold does."""
        return command_reworded(gold, rng)

    def examples(self, spec: TaskSpec) -> KindExamples:
        """Fixed examples of the kind for the task ``spec``."""
        raise NotImplementedError
