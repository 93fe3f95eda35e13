"""The nine task generators, keyed by config name (SPEC section 5); ``replay`` rebuilds a stored
question's image plan and answer space for the audit."""
from __future__ import annotations

from importlib import import_module
from typing import Callable

from ..core.registry import TASK_NAMES

#: The nine task configs in the paper's order (T1..T9), from the task registry.
TASKS: tuple[str, ...] = TASK_NAMES


def generator(task: str) -> Callable:
    """The ``generate(ctx) -> list[TaskInstance]`` function of a task config name."""
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; expected one of {', '.join(TASKS)}")
    return import_module(f"{__name__}.{task}").generate
