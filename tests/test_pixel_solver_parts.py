"""The pixel-only solver's image steps (builder/checks/pixel_solver.py) against plain reference
implementations written here, on real rendered pictures: the Zhang-Suen thinning by its table of
neighbour rings, the skeleton's chains by pointer-jumping label propagation."""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest
from misi_bench.builder.checks import pixel_solver
from misi_bench.builder.scene.raster import render_image
from misi_bench.builder.tasks.base import annotate, six_views


def _thin_reference(mask: np.ndarray) -> np.ndarray:
    """Zhang-Suen thinning with its conditions written out (neighbour counts and 0 -> 1
    steps around the ring of eight, computed for every pixel at once in each sub-step)."""
    img = np.pad(mask.astype(np.uint8), 1)
    changed = True
    while changed:
        changed = False
        for step in (0, 1):
            p = img
            p2, p3, p4, p5 = p[:-2, 1:-1], p[:-2, 2:], p[1:-1, 2:], p[2:, 2:]
            p6, p7, p8, p9 = p[2:, 1:-1], p[2:, :-2], p[1:-1, :-2], p[:-2, :-2]
            ring = [p2, p3, p4, p5, p6, p7, p8, p9, p2]
            filled = sum(x.astype(np.int16) for x in ring[:8])
            rises = sum(((ring[i] == 0) & (ring[i + 1] == 1)).astype(np.int16) for i in range(8))
            a, b = (p2 & p4 & p6, p4 & p6 & p8) if step == 0 else (p2 & p4 & p8, p2 & p6 & p8)
            drop = (
                (p[1:-1, 1:-1] == 1)
                & (filled >= 2)
                & (filled <= 6)
                & (rises == 1)
                & (a == 0)
                & (b == 0)
            )
            if drop.any():
                img[1:-1, 1:-1][drop] = 0
                changed = True
    return img[1:-1, 1:-1].astype(bool)


def _chains_reference(skeleton: np.ndarray) -> list[int]:
    """Pixel counts + 2 of the 8-connected runs of skeleton pixels with exactly two skeleton
    neighbours, by breadth-first search, in the order of each run's first pixel (row by row)."""
    h, w = skeleton.shape
    chain = np.zeros_like(skeleton)
    for y, x in zip(*np.nonzero(skeleton)):
        around = skeleton[max(y - 1, 0) : y + 2, max(x - 1, 0) : x + 2]
        chain[y, x] = int(around.sum()) - 1 == 2
    seen = np.zeros_like(chain)
    out = []
    for y, x in zip(*np.nonzero(chain)):
        if seen[y, x]:
            continue
        seen[y, x], todo, count = True, deque([(y, x)]), 0
        while todo:
            cy, cx = todo.popleft()
            count += 1
            for ny in range(max(cy - 1, 0), min(cy + 2, h)):
                for nx in range(max(cx - 1, 0), min(cx + 2, w)):
                    if chain[ny, nx] and not seen[ny, nx]:
                        seen[ny, nx] = True
                        todo.append((ny, nx))
        out.append(count + 2)
    return out


@pytest.fixture(scope="module")
def stick_masks(complexes):
    """The stick masks the bond ruler thins: two views of two real pockets (1HVR, 1A28)."""
    masks = []
    for pdb_id in ("1hvr", "1a28"):
        cx = complexes[pdb_id]
        for spec in six_views(annotate(cx))[:2]:
            pixels = np.asarray(render_image(cx, spec.request))
            masks.append(((pixels > 0).any(axis=2)) & ~pixel_solver.label_cover(pixels))
    return masks


def test_thinning_matches_the_written_out_conditions(stick_masks):
    for mask in stick_masks:
        assert np.array_equal(pixel_solver._thin(mask), _thin_reference(mask))


def test_chain_lengths_match_a_breadth_first_search(stick_masks):
    for mask in stick_masks:
        skeleton = pixel_solver._thin(mask)
        lengths = pixel_solver._chain_lengths(skeleton)
        assert lengths.tolist() == _chains_reference(skeleton)
        assert lengths.size > 20  # a real pocket: many bonds to measure


def test_chain_lengths_of_nothing_and_of_one_line():
    assert pixel_solver._chain_lengths(np.zeros((6, 6), dtype=bool)).size == 0
    line = np.zeros((5, 12), dtype=bool)
    line[2, 1:11] = True  # ends have one neighbour: 8 chain pixels
    assert pixel_solver._chain_lengths(line).tolist() == [10]
