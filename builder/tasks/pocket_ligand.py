"""T9 pocket-ligand: list every hydrogen bond between pocket residues and the ligand."""

from __future__ import annotations

from collections.abc import Mapping

from ..chemistry.hbonds import format_pocket_answer
from ..core.registry import TASK_BY_NAME
from .base import TaskContext, TaskInstance, metadata, six_views, view_order
from .room import CheckSubject, Room

TASK = "pocket_ligand"


def generate(ctx: TaskContext) -> list[TaskInstance]:
    ann = ctx.ann
    images = six_views(ann, ctx.six_views)
    question = ctx.prompt(
        [ctx.caption(v) for v in ctx.six_views],
        pdb_id=ann.pdb_id.upper(),
        hbond_rule=ctx.hbond_rule(),
    )
    answer = format_pocket_answer(ann.hbonds)
    return [
        ctx.instance(
            TASK,
            k,
            question=question,
            answer=answer,
            images=images,
            metadata=metadata(ctx, TASK, k, hbonds=[b.pocket_text() for b in ann.hbonds]),
        )
        for k in range(ctx.count())
    ]


def replay(row, meta, ann, load):
    return six_views(ann, view_order(TASK, meta.build_profile))


def needed_labels(row, meta, ann) -> set[tuple[str, int]]:
    """The residue label and the ligand atom name of each bond."""
    cx = ann.complex
    return {("residue", int(cx.residue_index[b.protein_atom])) for b in ann.hbonds} | {
        ("atom", int(b.ligand_atom)) for b in ann.hbonds
    }


def check(row, meta, subject: CheckSubject) -> list[str]:
    """Every H-bond, recomputed from the freshly read structure, gives the answer."""
    if format_pocket_answer(subject.hbonds) != row["answer"]:
        return [f"{row['id']}: recomputed H-bonds differ from the answer"]
    return []


def hbond_scope(row: Mapping, meta: Mapping, bonds: set) -> set:
    """Every bond of the complex is part of the answer."""
    return set(bonds)


ROOM = Room(
    TASK_BY_NAME[TASK],
    generate,
    replay,
    check,
    needed_labels=needed_labels,
    hbond_scope=hbond_scope,
)
