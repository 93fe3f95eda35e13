"""Replay a built question: its image plan from the stored metadata and gold answer, and the
other answers of its task's answer space, each with the picture it would give.

Used by the dataset audit (``builder.dataset.audit``). ``question_images`` rebuilds the render
request of every image of a stored row with the generators' own image functions; the images
that depend on the answer are derived from the *gold answer* (T1-T3 image 4, T5/T6 reference
and options, T7 displacement = inverse of the answer), never copied from the metadata.
``answer_space`` lists, for the tasks with a finite answer space (T1, T2, T3, T7) or options
(T5, T6, T8), the request picturing every candidate; the gold candidate must be the one nearest
to what the question shows.

Answer spaces (from ``templates/params.yaml``): T1 ``move x|y D`` over the distance range; T2
``roll x|y|z A`` over the angle range; T3 ``move z D`` over the distance range; T7 every roll
of the roll range on every axis, combined with ``move x`` within ``DOCKING_MOVE_WINDOW`` Å of the
gold move (a move x shifts the whole ligand rigidly while a roll keeps its centre fixed, so
farther moves only look more different); T5/T6/T8 the four options.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable, Mapping

from ..core.errors import TaskError
from ..operations.language import AXES, Move, Operation, Roll, parse_operations
from . import docking, residue_ligand, rotation_rotation, translation, translation_rotation
from ..core.profiles import profile_of_metadata
from .base import LETTERS, Annotation, ImageSpec, load_params, request, six_views, view_order

#: T7 candidates: ``move x`` values within this many Å of the gold move.
DOCKING_MOVE_WINDOW = 3

Loader = Callable[[str], Annotation]


@dataclass(frozen=True)
class AnswerSpace:
    """The gold candidate, the others, and the index of the stored image that pictures the gold
    answer (None when no stored image does: T7, T8). A candidate is an ``ImageSpec`` named by
    its answer text: the answer, whose complex, and the request that pictures it."""

    gold: ImageSpec
    others: tuple[ImageSpec, ...]
    stored_index: int | None


def _ops(texts) -> tuple[Operation, ...]:
    return tuple(op for text in texts for op in parse_operations(text))


def _gold_ops(row: Mapping, meta: Mapping) -> tuple[Operation, ...]:
    """The gold operation sequence: the answer itself, or the option the gold letter names."""
    if row["task"] in ("translation_rotation", "rotation_rotation", "interaction_location"):
        return _ops(meta["option_operations"][LETTERS.index(row["answer"])])
    return parse_operations(row["answer"])


def _magnitudes(spec: Mapping) -> list[int]:
    step = int(spec.get("step", 1))
    return [v for v in range(int(spec["min"]), int(spec["max"]) + 1, step) if v != 0]


def _signed(spec: Mapping) -> list[int]:
    mags = _magnitudes(spec)
    return sorted({m for m in mags} | {-m for m in mags if m > 0})


def _docking_scene(ann: Annotation, answer: tuple[Operation, ...]):
    """(displacement ops, camera) of a T7 question from its gold answer ``roll, move``."""
    roll, move = answer
    ops = (move.inverse(), roll.inverse())
    return ops, docking.scene_camera(ann, docking.displaced_ligand(ann, ops))


def question_images(row: Mapping, load: Loader) -> tuple[ImageSpec, ...]:
    """The image plan of a stored row, in prompt order."""
    task, meta = row["task"], json.loads(row["metadata"])
    ann = load(row["pdb_id"])
    if task in ("translation", "rotation", "zooming"):
        (op,) = _gold_ops(row, meta)
        return translation.unit_images(ann, op)
    if task == "residue_ligand":
        r = meta["residue"]
        index = next((k for k, res in enumerate(ann.complex.residues)
                      if (res.chain, res.name, res.number, res.ins_code) == (r["chain"], r["name"], r["number"], r["ins_code"])),
                     None)
        if index is None:
            raise TaskError(f"{row['id']}: residue {r} is not in the pocket")
        return residue_ligand.residue_images(ann, index, view_order(profile_of_metadata(meta)))
    if task == "translation_rotation":
        truth = _gold_ops(row, meta)
        options = [_ops(o) for o in meta["option_operations"]]
        return translation_rotation.question_images(ann, load(meta["target"]), truth, options)
    if task == "rotation_rotation":
        truth = _gold_ops(row, meta)
        return rotation_rotation.question_images(ann, truth, [_ops(o) for o in meta["option_operations"]])
    if task == "docking":
        ops, camera = _docking_scene(ann, _gold_ops(row, meta))
        return docking.question_images(ann, ops, camera)
    if task in ("interaction_location", "pocket_ligand"):
        return six_views(ann, view_order(profile_of_metadata(meta)))
    raise TaskError(f"{row['id']}: unknown task {task!r}")


def answer_space(row: Mapping, images: tuple[ImageSpec, ...], load: Loader) -> AnswerSpace | None:
    """The candidates of a stored row (None for T4/T9, whose answers are H-bond lists)."""
    task, meta = row["task"], json.loads(row["metadata"])
    ann = load(row["pdb_id"])
    params = load_params(profile_of_metadata(meta))["tasks"]
    gold_ops = _gold_ops(row, meta)
    if task in ("translation", "rotation", "zooming"):
        p = params[task]
        if task == "translation":
            space = [Move(a, d) for a in p["axes"] for d in _magnitudes(p["distance"])]
        elif task == "rotation":
            space = [Roll(a, v) for a in p["axes"] for v in _magnitudes(p["angle"])]
        else:
            space = [Move("z", d) for d in _magnitudes(p["distance"])]
        cands = [ImageSpec(str(op), ann.pdb_id, request(ann, "front", ops=[op])) for op in space]
        return _split(cands, str(gold_ops[0]), 3)
    if task in ("translation_rotation", "rotation_rotation", "interaction_location"):
        first = len(images) - 4 if task != "interaction_location" else None
        cands = []
        for k, letter in enumerate(LETTERS):
            if first is not None:
                spec = images[first + k]
                cands.append(ImageSpec(letter, spec.pdb_id, spec.request))
            else:
                cands.append(ImageSpec(letter, ann.pdb_id, request(ann, "front", ops=_ops(meta["option_operations"][k]))))
        return _split(cands, row["answer"], None if first is None else first + LETTERS.index(row["answer"]))
    if task == "docking":
        p = params["docking"]
        roll, move = gold_ops
        ops, camera = _docking_scene(ann, gold_ops)
        ligand = tuple(ann.complex.ligand_indices.tolist())
        moves = [m for m in range(move.distance - DOCKING_MOVE_WINDOW, move.distance + DOCKING_MOVE_WINDOW + 1) if m != 0]
        cands = []
        for axis in AXES:
            for angle in _signed(p["roll_angle"]):
                for m in moves:
                    answer = (Roll(axis, angle), Move("x", m))
                    req = request(ann, "front", atoms=ligand, groups=((ligand, ops + answer),), camera=camera)
                    cands.append(ImageSpec(f"{answer[0]}, {answer[1]}", ann.pdb_id, req))
        return _split(cands, row["answer"], None)
    return None


def _split(cands: list[ImageSpec], gold: str, stored_index: int | None) -> AnswerSpace:
    golds = [c for c in cands if c.view_name == gold]
    if len(golds) != 1:
        raise TaskError(f"gold answer {gold!r} is not in the task's answer space")
    return AnswerSpace(golds[0], tuple(c for c in cands if c.view_name != gold), stored_index)
