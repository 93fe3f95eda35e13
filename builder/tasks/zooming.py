"""T3 zooming: which `move z D` (D in 40..60 Å) brought the model toward the camera?

Only depths that keep the ligand in front of the camera and mostly in view are sampled; a
complex with no feasible depth is skipped for this task with a recorded reason.
"""

from __future__ import annotations

from ..core.errors import TaskError
from ..core.registry import TASK_BY_NAME
from ..operations.language import Move
from .base import TaskContext, TaskInstance, visible_fraction
from .data import task_profile
from .room import Room, magnitudes
from .translation import check_shift, unit_instance, unit_replay, unit_space

TASK = "zooming"


def feasible_depths(ctx: TaskContext) -> list[int]:
    p = ctx.params
    lig = ctx.ann.complex.ligand_indices
    need = float(p.get("min_ligand_visible_fraction", 0.5))
    return [
        d
        for d in range(int(p["distance"]["min"]), int(p["distance"]["max"]) + 1)
        if visible_fraction(ctx.ann, lig, [Move("z", d)]) >= need
    ]


def generate(ctx: TaskContext) -> list[TaskInstance]:
    depths = feasible_depths(ctx)
    if not depths:
        raise TaskError(
            f"camera distance {ctx.ann.camera.distance:.1f} Å allows no move z in "
            f"{ctx.params['distance']['min']}..{ctx.params['distance']['max']} with the ligand in view"
        )
    out = []
    for k in range(ctx.count()):
        rng = ctx.rng(TASK, k)
        d = int(depths[int(rng.integers(len(depths)))])
        out.append(
            unit_instance(
                ctx, TASK, k, Move("z", d), camera_distance=f"{ctx.ann.camera.distance:.1f}"
            )
        )
    return out


def answer_space(row, meta, images, ann, load):
    """Every ``move z D`` over the distance range."""
    p = task_profile(row["task"], meta.build_profile).params
    return unit_space(row, ann, [Move("z", d) for d in magnitudes(p["distance"])])


ROOM = Room(TASK_BY_NAME[TASK], generate, unit_replay, check_shift, answer_space=answer_space)
