"""T2 rotation: which `roll x|y|z A` (A in -90..90 step 15, not 0) turned the whole model?"""
from __future__ import annotations

from .base import TaskContext, TaskInstance, nonzero_int
from .translation import unit_instance
from ..operations.language import Roll

TASK = "rotation"


def generate(ctx: TaskContext) -> list[TaskInstance]:
    p = ctx.params
    out: list[TaskInstance] = []
    k = 0
    for axis in p["axes"]:
        for _ in range(ctx.count("counts_per_axis")):
            rng = ctx.rng(TASK, k)
            angle = nonzero_int(rng, p["angle"]["min"], p["angle"]["max"], p["angle"]["step"])
            out.append(unit_instance(ctx, TASK, k, Roll(axis, angle)))
            k += 1
    return out
