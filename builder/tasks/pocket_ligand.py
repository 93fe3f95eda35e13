"""T9 pocket-ligand: list every hydrogen bond between pocket residues and the ligand."""
from __future__ import annotations

from ..chemistry.hbonds import format_pocket_answer
from .base import TaskContext, TaskInstance, caption, metadata, six_views

TASK = "pocket_ligand"


def generate(ctx: TaskContext) -> list[TaskInstance]:
    ann = ctx.ann
    images = six_views(ann, ctx.six_views)
    question = ctx.prompt(TASK, [caption(v) for v in ctx.six_views], pdb_id=ann.pdb_id.upper())
    answer = format_pocket_answer(ann.hbonds)
    return [TaskInstance(TASK, ann.pdb_id, k, question, (), answer, images,
                         metadata(ctx, TASK, k, hbonds=[b.pocket_text() for b in ann.hbonds]), ctx.profile)
            for k in range(ctx.count())]
