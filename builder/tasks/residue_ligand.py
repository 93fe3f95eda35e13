"""T4 residue-ligand: does one pocket residue hydrogen-bond the ligand, and through which atoms?

Positives are residues with at least one H-bond; negatives are pocket residues with none, about
one per positive: part nearest-first (the residues closest to the ligand, hard to tell apart from
positives) and the rest drawn at random. Images: six views of that residue and the ligand only,
with the residue's atoms labelled by atom name.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..chemistry.hbonds import format_residue_answer
from ..core.errors import TaskError
from ..core.registry import TASK_BY_NAME
from ..core.rows import BondsMeta
from ..operations.transforms import VIEW_NAMES
from ..scene.camera import fit_camera
from .base import (
    Annotation,
    ImageSpec,
    TaskContext,
    TaskInstance,
    keep_labels,
    metadata,
    request,
    view_order,
)
from .room import CheckSubject, Room

TASK = "residue_ligand"


def _residue_distance(ann: Annotation, r: int) -> float:
    cx = ann.complex
    atoms = cx.residue_atoms(r)
    lig = cx.coords[cx.ligand_indices]
    return float(np.linalg.norm(cx.coords[atoms][:, None] - lig[None], axis=2).min())


def choose_residues(ctx: TaskContext) -> list[tuple[int, str]]:
    """(residue index, kind) pairs of this complex in question order; kind is ``positive``,
    ``nearest`` (a negative picked nearest-first) or ``random`` (a negative drawn at random)."""
    ann, p = ctx.ann, ctx.params
    rng = ctx.rng(TASK + ":choose", 0)
    bonded = sorted({ann.complex.residues.index(_res(ann, b)) for b in ann.hbonds})
    positives = list(bonded)
    cap = ctx.cap("max_positives")
    if cap is not None and len(positives) > cap:
        positives = sorted(rng.choice(positives, size=cap, replace=False).tolist())
    others = [r for r in range(len(ann.complex.residues)) if r not in bonded]
    n_neg = max(
        int(round(len(positives) * float(p["negatives_per_positive"]))),
        int(p.get("min_negatives", 1)),
    )
    n_neg = min(n_neg, len(others))
    n_near = int(round(n_neg * float(p["nearest_negative_fraction"])))
    by_distance = sorted(others, key=lambda r: (_residue_distance(ann, r), r))
    near = by_distance[:n_near]
    rest = [r for r in others if r not in near]
    far = (
        sorted(rng.choice(rest, size=n_neg - n_near, replace=False).tolist())
        if n_neg > n_near
        else []
    )
    chosen = (
        [(r, "positive") for r in positives]
        + [(r, "nearest") for r in near]
        + [(r, "random") for r in far]
    )
    order = rng.permutation(len(chosen))
    return [chosen[i] for i in order]


def _res(ann: Annotation, bond):
    return ann.complex.residues[int(ann.complex.residue_index[bond.protein_atom])]


def residue_scene(ann: Annotation, r: int):
    """(atoms, origin, camera) of residue ``r`` with the ligand: the shown atoms get their own
    frame, centred on their bounding box, with a camera fitted to them."""
    cx = ann.complex
    atoms = tuple(sorted(cx.residue_atoms(r).tolist() + cx.ligand_indices.tolist()))
    sub = cx.coords[list(atoms)]
    origin = (sub.min(axis=0) + sub.max(axis=0)) / 2.0
    return atoms, origin, fit_camera(sub - origin, size=ann.camera.size)


def residue_images(ann: Annotation, r: int, order=VIEW_NAMES) -> tuple[ImageSpec, ...]:
    """Six views of residue ``r`` and the ligand (in ``order``), residue atoms labelled by atom
    name."""
    atoms, origin, camera = residue_scene(ann, r)
    return keep_labels(
        ImageSpec(
            view,
            ann.pdb_id,
            request(
                ann, view, atoms=atoms, camera=camera, label_mode="residue_atoms", origin=origin
            ),
        )
        for view in order
    )


def generate(ctx: TaskContext) -> list[TaskInstance]:
    ann = ctx.ann
    cx = ann.complex
    out = []
    for k, (r, kind) in enumerate(choose_residues(ctx)):
        residue = cx.residues[r]
        bonds = [b for b in ann.hbonds if int(cx.residue_index[b.protein_atom]) == r]
        _, origin, _ = residue_scene(ann, r)
        images = residue_images(ann, r, ctx.six_views)
        lines = [
            ctx.caption("residue_view", residue=residue.label, view=view) for view in ctx.six_views
        ]
        question = ctx.prompt(
            lines,
            pdb_id=ann.pdb_id.upper(),
            residue=residue.label,
            example_residue=residue.name,
            hbond_rule=ctx.hbond_rule(),
        )
        answer = format_residue_answer(bonds)
        meta = metadata(
            ctx,
            TASK,
            k,
            residue={
                "chain": residue.chain,
                "name": residue.name,
                "number": residue.number,
                "ins_code": residue.ins_code,
            },
            positive=bool(bonds),
            hbonds=[b.residue_text() for b in sorted(bonds)],
            selection=kind,
            origin=[round(float(v), 4) for v in origin],
            **(
                {"tiny_stratum": "positive" if bonds else "negative"}
                if ctx.params.get("tiny_strata")
                else {}
            ),
        )
        out.append(
            ctx.instance(TASK, k, question=question, answer=answer, images=images, metadata=meta)
        )
    return out


# --------------------------------------------------------------------------------------------
# Audit and validation hooks
# --------------------------------------------------------------------------------------------


def _residue_bonds(hbonds, r) -> list:
    return [
        b for b in hbonds if (b.chain, b.res_number, b.ins_code) == (r.chain, r.number, r.ins_code)
    ]


def replay(row, meta, ann, load) -> tuple[ImageSpec, ...]:
    """The six views of the residue the metadata names."""
    r = meta.residue
    wanted = (r.chain, r.name, r.number, r.ins_code)
    index = next(
        (
            k
            for k, res in enumerate(ann.complex.residues)
            if (res.chain, res.name, res.number, res.ins_code) == wanted
        ),
        None,
    )
    if index is None:
        raise TaskError(f"{row['id']}: residue {r} is not in the pocket")
    return residue_images(ann, index, view_order(TASK, meta.build_profile))


def needed_labels(row, meta, ann) -> set[tuple[str, int]]:
    """Both atom names of each bond of the residue."""
    bonds = _residue_bonds(ann.hbonds, meta.residue)
    return {("atom", int(b.protein_atom)) for b in bonds} | {
        ("atom", int(b.ligand_atom)) for b in bonds
    }


def check(row, meta, subject: CheckSubject) -> list[str]:
    """The residue's H-bonds, recomputed from the freshly read structure, give the answer."""
    if format_residue_answer(_residue_bonds(subject.hbonds, meta.residue)) != row["answer"]:
        return [f"{row['id']}: recomputed residue H-bonds differ from the answer"]
    return []


def hbond_scope(row: Mapping, meta: BondsMeta, bonds: set) -> set:
    """The bonds (``RES NUM ATOM CHAIN, LIGATOM`` texts) of the question's residue."""
    r = meta.residue
    head = f"{r.name} {r.number}{r.ins_code} "
    return {t for t in bonds if t.startswith(head) and t.split(",")[0].endswith(f" {r.chain}")}


ROOM = Room(
    TASK_BY_NAME[TASK],
    generate,
    replay,
    check,
    needed_labels=needed_labels,
    hbond_scope=hbond_scope,
)
