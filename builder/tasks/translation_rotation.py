"""T5 translation-rotation: the reference complex was moved (f1) then turned (f2); which option
shows a second complex of the same split after the very same two operations?"""

from __future__ import annotations

from ..core.constants import REFERENCE_IMAGE_SIZE
from ..core.errors import MisiError, TaskError
from ..core.registry import TASK_BY_NAME
from ..operations.language import AXES, Move, Roll
from .base import (
    LETTERS,
    ImageSpec,
    TaskContext,
    TaskInstance,
    keep_labels,
    letter_for,
    metadata,
    options_block,
    projected_difference,
    request,
    signed_magnitude,
)
from .choice import build_options, check_option_pair, make_decoy, option_space, replay_options
from .decoys import BALANCED_SCHEME, balanced_pairs, exchangeable
from .room import Room

TASK = "translation_rotation"


def _load_target(ctx: TaskContext, start: int):
    """The partner at ``start`` in the split's list, or the next one that loads."""
    n = len(ctx.partners)
    for step in range(n):
        try:
            return ctx.load_partner(ctx.partners[(start + step) % n])
        except MisiError:
            continue
    raise TaskError("no other complex of this split could be loaded as target")


def question_images(ann, target, truth, options) -> tuple[ImageSpec, ...]:
    """Reference views, reference after ``truth``, target views, target after each option."""
    images = [
        ImageSpec("reference front", ann.pdb_id, request(ann, "front")),
        ImageSpec("reference left", ann.pdb_id, request(ann, "left")),
        ImageSpec("reference top", ann.pdb_id, request(ann, "top")),
        ImageSpec("reference front after operations", ann.pdb_id, request(ann, "front", ops=truth)),
    ]
    images += [
        ImageSpec(f"target {v}", target.pdb_id, request(target, v))
        for v in ("front", "left", "top")
    ]
    images += [
        ImageSpec(f"option {letter}", target.pdb_id, request(target, "front", ops=ops))
        for letter, ops in zip(LETTERS, options)
    ]
    # the reference complex's pictures keep its front view's labels, the target's its own
    return keep_labels(keep_labels(images), 4)


def _draw_options(ctx: TaskContext, rng, truth, correct: int, target):
    """(truth, the four options in letter order, each option's scheme) of one question, or None
    when no set of distinct options was found. With ``balanced`` decoys the drawn (f1, f2) is the
    hidden centre and the truth becomes option ``correct``; with the paper's decoys each wrong
    option is one scheme's perturbation of the truth. Options whose pictures differ by less than
    ``min_option_image_difference_px`` (at the reference image size) are redrawn."""
    p, choice = ctx.params, ctx.choice
    limit = float(choice["min_option_image_difference_px"]) * target.camera.size
    limit /= REFERENCE_IMAGE_SIZE
    f1, f2 = truth
    if exchangeable(ctx):

        def similar(a, b, opts, t=target, lim=limit):
            return projected_difference(t, a, b) < lim

        specs = (p["move_distance"], p["roll_angle"])
        options = balanced_pairs(
            truth, rng, specs, (("x", "y"), AXES), False, ctx.decoy_settings, similar
        )
        if options is None:
            return None
        schemes = [BALANCED_SCHEME if i != correct else "correct" for i in range(4)]
        return options[correct], options, schemes

    def decoy(scheme, r, f1=f1, f2=f2):
        return make_decoy(scheme, f1, f2, r, p["move_distance"], p["roll_angle"], ("x", "y"))

    def too_similar(a, b, target=target, limit=limit):
        return projected_difference(target, a, b) < limit

    built = build_options(truth, rng, correct, decoy, too_similar, int(choice["max_resample"]))
    if built is None:
        return None
    options, schemes = built
    return truth, options, schemes


def _question_text(ctx: TaskContext, ann, target) -> tuple[str, tuple[str, ...]]:
    """The prompt of one question (image captions in prompt order: the reference's three views
    and its front view after the operations, the target's three views, the four options) and the
    option texts (``image 8`` .. ``image 11``)."""
    lines = [ctx.caption(view) for view in ("front", "left", "top", "after")]
    lines += [
        ctx.caption("target_view", target=target.pdb_id.upper(), view=v)
        for v in ("front", "left", "top")
    ]
    lines += [ctx.caption("option", letter=letter) for letter in LETTERS]
    option_texts = tuple(f"image {8 + i}" for i in range(4))
    question = ctx.prompt(
        lines,
        pdb_id=ann.pdb_id.upper(),
        target=target.pdb_id.upper(),
        options_block=options_block(option_texts),
        names_note=ctx.names_note(ann, target),  # the target's pictures carry its labels too
    )
    return question, option_texts


def generate(ctx: TaskContext) -> list[TaskInstance]:
    """``count()`` questions: a translation f1 then a rotation f2 of the reference complex; which
    option shows the target complex after the same two operations."""
    if not ctx.partners or ctx.load_partner is None:
        raise TaskError("needs a second complex in the same split as target")
    p = ctx.params
    ann = ctx.ann
    out = []
    for k in range(ctx.count()):
        rng = ctx.rng(TASK, k)
        target = _load_target(ctx, int(rng.integers(len(ctx.partners))))
        f1 = Move(("x", "y")[int(rng.integers(2))], signed_magnitude(rng, p["move_distance"]))
        f2 = Roll(AXES[int(rng.integers(3))], signed_magnitude(rng, p["roll_angle"]))
        correct = letter_for(ctx, TASK, k)
        drawn = _draw_options(ctx, rng, (f1, f2), correct, target)
        if drawn is None:
            continue
        truth, options, schemes = drawn
        f1, f2 = truth
        images = question_images(ann, target, truth, options)
        question, option_texts = _question_text(ctx, ann, target)
        meta = metadata(
            ctx,
            TASK,
            k,
            reference=ann.pdb_id,
            target=target.pdb_id,
            operations=[str(f1), str(f2)],
            option_operations=[[str(o) for o in ops] for ops in options],
            option_schemes=schemes,
            correct=LETTERS[correct],
            target_camera_distance=round(target.camera.distance, 4),
        )
        answer = LETTERS[correct]
        out.append(
            ctx.instance(
                TASK,
                k,
                question=question,
                answer=answer,
                images=images,
                metadata=meta,
                options=option_texts,
            )
        )
    return out


def replay(row, meta, ann, load):
    return replay_options(
        row,
        meta,
        ann,
        load,
        TASK_BY_NAME[TASK],
        lambda a, ld, m, truth, options: question_images(a, ld(m.target), truth, options),
    )


ROOM = Room(TASK_BY_NAME[TASK], generate, replay, check_option_pair, answer_space=option_space)
