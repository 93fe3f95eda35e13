"""The uniqueness check's runner-up margin of an answer space (``audit``), with the candidates
of one scene drawn as one batch.

The candidates of a question (T7: 252 poses of the displaced ligand; T1-T3: the whole scene
after every command) differ only in their operations, so ``scene.batch.render_stack`` draws them
together: the same pixels as one by one (``tests/test_batch.py``), so the same block means and
margins. A candidate's picture is black outside its band, so its distance to the gold picture
is counted in the band's block rows and read off the gold picture elsewhere
(``audit_checks.image_distances``).
"""

from __future__ import annotations

import numpy as np

from ..scene.batch import render_stack, scene_key
from .audit_checks import (
    block_means,
    block_side,
    image_distance,
    image_distances,
    sheet_block_means,
)

#: Candidates of one scene are drawn as one batch from this many on.
BATCH_MIN = 8


class Margins:
    """Mixed into the auditor, which provides ``load``, ``render_means`` (one picture's block
    means through its caches ``means`` and ``pixels``, taking those in ``batched`` first)."""

    def margin(self, space, stored: list[np.ndarray]) -> int:
        """Runner-up margin of an answer space: the least image distance from the gold answer's
        picture (the stored image that shows it, else its rendering) to another candidate's."""
        cands = list(space.others)
        if space.stored_index is not None:
            gold = block_means(stored[space.stored_index])
        else:
            cands.insert(0, space.gold)
        found = self.candidate_means(cands)
        if found is None:  # pictures of different sizes: one by one
            if space.stored_index is None:
                gold = self.render_means(space.gold.pdb_id, space.gold.request)
            return min(
                image_distance(gold, self.render_means(c.pdb_id, c.request)) for c in space.others
            )
        means, rows = found
        if space.stored_index is None:
            gold, means, rows = means[0], means[1:], rows[1:]
        return int(image_distances(gold, means, rows).min())

    def candidate_means(self, specs: list) -> tuple[np.ndarray, np.ndarray] | None:
        """``(means, rows)``: the (K, ...) block means of the candidates' pictures, through the
        means cache, and per candidate the block rows outside which its means are 0 (None when
        the pictures differ in size). Missing candidates that differ only in their operations
        (``batch.scene_key``), at least ``BATCH_MIN`` of them, are drawn as one batch
        (``batch.render_stack``: the same pixels), the others one by one."""
        sizes = {int(s.request.camera.size) for s in specs}
        if len(sizes) != 1:
            return None
        size = sizes.pop()
        b = block_side(size)
        groups: dict[tuple, list[int]] = {}
        for k, spec in enumerate(specs):
            item = (self.load(spec.pdb_id).complex, spec.request)
            if item not in self.means and item not in self.pixels:
                groups.setdefault((spec.pdb_id, scene_key(spec.request)), []).append(k)
        for (pdb_id, _), ks in groups.items():
            if len(ks) >= BATCH_MIN:
                requests = [specs[k].request for k in ks]
                sheets = render_stack(self.load(pdb_id).complex, requests, align=b)
                self.batched.update(zip(requests, sheet_block_means(sheets, len(ks), size)[0]))
        means = np.zeros((len(specs), size // b, size // b, 3), dtype=np.float32)
        try:
            for k, spec in enumerate(specs):
                means[k] = self.render_means(spec.pdb_id, spec.request)
        finally:
            self.batched.clear()
        drawn = means.any(axis=(2, 3))
        first = np.where(drawn.any(axis=1), drawn.argmax(axis=1), 0)
        last = np.where(drawn.any(axis=1), drawn.shape[1] - drawn[:, ::-1].argmax(axis=1), 0)
        return means, np.stack([first, last], axis=1)
