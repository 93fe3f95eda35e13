"""Multiple-choice construction shared by T5 and T6: the three decoy schemes of docs/spec.md section 5.

Given the two true operations (f1, f2), the decoys are
(a) both magnitudes changed, (b) f1's sign flipped and f2's magnitude changed,
(c) f1's axis changed and f2's magnitude changed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from ..operations.language import Move, Operation, Roll
from .base import LETTERS, ImageSpec, other_magnitude
from .room import CheckSubject, gold_ops, ops_of, split_space

DECOY_SCHEMES = ("magnitudes", "sign_f1", "axis_f1")


def _with(op: Operation, axis: str | None = None, magnitude: int | None = None) -> Operation:
    axis = op.axis if axis is None else axis
    magnitude = op.magnitude if magnitude is None else magnitude
    return Move(axis, magnitude) if isinstance(op, Move) else Roll(axis, magnitude)


def make_decoy(
    scheme: str,
    f1: Operation,
    f2: Operation,
    rng: np.random.Generator,
    f1_spec: Mapping,
    f2_spec: Mapping,
    f1_axes: Sequence[str],
) -> tuple[Operation, Operation]:
    """One wrong (f1', f2') pair following ``scheme``."""
    if scheme == "magnitudes":
        return _with(f1, magnitude=other_magnitude(rng, f1.magnitude, f1_spec)), _with(
            f2, magnitude=other_magnitude(rng, f2.magnitude, f2_spec)
        )
    if scheme == "sign_f1":
        return _with(f1, magnitude=-f1.magnitude), _with(
            f2, magnitude=other_magnitude(rng, f2.magnitude, f2_spec)
        )
    if scheme == "axis_f1":
        axes = [a for a in f1_axes if a != f1.axis]
        return _with(f1, axis=axes[int(rng.integers(len(axes)))]), _with(
            f2, magnitude=other_magnitude(rng, f2.magnitude, f2_spec)
        )
    raise ValueError(f"unknown decoy scheme {scheme!r}")


def build_options(
    truth: tuple[Operation, ...],
    rng: np.random.Generator,
    correct_index: int,
    decoy: Callable[[str, np.random.Generator], tuple[Operation, ...]],
    too_similar: Callable[[tuple[Operation, ...], tuple[Operation, ...]], bool],
    max_resample: int,
) -> tuple[list[tuple[Operation, ...]], list[str]] | None:
    """Four option operation sequences with the truth at ``correct_index``; decoys are drawn
    (one per scheme, schemes in random letter order) until all four are distinct as operations
    and as images. Returns (options, scheme per option) or None when resampling fails."""
    order = list(rng.permutation(len(DECOY_SCHEMES)))
    schemes = [DECOY_SCHEMES[i] for i in order]
    chosen: list[tuple[Operation, ...]] = [truth]
    for scheme in schemes:
        for _ in range(max_resample):
            candidate = decoy(scheme, rng)
            if candidate not in chosen and not any(too_similar(candidate, c) for c in chosen):
                chosen.append(candidate)
                break
        else:
            return None
    decoys = chosen[1:]
    options: list[tuple[Operation, ...]] = []
    names: list[str] = []
    it = iter(zip(decoys, schemes))
    for i in range(len(LETTERS)):
        if i == correct_index:
            options.append(truth)
            names.append("correct")
        else:
            ops, scheme = next(it)
            options.append(ops)
            names.append(scheme)
    return options, names


# --------------------------------------------------------------------------------------------
# Audit and validation hooks shared by T5 and T6 (the last four images picture the options)
# --------------------------------------------------------------------------------------------


def replay_options(row, meta, ann, load, spec, images_of):
    """``images_of(ann, load, meta, truth, options)`` for the stored row: the truth from the
    gold letter, the options from the metadata."""
    truth = gold_ops(spec, row, meta)
    return images_of(ann, load, meta, truth, [ops_of(o) for o in meta.option_operations])


def option_space(row, meta, images, ann, load):
    """The four stored option images, named by letter."""
    first = len(images) - 4
    cands = [
        ImageSpec(letter, images[first + k].pdb_id, images[first + k].request)
        for k, letter in enumerate(LETTERS)
    ]
    return split_space(cands, row["answer"], first + LETTERS.index(row["answer"]))


def check_option_pair(row, meta, subject: CheckSubject) -> list[str]:
    """Distinct option operations, the gold letter naming the true pair, distinct option images."""
    rid, out = row["id"], []
    opts = list(meta.option_operations)
    if len(set(opts)) != 4:
        out.append(f"{rid}: option operations not distinct")
    letter = "ABCD".index(row["answer"])
    if opts[letter] != meta.operations:
        out.append(f"{rid}: option {row['answer']} is not the true operation pair")
    digests = {img["bytes"] for img in row["images"][-4:]}
    if len(digests) != 4:
        out.append(f"{rid}: two option images are identical")
    return out
