"""The nine task generators, keyed by config name (SPEC section 5)."""
from __future__ import annotations

from importlib import import_module
from typing import Callable

from .base import TASK_ORDER

TASKS: tuple[str, ...] = TASK_ORDER


def generator(task: str) -> Callable:
    """The ``generate(ctx) -> list[TaskInstance]`` function of a task config name."""
    if task not in TASK_ORDER:
        raise ValueError(f"unknown task {task!r}; expected one of {', '.join(TASK_ORDER)}")
    return import_module(f"{__name__}.{task}").generate
