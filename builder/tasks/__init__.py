"""The task rooms, keyed by config name (docs/spec.md section 5).

Each task of the registry (``builder/core/registry.py``) lives in its own module
``builder/tasks/<name>.py``, which ends with ``ROOM`` (a :class:`~.room.Room`: the registry entry
plus the generator, the audit's replay and answer space and the validator's check), beside its
data file ``builder/tasks/<name>.yaml`` (prompts, parameters, versions: ``data.py``). The modules
are found by the registry's names, so a new task is listed by its entry alone. :data:`ROOMS`
lists them in the registry's order; shared machinery reaches a task only through :func:`room_of`
(``docs/extending.md`` has the recipe for a new task).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from ..core.registry import TASK_NAMES
from .room import Room

#: The task configs in the registry's order (the paper's T1..T9 first).
TASKS: tuple[str, ...] = TASK_NAMES


def _room(name: str) -> Room:
    """The ``ROOM`` of ``builder/tasks/<name>.py`` (a registry entry without one fails here)."""
    room = importlib.import_module(f".{name}", __package__).ROOM
    if room.name != name:
        raise ImportError(f"builder/tasks/{name}.py: its ROOM is for {room.name!r}")
    return room


_BY_NAME: dict[str, Room] = {name: _room(name) for name in TASK_NAMES}
#: The rooms in the registry's order (one per task).
ROOMS: tuple[Room, ...] = tuple(_BY_NAME.values())


def room_of(task: str) -> Room:
    """The :class:`~.room.Room` of a task config name."""
    if task not in _BY_NAME:
        raise ValueError(f"unknown task {task!r}; expected one of {', '.join(TASKS)}")
    return _BY_NAME[task]


def generator(task: str) -> Callable:
    """The ``generate(ctx) -> list[TaskInstance]`` function of a task config name."""
    return room_of(task).generate
