"""T1 translation: which `move x|y D` (D in -4..4 Å, not 0) moved the whole model?"""
from __future__ import annotations

from .base import ImageSpec, TaskContext, TaskInstance, caption, metadata, request, visible_fraction
from ..operations.language import Move

TASK = "translation"
MAX_TRIES = 50


def generate(ctx: TaskContext) -> list[TaskInstance]:
    p = ctx.params
    out: list[TaskInstance] = []
    k = 0
    lig = ctx.ann.complex.ligand_indices
    for axis in p["axes"]:
        for _ in range(ctx.count("counts_per_axis")):
            rng = ctx.rng(TASK, k)
            for _try in range(MAX_TRIES):
                d = int(rng.integers(p["distance"]["min"], p["distance"]["max"] + 1))
                if d != 0 and visible_fraction(ctx.ann, lig, [Move(axis, d)]) == 1.0:
                    break
            else:
                continue  # the ligand would leave the picture for every draw: no question
            op = Move(axis, d)
            out.append(unit_instance(ctx, TASK, k, op, camera_distance=f"{ctx.ann.camera.distance:.1f}"))
            k += 1
    return out


def unit_images(ann, op) -> tuple[ImageSpec, ...]:
    """Images of T1-T3: front, left, top, front after the operation."""
    images = [
        ("front", request(ann, "front")),
        ("left", request(ann, "left")),
        ("top", request(ann, "top")),
        ("front after operation", request(ann, "front", ops=[op])),
    ]
    return tuple(ImageSpec(name, ann.pdb_id, req) for name, req in images)


def unit_instance(ctx: TaskContext, task: str, k: int, op, **prompt_fields) -> TaskInstance:
    """Shared by T1-T3: images front, left, top, front after the operation."""
    ann = ctx.ann
    lines = [caption("front"), caption("left"), caption("top"), caption("after")]
    question = ctx.prompt(task, lines, pdb_id=ann.pdb_id.upper(), **prompt_fields)
    return TaskInstance(
        task=task, pdb_id=ann.pdb_id, index=k, question=question, options=(), answer=str(op),
        images=unit_images(ann, op),
        metadata_json=metadata(ctx, task, k, operations=[str(op)], applies_to="pocket+ligand"),
        profile=ctx.profile,
    )
