"""Labels of many poses of one scene (``batch.render_stack``), as ``labels.layout_labels`` places
them: ligand-only selections (T7's candidates) over all poses at once as arrays, others pose by
pose through ``layout_labels`` itself."""

from __future__ import annotations

import numpy as np

from .labels import _POLAR, SLOTS, label_px, label_sprite, layout_labels
from .layout import leader_line
from .requests import LIGAND_LABEL_COLOUR


def pose_labels(complex_, atoms, request, u, v, alive, depth, radius_px, keeps=None) -> list[list]:
    """Per pose (rows of the (P, N) arrays, as ``labels.layout_labels`` takes them: ``u``,
    ``v``, ``radius_px`` at the picture's size), its labels in drawing order as ``(x, y, sprite
    core, width, height, leader)``, ``leader`` the label's leader line ``(pixels, colour)``
    (``layout.leader_line``) or ``None``. ``keeps``: per pose, the label offsets its request
    keeps from its reference picture (``raster.reference_offsets``), or ``None``."""
    style, size = request.style, int(request.camera.size)
    if style.label_mode == "none":
        return [[] for _ in range(len(u))]
    keeps = keeps or [None] * len(u)
    alone = bool(complex_.is_ligand[atoms].all())
    if style.label_placement in ("avoid", "leader") and alone and not any(keeps):
        return _ligand_labels(complex_, atoms, u, v, alive, depth, radius_px, style, size)
    out = []
    for p in range(len(u)):
        placed = layout_labels(
            complex_,
            atoms,
            u[p],
            v[p],
            alive[p],
            depth[p],
            radius_px[p],
            style,
            size,
            keep=keeps[p],
        )
        out.append(
            [
                (
                    lb.x,
                    lb.y,
                    label_sprite(lb.text, lb.px, lb.colour)[0],
                    lb.width,
                    lb.height,
                    leader_line(lb),
                )
                for lb in placed
            ]
        )
    return out


def _ligand_labels(complex_, atoms, u, v, alive, depth, radius_px, style, size) -> list[list]:
    """``labels.layout_labels`` of every pose of a ligand-only selection, placed rank by rank
    over all poses at once: each pose's atom names in its own order (polar atoms first, then
    near to far, then atom index), each taking the first slot inside the picture whose interior
    meets no interior placed before in that pose (the rectangle test ``layout_labels`` uses),
    else its default slot, drawn under the placed ones and kept clear by the later ones."""
    n_pose, n = u.shape
    px = label_px(style, size)
    texts = [str(complex_.atom_names[a]) for a in atoms.tolist()]
    sprites = [label_sprite(t, px, LIGAND_LABEL_COLOUR) if t else (None, 0, 0) for t in texts]
    w = np.array([s[1] for s in sprites], dtype=np.float64)
    h = np.array([s[2] for s in sprites], dtype=np.float64)
    polar = np.array([str(complex_.elements[a]).strip().upper() in _POLAR for a in atoms.tolist()])
    inside = alive & (u >= 0) & (u < size) & (v >= 0) & (v < size)
    valid = inside & np.array([bool(t) for t in texts])[None, :]
    order = np.lexsort(
        (np.broadcast_to(atoms, (n_pose, n)), depth, np.broadcast_to(~polar, (n_pose, n)), ~valid)
    )
    count = valid.sum(axis=1)
    slots = SLOTS["avoid"][0]
    dx = np.array([s[0] for s in slots], dtype=np.float64)
    dy = np.array([s[1] for s in slots], dtype=np.float64)
    sx = np.array([s[2] for s in slots], dtype=np.float64)
    sy = np.array([s[3] for s in slots], dtype=np.float64)
    rects = np.zeros((n_pose, n, 4), dtype=np.int64)
    has = np.zeros((n_pose, n), dtype=bool)
    at = np.zeros((n_pose, n, 2), dtype=np.int64)
    free = np.zeros((n_pose, n), dtype=bool)
    rows = np.arange(n_pose)
    for i in range(n):
        k = order[:, i]
        wk, hk, rk = w[k], h[k], radius_px[rows, k]
        x0 = u[rows, k] + 1 + rk
        y0 = v[rows, k] - hk / 2.0
        x = np.rint(x0[:, None] + dx * wk[:, None] + sx * rk[:, None]).astype(np.int64)
        y = np.rint(y0[:, None] + dy * hk[:, None] + sy * rk[:, None]).astype(np.int64)
        wi, hi = wk.astype(np.int64)[:, None], hk.astype(np.int64)[:, None]
        ok = (x >= 0) & (y >= 0) & (x + wi <= size) & (y + hi <= size)
        if i:
            r = rects[:, None, :i, :]
            meets = (
                ((x + 1)[..., None] < r[..., 2])
                & (r[..., 0] < (x + wi - 1)[..., None])
                & ((y + 1)[..., None] < r[..., 3])
                & (r[..., 1] < (y + hi - 1)[..., None])
                & has[:, None, :i]
            ).any(axis=2)
            ok &= ~(meets & (wi > 2) & (hi > 2))
        found = ok.any(axis=1)
        slot = ok.argmax(axis=1)
        free[:, i] = found
        at[:, i, 0] = np.where(found, x[rows, slot], np.rint(x0).astype(np.int64))
        at[:, i, 1] = np.where(found, y[rows, slot], np.rint(y0).astype(np.int64))
        has[:, i] = valid[rows, k] & (wi[:, 0] > 2) & (hi[:, 0] > 2)  # stuck ones too
        rects[:, i] = np.stack(
            [
                at[:, i, 0] + 1,
                at[:, i, 1] + 1,
                at[:, i, 0] + wi[:, 0] - 1,
                at[:, i, 1] + hi[:, 0] - 1,
            ],
            axis=1,
        )
    out = []
    for p in range(n_pose):
        c = int(count[p])
        ks, xy, fr = order[p, :c].tolist(), at[p, :c].tolist(), free[p, :c].tolist()
        stuck = [(x, y, *sprites[k], None) for k, (x, y), f in zip(ks, xy, fr) if not f]
        out.append(stuck + [(x, y, *sprites[k], None) for k, (x, y), f in zip(ks, xy, fr) if f])
    return out
