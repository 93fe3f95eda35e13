"""Decoy modes of the choice tasks (T5, T6, T8): how the four options are drawn.

``paper`` (the default): the three decoys are perturbations of the true answer (``choice`` for
T5/T6, ``interaction_location._perturb`` for T8), as in the paper. The truth is then the centre
of the options, and a rule that never looks at the pictures (the option nearest to the other
three) beats chance (docs/decoys.md).

``balanced``: the four options are four *independent* perturbations of a hidden centre, and the
truth is one of the four. Given the set of options, every member is then equally likely to be
the truth (the draws are exchangeable), so any rule that sees only the options scores 1 in 4 up
to how much the truth's own prior varies over the spread of the options. A drawn set is kept or
rejected as a whole (four distinct options, none invalid, all images visibly different), a
condition symmetric in the four options, so rejection keeps the symmetry.

* T8: the truth (the centring move) is fixed by the geometry, and true centring moves are small
  (the camera centres each scene), so options drawn uniformly around the truth would leave the
  smallest option the truth far above 1 in 4. Every option is drawn as :func:`flipped_moves`
  draws it, a kernel around a hidden move weighted by the prior of a true answer, which makes
  the four exchangeable (settings: the task's ``decoys``; the ``paper`` profile draws its T8
  options the same way from its ``options``). Before issue 53 option ``i`` was ``t - p_j + p_i``
  with uniform ``p``: the option nearest zero was the truth in 40% of questions on unseen
  complexes, and the build's own gate refused such builds.
* T5/T6: the hidden centre is drawn like a truth; each option perturbs it independently (new
  axis, flipped sign, new magnitude, each with its probability in the task's data file,
  ``decoys.operations``);
  the option at the question's correct letter becomes the truth. The truth keeps its uniform
  distribution (each perturbation maps a uniform draw to a uniform draw).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from ..operations.language import Move, Operation, Roll

DECOY_MODES = ("paper", "balanced")
DEFAULT_DECOYS = "paper"
BALANCED_SCHEME = "balanced"


def check_mode(mode: str) -> str:
    if mode not in DECOY_MODES:
        raise ValueError(f"unknown decoy mode {mode!r}; expected one of {', '.join(DECOY_MODES)}")
    return mode


def exchangeable(ctx) -> bool:
    """Whether a T5/T6 question of ``ctx`` draws its options as the ``balanced`` mode does: in a
    ``balanced`` build, and in a profile whose ``choice.options`` is ``exchangeable`` (the
    ``paper`` profile)."""
    return ctx.decoys == "balanced" or ctx.choice.get("options") == "exchangeable"


# ---------------------------------------------------------------------------- T8: integer moves


def _kernel_draws(spread: int, flip: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every (sign pattern, offset) of the T8 option kernel with its probability: signs (n, 2),
    offsets (n, 2), weights (n,)."""
    values = np.arange(-spread, spread + 1)
    offsets = np.array([(x, y) for x in values for y in values], dtype=np.int64)
    patterns = np.array([(1, 1), (-1, 1), (1, -1), (-1, -1)], dtype=np.int64)
    p_sign = np.prod(np.where(patterns < 0, flip, 1.0 - flip), axis=1)
    signs = np.repeat(patterns, len(offsets), axis=0)
    return signs, np.tile(offsets, (4, 1)), np.repeat(p_sign, len(offsets)) / len(offsets)


def flipped_moves(
    truth: tuple[int, int],
    rng: np.random.Generator,
    correct: int,
    settings: Mapping,
    prior_sd: float,
) -> list[tuple[int, int]] | None:
    """The ``paper`` profile's T8 options (our rule, docs/decoys.md). Every option is drawn the
    same way around a hidden move ``h``: ``sign * h + offset`` per component (``offset`` uniform
    in ``-spread..spread``, ``sign`` -1 with probability ``flip_sign``), weighted by the prior
    of a true answer, ``exp(-|o|^2 / (2 prior_sd^2))`` (the camera centres each scene, so true
    centring moves are small; without the weight the smallest option would be the truth;
    ``prior_sd`` comes from the complex, see ``interaction_location.answer_spread``). The
    truth, at index ``correct``, fixes the hidden move: ``h = sign_j * (truth - offset_j)`` with
    ``sign_j``, ``offset_j`` drawn from the kernel, which, with that prior, makes the four options
    exchangeable: given the set, each is equally likely to be the truth. A set is kept only as a
    whole: four distinct non-zero moves, every two at least ``min_separation`` Å apart in some
    component (so no option is the other rounding of a component next to a .5 boundary). None
    when ``max_tries`` sets all fail. ``settings``: the task's ``options``."""
    spread, flip = int(settings["spread"]), float(settings["flip_sign"])
    separation, max_tries = int(settings["min_separation"]), int(settings["max_tries"])
    prior_sd = max(float(prior_sd), float(settings["min_prior_sd"]))
    signs, offsets, weights = _kernel_draws(spread, flip)
    t = np.asarray(truth, dtype=np.int64)
    for _ in range(max_tries):
        j = int(rng.choice(len(weights), p=weights))
        hidden = signs[j] * (t - offsets[j])
        cands = signs * hidden[None, :] + offsets
        w = weights * np.exp(-(cands.astype(np.float64) ** 2).sum(axis=1) / (2 * prior_sd**2))
        picks = rng.choice(len(w), size=4, p=w / w.sum())
        moves = cands[picks]
        moves[correct] = t
        options = [(int(x), int(y)) for x, y in moves]
        if (0, 0) in options or len(set(options)) < 4:
            continue
        gaps = np.abs(moves[:, None, :] - moves[None, :, :]).max(axis=2)
        if (gaps[np.triu_indices(4, 1)] < separation).any():
            continue
        return options
    return None


# ---------------------------------------------------------------------------- T5/T6: operation pairs


def _magnitudes(spec: Mapping) -> list[int]:
    return list(range(int(spec["min"]), int(spec["max"]) + 1, int(spec.get("step", 1))))


def _perturb_op(
    op: Operation,
    rng: np.random.Generator,
    spec: Mapping,
    axes: Sequence[str],
    probs: Mapping,
    new_axis: bool,
) -> Operation:
    """``op`` with (independently) a new axis (when ``new_axis``), a flipped sign and a new
    magnitude from ``spec``'s range."""
    axis, value = op.axis, op.magnitude
    if new_axis:
        others = [a for a in axes if a != axis]
        axis = others[int(rng.integers(len(others)))]
    if rng.random() < float(probs["flip_sign"]):
        value = -value
    if rng.random() < float(probs["new_magnitude"]):
        mags = [m for m in _magnitudes(spec) if m != abs(value)]
        value = int(mags[int(rng.integers(len(mags)))]) * (1 if value > 0 else -1)
    return Move(axis, value) if isinstance(op, Move) else Roll(axis, value)


def perturb_pair(
    centre: tuple[Operation, Operation],
    rng: np.random.Generator,
    specs: Sequence[Mapping],
    axes: Sequence[Sequence[str]],
    distinct_axes: bool,
    probs: Mapping,
) -> tuple[Operation, Operation]:
    """One option drawn around the hidden ``centre``. ``distinct_axes`` (T6): the two axes are
    redrawn together as an ordered pair of different axes."""
    change = float(probs["change_axis"])
    f1, f2 = centre
    if distinct_axes:
        if rng.random() < change:
            pairs = [
                (a, b) for a in axes[0] for b in axes[1] if a != b and (a, b) != (f1.axis, f2.axis)
            ]
            a, b = pairs[int(rng.integers(len(pairs)))]
            f1, f2 = type(f1)(a, f1.magnitude), type(f2)(b, f2.magnitude)
        return (
            _perturb_op(f1, rng, specs[0], axes[0], probs, False),
            _perturb_op(f2, rng, specs[1], axes[1], probs, False),
        )
    return (
        _perturb_op(f1, rng, specs[0], axes[0], probs, rng.random() < change),
        _perturb_op(f2, rng, specs[1], axes[1], probs, rng.random() < change),
    )


def balanced_pairs(
    centre: tuple[Operation, Operation],
    rng: np.random.Generator,
    specs: Sequence[Mapping],
    axes: Sequence[Sequence[str]],
    distinct_axes: bool,
    settings: Mapping,
    too_similar: Callable[[tuple, tuple, tuple], bool] | None = None,
) -> list[tuple[Operation, Operation]] | None:
    """Four distinct options, independent perturbations of ``centre`` (any of them can serve as
    the truth). ``too_similar(a, b, options)`` rejects a set holding two options whose images are
    nearly identical. ``settings``: the task's ``decoys`` (``operations``, ``max_tries``). None
    when ``max_tries`` sets all fail."""
    cfg, max_tries = settings, int(settings["max_tries"])
    for _ in range(max_tries):
        options = [
            perturb_pair(centre, rng, specs, axes, distinct_axes, cfg["operations"])
            for _ in range(4)
        ]
        if len(set(options)) < 4:
            continue
        if too_similar is not None and any(
            too_similar(options[i], options[j], options) for i in range(4) for j in range(i + 1, 4)
        ):
            continue
        return options
    return None
