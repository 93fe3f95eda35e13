"""T7 docking: the ligand was moved out of its pocket along screen x and turned in place; give
the commands that put it back (the roll about the ligand's own centre first, then move x).

Displacement (``explicit``): the smallest whole shift along x (to a randomly chosen side) after
which the ligand's projection no longer overlaps the pocket's projection in the front view, plus
0-2 Å, then a roll about one axis (15..90 degrees, either sign). Answer: `roll AX -A, move x -D`.

Displacement (``paper``, the data file's ``shift``): a whole distance drawn uniformly in the
paper's range (9-17 Å, its examples), raised to the first whole shift at which the displaced
ligand's projection no longer overlaps its own bound pose's projection (the site it must go
back to), so the ligand never covers its site; then the same roll. Our rule (docs/fidelity.md).
"""

from __future__ import annotations

import numpy as np

from ..core.errors import TaskError
from ..core.registry import TASK_BY_NAME
from ..operations.language import AXES, Move, Operation, Roll, parse_operations
from ..operations.transforms import Pose
from ..scene.camera import Camera, close_up, fit_camera
from .base import (
    Annotation,
    ImageSpec,
    TaskContext,
    TaskInstance,
    keep_labels,
    metadata,
    request,
    signed_magnitude,
)
from .data import task_profile
from .recover import apply_ops, parse_ops
from .room import CheckSubject, Room, signed, split_space

TASK = "docking"
MAX_SHIFT = 200  # Å: far beyond any pocket; bounds the search
#: Audit candidates: ``move x`` values within this many Å of the gold move (a move x shifts the
#: whole ligand rigidly while a roll keeps its centre fixed, so farther moves only look more
#: different).
DOCKING_MOVE_WINDOW = 3


def displaced_ligand(ann: Annotation, ops) -> np.ndarray:
    """Screen coordinates of the ligand after ``ops`` (roll pivot = the ligand's own centre)."""
    lig = ann.screen[ann.complex.ligand_indices]
    centre = (lig.min(axis=0) + lig.max(axis=0)) / 2.0
    return Pose.identity(centre).then_all(ops).apply(lig)


def _overlap(
    ann: Annotation, ligand_xyz: np.ndarray, camera: Camera, against: np.ndarray | None = None
) -> bool:
    """Whether the x-extents of the ligand at ``ligand_xyz`` and of ``against`` (default: the
    pocket's atoms) overlap in the front view of ``camera``."""
    if against is None:
        against = ann.screen[ann.complex.pocket_indices]
    pocket_u = camera.project(against)[:, 0]
    lig_u = camera.project(ligand_xyz)[:, 0]
    pocket_u, lig_u = pocket_u[np.isfinite(pocket_u)], lig_u[np.isfinite(lig_u)]
    if not len(pocket_u) or not len(lig_u):
        return False
    return not (lig_u.min() > pocket_u.max() or lig_u.max() < pocket_u.min())


def scene_camera(ann: Annotation, ligand_xyz: np.ndarray) -> Camera:
    """Camera fitted to the pocket plus the displaced ligand."""
    return fit_camera(
        np.vstack([ann.screen[ann.complex.pocket_indices], ligand_xyz]), size=ann.camera.size
    )


def displacement(ann: Annotation, side: int, extra: int, roll: Roll) -> tuple[tuple, Camera]:
    """The displacement operations (move x then roll) and the camera showing pocket and ligand."""
    for shift in range(1, MAX_SHIFT):
        ops = (Move("x", side * shift), roll)
        moved = displaced_ligand(ann, ops)
        if not _overlap(ann, moved, scene_camera(ann, moved)):
            break
    else:
        raise TaskError("the ligand cannot be moved clear of the pocket")
    total = shift + extra
    for _ in range(MAX_SHIFT):
        ops = (Move("x", side * total), roll)
        moved = displaced_ligand(ann, ops)
        camera = scene_camera(ann, moved)
        if not _overlap(ann, moved, camera):
            return ops, camera
        total += 1
    raise TaskError("the ligand cannot be moved clear of the pocket")


def site_displacement(ann: Annotation, side: int, target: int, roll: Roll) -> tuple[tuple, Camera]:
    """The ``paper`` displacement: ``move x`` by ``side * target`` Å, or by the first larger
    whole shift at which the displaced ligand no longer overlaps its bound pose, then ``roll``;
    and the camera showing pocket and ligand."""
    bound = ann.screen[ann.complex.ligand_indices]
    for shift in range(max(1, int(target)), MAX_SHIFT):
        ops = (Move("x", side * shift), roll)
        moved = displaced_ligand(ann, ops)
        camera = scene_camera(ann, moved)
        if not _overlap(ann, moved, camera, bound):
            return ops, camera
    raise TaskError("the ligand cannot be moved clear of its binding site")


def ligand_close_up(ann: Annotation, ops) -> tuple[tuple[float, float, float], Camera]:
    """``(origin, camera)`` of the ligand views: the frame centred on the displaced ligand and a
    camera fitted to it (``camera.close_up``), so that the ligand and its atom names fill the
    picture. The turn shows as before (same views, same orientation); how far the ligand was
    moved shows in the last picture, where pocket and ligand share the scene camera."""
    centre, camera = close_up(displaced_ligand(ann, ops), ann.camera.size)
    origin = ann.complex.scene_centre + centre
    return tuple(float(v) for v in origin), camera


def question_images(ann: Annotation, ops, camera: Camera) -> tuple[ImageSpec, ...]:
    """Pocket views, close-ups of the ligand displaced by ``ops`` (``ligand_close_up``), and
    both together (front, the scene camera)."""
    cx = ann.complex
    pocket, ligand = tuple(cx.pocket_indices.tolist()), tuple(cx.ligand_indices.tolist())
    groups = ((ligand, tuple(ops)),)
    images = [
        ImageSpec(f"pocket {v}", ann.pdb_id, request(ann, v, atoms=pocket, camera=camera))
        for v in ("front", "left", "top")
    ]
    origin, near = ligand_close_up(ann, ops)
    images += [
        ImageSpec(
            f"ligand {v}",
            ann.pdb_id,
            request(ann, v, atoms=ligand, groups=groups, camera=near, origin=origin),
        )
        for v in ("front", "left", "top")
    ]
    images.append(
        ImageSpec(
            "pocket and ligand front",
            ann.pdb_id,
            request(ann, "front", atoms=pocket + ligand, groups=groups, camera=camera),
        )
    )
    # the pocket pictures keep the pocket front view's labels; the ligand close-ups (another
    # camera) name the ligand's atoms on their own
    return keep_labels(images)


def generate(ctx: TaskContext) -> list[TaskInstance]:
    p, ann = ctx.params, ctx.ann
    out = []
    for k in range(ctx.count()):
        rng = ctx.rng(TASK, k)
        side = 1 if rng.random() < 0.5 else -1
        spread = p["shift"] if "shift" in p else p["extra_distance"]
        drawn = int(rng.integers(spread["min"], spread["max"] + 1))
        roll = Roll(AXES[int(rng.integers(3))], signed_magnitude(rng, p["roll_angle"]))
        if "shift" in p:
            ops, camera = site_displacement(ann, side, drawn, roll)
        else:
            ops, camera = displacement(ann, side, drawn, roll)
        answer = (roll.inverse(), ops[0].inverse())
        images = question_images(ann, ops, camera)
        lines = [ctx.caption("pocket_view", view=v) for v in ("front", "left", "top")]
        lines += [ctx.caption("ligand_view", view=v) for v in ("front", "left", "top")]
        lines.append(ctx.caption("both_front"))
        question = ctx.prompt(lines, pdb_id=ann.pdb_id.upper())
        meta = metadata(
            ctx,
            TASK,
            k,
            displacement=[str(o) for o in ops],
            operations=[str(o) for o in answer],
            applies_to="ligand",
            scene_camera_distance=round(camera.distance, 4),
        )
        out.append(
            ctx.instance(
                TASK,
                k,
                question=question,
                answer=", ".join(str(o) for o in answer),
                images=images,
                metadata=meta,
            )
        )
    return out


# --------------------------------------------------------------------------------------------
# Audit and validation hooks
# --------------------------------------------------------------------------------------------


def _scene_of(ann: Annotation, answer: tuple[Operation, ...]):
    """(displacement ops, camera) of a question from its gold answer ``roll, move``."""
    roll, move = answer
    ops = (move.inverse(), roll.inverse())
    return ops, scene_camera(ann, displaced_ligand(ann, ops))


def replay(row, meta, ann, load) -> tuple[ImageSpec, ...]:
    """The displacement is the inverse of the gold answer."""
    ops, camera = _scene_of(ann, parse_operations(row["answer"]))
    return question_images(ann, ops, camera)


def answer_space(row, meta, images, ann, load):
    """Every roll of the roll range on every axis, combined with ``move x`` within
    :data:`DOCKING_MOVE_WINDOW` Å of the gold move."""
    p = task_profile(row["task"], meta.build_profile).params
    gold = parse_operations(row["answer"])
    roll, move = gold
    ops, camera = _scene_of(ann, gold)
    ligand = tuple(ann.complex.ligand_indices.tolist())
    moves = [
        m
        for m in range(move.distance - DOCKING_MOVE_WINDOW, move.distance + DOCKING_MOVE_WINDOW + 1)
        if m != 0
    ]
    cands = []
    for axis in AXES:
        for angle in signed(p["roll_angle"]):
            for m in moves:
                answer = (Roll(axis, angle), Move("x", m))
                req = request(
                    ann, "front", atoms=ligand, groups=((ligand, ops + answer),), camera=camera
                )
                cands.append(ImageSpec(f"{answer[0]}, {answer[1]}", ann.pdb_id, req))
    return split_space(cands, row["answer"], None)


def check(row, meta, subject: CheckSubject) -> list[str]:
    """Undoing the recorded displacement with the stored answer restores the ligand."""
    cx, screen = subject.complex, subject.screen
    lig = screen[cx.is_ligand]
    lpivot = (lig.min(0) + lig.max(0)) / 2.0
    displaced = apply_ops(lig, parse_ops(meta.displacement), lpivot)
    moved_pivot = apply_ops(
        lpivot[None], [op for op in parse_ops(meta.displacement) if op[0] == "move"], lpivot
    )[0]
    restored = apply_ops(displaced, parse_ops(row["answer"]), moved_pivot)
    if np.abs(restored - lig).max() > 1e-6:
        return [
            f"{row['id']}: the answer does not restore the ligand (max error {np.abs(restored - lig).max():.3g} Å)"
        ]
    return []


ROOM = Room(TASK_BY_NAME[TASK], generate, replay, check, answer_space=answer_space)
