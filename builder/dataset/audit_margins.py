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
#: Batches kept (the T1-T3 questions of a complex share their answer space).
BATCHES_KEPT = 4


class Margins:
    """Mixed into the auditor, which provides ``load``, ``render_means`` (one picture's block
    means through its caches) and a ``batches`` dict."""

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
        """``(means, rows)``: the (K, ...) block means of the candidates' pictures and, per
        candidate, the block rows outside which its means are 0 (None when the pictures differ
        in size). Candidates that differ only in their operations (``batch.scene_key``), at
        least ``BATCH_MIN`` of them, are drawn as one batch (``batch.render_stack``: the same
        pixels; the last few batches are kept, as T1-T3 questions of a complex share their
        answer space), the others one by one through the means cache."""
        sizes = {int(s.request.camera.size) for s in specs}
        if len(sizes) != 1:
            return None
        size = sizes.pop()
        b = block_side(size)
        means = np.zeros((len(specs), size // b, size // b, 3), dtype=np.float32)
        rows = np.zeros((len(specs), 2), dtype=np.int64)
        rows[:, 1] = size // b
        groups: dict[tuple, list[int]] = {}
        for k, spec in enumerate(specs):
            groups.setdefault((spec.pdb_id, scene_key(spec.request)), []).append(k)
        for (pdb_id, _), ks in groups.items():
            if len(ks) < BATCH_MIN:
                for k in ks:
                    means[k] = self.render_means(pdb_id, specs[k].request)
                continue
            key = (pdb_id, tuple(specs[k].request for k in ks))
            found = self.batches.pop(key, None)
            if found is None:
                sheets = render_stack(self.load(pdb_id).complex, key[1], align=b)
                found = sheet_block_means(sheets, len(ks), size)
            self.batches[key] = found
            while len(self.batches) > BATCHES_KEPT:
                self.batches.pop(next(iter(self.batches)))
            means[ks], rows[ks] = found
        return means, rows
