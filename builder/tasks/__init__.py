"""The nine task rooms, keyed by config name (docs/spec.md section 5).

Each task lives in its own module ``builder/tasks/<name>.py``, which ends with ``ROOM`` (a
:class:`~.room.Room`: the registry entry plus the generator, the audit's replay and answer space
and the validator's check). :data:`ROOMS` lists them in the registry's order; shared machinery
reaches a task only through :func:`room_of` (``docs/extending.md`` has the recipe for a new task).
"""

from __future__ import annotations

from collections.abc import Callable

from ..core.registry import TASK_NAMES
from . import (
    docking,
    interaction_location,
    pocket_ligand,
    residue_ligand,
    rotation,
    rotation_rotation,
    translation,
    translation_rotation,
    zooming,
)
from .room import Room

#: The nine task configs in the paper's order (T1..T9), from the task registry.
TASKS: tuple[str, ...] = TASK_NAMES

_MODULES = (
    translation,
    rotation,
    zooming,
    residue_ligand,
    translation_rotation,
    rotation_rotation,
    docking,
    interaction_location,
    pocket_ligand,
)
_BY_NAME: dict[str, Room] = {module.ROOM.name: module.ROOM for module in _MODULES}
#: The rooms in the registry's order (one per task; a registry entry without one fails here).
ROOMS: tuple[Room, ...] = tuple(_BY_NAME[name] for name in TASK_NAMES)


def room_of(task: str) -> Room:
    """The :class:`~.room.Room` of a task config name."""
    if task not in _BY_NAME:
        raise ValueError(f"unknown task {task!r}; expected one of {', '.join(TASKS)}")
    return _BY_NAME[task]


def generator(task: str) -> Callable:
    """The ``generate(ctx) -> list[TaskInstance]`` function of a task config name."""
    return room_of(task).generate
