"""T2 rotation: which `roll x|y|z A` (A in -90..90 step 15, not 0) turned the whole model?"""

from __future__ import annotations

from ..core.registry import TASK_BY_NAME
from ..operations.language import Roll
from .base import TaskContext, TaskInstance, nonzero_int
from .data import task_profile
from .room import Room, magnitudes
from .translation import check_roll, unit_instance, unit_replay, unit_space

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


def answer_space(row, meta, images, ann, load):
    """Every ``roll x|y|z A`` over the angle range."""
    p = task_profile(row["task"], meta.build_profile).params
    return unit_space(row, ann, [Roll(a, v) for a in p["axes"] for v in magnitudes(p["angle"])])


ROOM = Room(
    TASK_BY_NAME[TASK],
    generate,
    unit_replay,
    check_roll,
    answer_space=answer_space,
    balanced_axes=True,
)
