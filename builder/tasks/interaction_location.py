"""T8 interaction location: which `move x A, move y B` brings the midpoint of a named H-bond to
the centre of the front view?

The correct option moves the centroid of the bond's two heavy atoms (front-view screen
coordinates cx, cy in Å) onto the line of sight: `move x -round(cx), move y -round(cy)`, rounding
half away from zero. Decoys change the sign and/or magnitude of one or both components; all four
options are distinct and each has a non-zero component. Up to 3 bonds per complex.
"""
from __future__ import annotations

import math

from ..operations.language import Move
from .base import (LETTERS, TaskContext, TaskInstance, caption, letter_for, metadata, options_block,
                   six_views)

TASK = "interaction_location"
MAX_TRIES = 200


def round_half_away(value: float) -> int:
    return int(math.copysign(math.floor(abs(value) + 0.5), value))


def centring_move(ctx: TaskContext, bond) -> tuple[int, int]:
    xy = (ctx.ann.screen[bond.protein_atom, :2] + ctx.ann.screen[bond.ligand_atom, :2]) / 2.0
    return -round_half_away(float(xy[0])), -round_half_away(float(xy[1]))


def _perturb(rng, value: int) -> int:
    mode = int(rng.integers(3))  # 0 keep, 1 flip sign, 2 change magnitude
    if mode == 1 and value != 0:
        return -value
    if mode == 2:
        step = int(rng.integers(1, 4)) * (1 if rng.random() < 0.5 else -1)
        new = value + step
        return new if (new != 0 and (value == 0 or (new > 0) == (value > 0))) else value - step
    return value


def option_text(xy: tuple[int, int]) -> str:
    return f"move x {xy[0]}, move y {xy[1]}"


def generate(ctx: TaskContext) -> list[TaskInstance]:
    ann = ctx.ann
    bonds = [b for b in ann.hbonds if centring_move(ctx, b) != (0, 0)]
    if not bonds:
        return []
    chooser = ctx.rng(TASK + ":bonds", 0)
    n = min(ctx.count("max_bonds"), len(bonds))
    picked = sorted(chooser.choice(len(bonds), size=n, replace=False).tolist())
    out = []
    for k, b_index in enumerate(picked):
        bond = bonds[b_index]
        rng = ctx.rng(TASK, k)
        truth = centring_move(ctx, bond)
        opts = [truth]
        for _ in range(MAX_TRIES):
            cand = (_perturb(rng, truth[0]), _perturb(rng, truth[1]))
            if cand not in opts and cand != (0, 0):
                opts.append(cand)
            if len(opts) == 4:
                break
        else:
            continue
        correct = letter_for(ctx, TASK, k)
        decoys = opts[1:]
        ordered = decoys[:correct] + [truth] + decoys[correct:]
        option_texts = tuple(option_text(o) for o in ordered)
        images = six_views(ann, ctx.six_views)
        question = ctx.prompt(TASK, [caption(v) for v in ctx.six_views], pdb_id=ann.pdb_id.upper(),
                              hbond=bond.pocket_text(), options_block=options_block(option_texts),
                              hb_chain=bond.chain, hb_residue=f"{bond.res_name} {bond.res_number}{bond.ins_code}",
                              hb_atom=bond.protein_atom_name, hb_ligand_atom=bond.ligand_atom_name)
        meta = metadata(ctx, TASK, k, hbond=bond.pocket_text(), operations=[str(Move("x", truth[0])), str(Move("y", truth[1]))],
                        option_operations=[[f"move x {o[0]}", f"move y {o[1]}"] for o in ordered],
                        correct=LETTERS[correct])
        out.append(TaskInstance(TASK, ann.pdb_id, k, question, option_texts, LETTERS[correct], images, meta,
                                ctx.profile))
    return out
