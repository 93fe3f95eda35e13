"""T1 translation: which `move x|y D` (D in -4..4 Å, not 0) moved the whole model?"""

from __future__ import annotations

from ..core.registry import TASK_BY_NAME
from ..operations.language import Move, parse_operations
from .base import (
    ImageSpec,
    TaskContext,
    TaskInstance,
    keep_labels,
    kept,
    metadata,
    request,
    visible_fraction,
)
from .data import task_profile
from .recover import apply_ops, parse_ops, recover_roll, recover_shift
from .room import CheckSubject, Room, magnitudes, split_space

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
            out.append(
                unit_instance(ctx, TASK, k, op, camera_distance=f"{ctx.ann.camera.distance:.1f}")
            )
            k += 1
    return out


def unit_images(ann, op) -> tuple[ImageSpec, ...]:
    """Images of T1-T3: front, left, top, front after the operation; the later three keep the
    front view's label offsets (``base.keep_labels``)."""
    images = [
        ("front", request(ann, "front")),
        ("left", request(ann, "left")),
        ("top", request(ann, "top")),
        ("front after operation", request(ann, "front", ops=[op])),
    ]
    return keep_labels(tuple(ImageSpec(name, ann.pdb_id, req) for name, req in images))


def unit_instance(ctx: TaskContext, task: str, k: int, op, **prompt_fields) -> TaskInstance:
    """Shared by T1-T3: images front, left, top, front after the operation."""
    ann = ctx.ann
    lines = [ctx.caption("front"), ctx.caption("left"), ctx.caption("top"), ctx.caption("after")]
    question = ctx.prompt(lines, pdb_id=ann.pdb_id.upper(), **prompt_fields)
    return ctx.instance(
        task,
        k,
        question=question,
        answer=str(op),
        images=unit_images(ann, op),
        metadata=metadata(ctx, task, k, operations=[str(op)], applies_to="pocket+ligand"),
    )


# --------------------------------------------------------------------------------------------
# Audit and validation hooks shared by T1-T3 (one command applied to the whole model)
# --------------------------------------------------------------------------------------------


def unit_replay(row, meta, ann, load) -> tuple[ImageSpec, ...]:
    """The image plan of a stored T1-T3 row: image 4 from the gold answer."""
    (op,) = parse_operations(row["answer"])
    return unit_images(ann, op)


def unit_space(row, ann, space) -> object:
    """Answer space of T1-T3: the front view after every command of ``space`` (keeping the
    front view's label offsets, as image 4 does)."""
    front = request(ann, "front")
    cands = [
        ImageSpec(str(op), ann.pdb_id, kept(front, request(ann, "front", ops=[op]))) for op in space
    ]
    return split_space(cands, row["answer"], 3)


def answer_space(row, meta, images, ann, load):
    """Every ``move x|y D`` over the distance range."""
    p = task_profile(row["task"], meta.build_profile).params
    return unit_space(row, ann, [Move(a, d) for a in p["axes"] for d in magnitudes(p["distance"])])


def _recovered(row, text: str | None) -> list[str]:
    if text != row["answer"]:
        return [
            f"{row['id']}: recovered {text!r} from coordinates, stored answer {row['answer']!r}"
        ]
    return []


def check_shift(row, meta, subject: CheckSubject) -> list[str]:
    """The stored move must be the centroid shift of the moved coordinates."""
    after = apply_ops(subject.screen, parse_ops(meta.operations), subject.pivot)
    return _recovered(row, recover_shift(subject.screen, after))


def check_roll(row, meta, subject: CheckSubject) -> list[str]:
    """The stored roll must be the rotation fitted to the turned coordinates."""
    after = apply_ops(subject.screen, parse_ops(meta.operations), subject.pivot)
    got = recover_roll(subject.screen, after)
    return _recovered(row, f"roll {got[0]} {got[1]}" if got else None)


ROOM = Room(
    TASK_BY_NAME[TASK],
    generate,
    unit_replay,
    check_shift,
    answer_space=answer_space,
    balanced_axes=True,
)
