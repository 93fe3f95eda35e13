"""Replay a built question: its image plan from the stored metadata and gold answer, and the
other answers of its task's answer space, each with the picture it would give.

Used by the dataset audit (``builder.checks.audit``). ``question_images`` rebuilds the render
request of every image of a stored row with the generators' own image functions (each task's
``Room.replay``); the images that depend on the answer are derived from the *gold answer* (T1-T3
image 4, T5/T6 reference and options, T7 displacement = inverse of the answer), never copied
from the metadata. ``answer_space`` lists, for the tasks with a finite answer space (T1, T2, T3,
T7) or options (T5, T6, T8), the request picturing every candidate (each task's
``Room.answer_space``); the gold candidate must be the one nearest to what the question shows.

Answer spaces (from the task's data file's ``params``): T1 ``move x|y D`` over the distance range; T2
``roll x|y|z A`` over the angle range; T3 ``move z D`` over the distance range; T7 every roll
of the roll range on every axis, combined with ``move x`` within ``docking.DOCKING_MOVE_WINDOW``
Å of the gold move; T5/T6/T8 the four options.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..core.errors import TaskError
from ..core.rows import parse_metadata
from . import TASKS, room_of
from .base import ImageSpec
from .room import AnswerSpace, Loader

__all__ = ["AnswerSpace", "Loader", "answer_space", "question_images"]


def _room(row: Mapping):
    if row["task"] not in TASKS:
        raise TaskError(f"{row['id']}: unknown task {row['task']!r}")
    return room_of(row["task"])


def question_images(row: Mapping, load: Loader) -> tuple[ImageSpec, ...]:
    """The image plan of a stored row, in prompt order."""
    room = _room(row)
    return room.replay(row, parse_metadata(row["metadata"], row["task"]), load(row["pdb_id"]), load)


def answer_space(row: Mapping, images: tuple[ImageSpec, ...], load: Loader) -> AnswerSpace | None:
    """The candidates of a stored row (None for T4/T9, whose answers are H-bond lists)."""
    room = _room(row)
    if room.answer_space is None:
        return None
    return room.answer_space(
        row, parse_metadata(row["metadata"], row["task"]), images, load(row["pdb_id"]), load
    )
