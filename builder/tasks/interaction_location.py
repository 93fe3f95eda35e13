"""T8 interaction location: which `move x A, move y B` brings the midpoint of a named H-bond to
the centre of the front view?

The correct option moves the centroid of the bond's two heavy atoms (front-view screen
coordinates cx, cy in Å) onto the line of sight: `move x -round(cx), move y -round(cy)`, rounding
half away from zero. Decoys change the sign and/or magnitude of one or both components; all four
options are distinct and each has a non-zero component. Up to 3 bonds per complex. With
``--decoys balanced`` (and in the ``paper`` profile) the four options are exchangeable draws
around a hidden move (``decoys.flipped_moves``).
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Mapping

import numpy as np

from ..core.registry import TASK_BY_NAME
from ..core.rows import ChoiceMeta
from ..operations.language import Move
from .base import (
    LETTERS,
    TaskContext,
    TaskInstance,
    letter_for,
    metadata,
    options_block,
    request,
    six_views,
    view_order,
)
from .decoys import flipped_moves
from .room import CheckSubject, ImageSpec, Room, ops_of, split_space

TASK = "interaction_location"
logger = logging.getLogger(__name__)
MAX_TRIES = 200


def round_half_away(value: float) -> int:
    return int(math.copysign(math.floor(abs(value) + 0.5), value))


def centring_move(ctx: TaskContext, bond) -> tuple[int, int]:
    xy = (ctx.ann.screen[bond.protein_atom, :2] + ctx.ann.screen[bond.ligand_atom, :2]) / 2.0
    return -round_half_away(float(xy[0])), -round_half_away(float(xy[1]))


def answer_spread(ann) -> float:
    """How far from the screen centre this complex's H-bonds lie, per component (Å): the root
    mean square of the front-view x and y of the ligand's N and O atoms (of all its atoms when it
    has none). The spread of the true centring moves of 28 real complexes follows it (ratio
    1.02, correlation 0.72; docs/decoys.md); the ``paper`` decoys use it as the truth's prior."""
    cx = ann.complex
    ligand = cx.ligand_indices
    polar = [int(i) for i in ligand if cx.elements[i] in ("N", "O")]
    xy = ann.screen[polar or ligand.tolist(), :2]
    return float(np.sqrt((xy**2).mean()))


def _perturb(rng, value: int) -> int:
    mode = int(rng.integers(3))  # 0 keep, 1 flip sign, 2 change magnitude
    if mode == 1 and value != 0:
        return -value
    if mode == 2:
        step = int(rng.integers(1, 4)) * (1 if rng.random() < 0.5 else -1)
        new = value + step
        return new if (new != 0 and (value == 0 or (new > 0) == (value > 0))) else value - step
    return value


def _options(
    ctx: TaskContext, rng, truth: tuple[int, int], correct: int
) -> list[tuple[int, int]] | None:
    """The four options in letter order, the truth at ``correct`` (``ctx.decoys``: see
    ``decoys``); None when no valid set could be drawn."""
    if ctx.decoys == "balanced":
        return flipped_moves(truth, rng, correct, ctx.decoy_settings, answer_spread(ctx.ann))
    if "options" in ctx.params:  # the paper profile's decoys (docs/decoys.md)
        return flipped_moves(truth, rng, correct, ctx.params["options"], answer_spread(ctx.ann))
    opts = [truth]
    for _ in range(MAX_TRIES):
        cand = (_perturb(rng, truth[0]), _perturb(rng, truth[1]))
        if cand not in opts and cand != (0, 0):
            opts.append(cand)
        if len(opts) == 4:
            break
    else:
        return None
    decoys = opts[1:]
    return decoys[:correct] + [truth] + decoys[correct:]


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
        correct = letter_for(ctx, TASK, k)
        ordered = _options(ctx, rng, truth, correct)
        if ordered is None:
            logger.warning(
                "%s: no option set for bond %s (question %d left out)",
                ann.pdb_id,
                bond.pocket_text(),
                k,
            )
            continue
        option_texts = tuple(option_text(o) for o in ordered)
        images = six_views(ann, ctx.six_views)
        question = ctx.prompt(
            [ctx.caption(v) for v in ctx.six_views],
            pdb_id=ann.pdb_id.upper(),
            hbond=bond.pocket_text(),
            options_block=options_block(option_texts),
            hb_chain=bond.chain,
            hb_residue=f"{bond.res_name} {bond.res_number}{bond.ins_code}",
            hb_atom=bond.protein_atom_name,
            hb_ligand_atom=bond.ligand_atom_name,
        )
        meta = metadata(
            ctx,
            TASK,
            k,
            hbond=bond.pocket_text(),
            operations=[str(Move("x", truth[0])), str(Move("y", truth[1]))],
            option_operations=[[f"move x {o[0]}", f"move y {o[1]}"] for o in ordered],
            correct=LETTERS[correct],
        )
        out.append(
            ctx.instance(
                TASK,
                k,
                question=question,
                answer=LETTERS[correct],
                images=images,
                metadata=meta,
                options=option_texts,
            )
        )
    return out


# --------------------------------------------------------------------------------------------
# Audit and validation hooks
# --------------------------------------------------------------------------------------------


def replay(row, meta, ann, load):
    return six_views(ann, view_order(TASK, meta.build_profile))


def answer_space(row, meta, images, ann, load):
    """The front view after each option's move (no stored image pictures an option)."""
    cands = [
        ImageSpec(letter, ann.pdb_id, request(ann, "front", ops=ops_of(meta.option_operations[k])))
        for k, letter in enumerate(LETTERS)
    ]
    return split_space(cands, row["answer"], None)


def check(row, meta, subject: CheckSubject) -> list[str]:
    """The gold option is the centring move of the named bond's atoms; options are distinct."""
    cx, screen, rid = subject.complex, subject.screen, row["id"]
    m = re.match(r"^(\S+) (\S+) (\S+) (\S+), (.+)$", meta.hbond)
    res_name, number, atom, chain, lig_atom = m.groups()
    prot = [
        i
        for i in range(cx.n_atoms)
        if not cx.is_ligand[i]
        and cx.res_names[i] == res_name
        and cx.atom_names[i] == atom
        and f"{cx.res_numbers[i]}{cx.ins_codes[i]}" == number
        and cx.chain_ids[i] == chain
    ]
    ligs = [i for i in range(cx.n_atoms) if cx.is_ligand[i] and cx.atom_names[i] == lig_atom]
    if len(prot) != 1 or len(ligs) != 1:
        return [f"{rid}: named bond atoms not found uniquely"]
    out = []
    mid = (screen[prot[0], :2] + screen[ligs[0], :2]) / 2.0
    want = [int(-math.copysign(math.floor(abs(v) + 0.5), v)) for v in mid]
    letter = "ABCD".index(row["answer"])
    if row["options"][letter] != f"move x {want[0]}, move y {want[1]}":
        out.append(
            f"{rid}: centring move is {want}, option {row['answer']} says {row['options'][letter]}"
        )
    if len(set(row["options"])) != 4:
        out.append(f"{rid}: options not distinct")
    return out


def hbond_scope(row: Mapping, meta: ChoiceMeta, bonds: set) -> set:
    """The one bond the question is about."""
    return {meta.hbond} & set(bonds)


def needed_labels(row: Mapping, meta: ChoiceMeta, ann) -> set[tuple[str, int]]:
    """The residue label and the ligand atom name of the bond the question names."""
    cx = ann.complex
    return {
        key
        for b in ann.hbonds
        if b.pocket_text() == meta.hbond
        for key in (
            ("residue", int(cx.residue_index[b.protein_atom])),
            ("atom", int(b.ligand_atom)),
        )
    }


ROOM = Room(
    TASK_BY_NAME[TASK],
    generate,
    replay,
    check,
    answer_space=answer_space,
    needed_labels=needed_labels,
    hbond_scope=hbond_scope,
    checks=("legibility", "rotamers"),  # its question names an H-bond in the pictures
)
