"""T9 pocket-ligand: list every hydrogen bond between pocket residues and the ligand."""
from __future__ import annotations

from ..operations.transforms import VIEW_NAMES
from ..chemistry.hbonds import format_pocket_answer
from .base import TaskContext, TaskInstance, caption, fill_prompt, hbond_rule, metadata, six_views

TASK = "pocket_ligand"


def generate(ctx: TaskContext) -> list[TaskInstance]:
    ann = ctx.ann
    images = six_views(ann)
    question = fill_prompt(TASK, [caption(v) for v in VIEW_NAMES], pdb_id=ann.pdb_id.upper(),
                           hbond_rule=hbond_rule(ann.hbond_mode))
    answer = format_pocket_answer(ann.hbonds)
    return [TaskInstance(TASK, ann.pdb_id, k, question, (), answer, images,
                         metadata(ctx, TASK, k, hbonds=[b.pocket_text() for b in ann.hbonds]))
            for k in range(ctx.count())]
