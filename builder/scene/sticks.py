"""Stick geometry of the renderer: the band polygons of every half-stick of a view, in image
coordinates (supersampled pixels), with their shaded colours. Pure numpy; ``raster`` draws them."""

from __future__ import annotations

import numpy as np

from .shading import LIGHT, band_table

#: Sticks thinner than this half-width (final pixels) are drawn in one band (see stick_polygons).
THIN_STICK_PX = 3.0


def stick_polygons(
    bonds, coords, depth, u, v, focal, half_img, style, base, fog_level, supersample
):
    """Band polygons of all half-sticks: ``(owner, phase, polys, rgb)`` with one row per band
    polygon, bands of one stick consecutive. ``owner`` is the atom at whose turn the polygon is
    drawn, ``phase`` 0 (before its sphere: leads away from the viewer) or 2 (after it),
    ``polys`` (P, 8) image coordinates, ``rgb`` (P, 3) int colours."""
    half = _half_sticks(bonds, coords, depth, u, v, focal, half_img, base, fog_level)
    if half is None:
        return None
    f, ex, ey, ed, dx, dy, length = half
    layout, band_inks = band_table(int(style.stick_bands), float(style.fog))
    nb = len(layout)
    rs = float(style.stick_radius) * focal
    # Light direction in image coordinates (v grows downward).
    lx, ly = float(LIGHT[0]), float(-LIGHT[1])
    nx = -dy / length
    ny = dx / length
    flip = (nx * lx + ny * ly) < 0
    nx = np.where(flip, -nx, nx)
    ny = np.where(flip, -ny, ny)
    w0 = rs / depth[f]
    w1 = rs / ed
    polys = _band_corners(u[f], v[f], ex, ey, nx, ny, w0, w1, layout)
    rgb, keep = _band_colours(base[f], fog_level[f], w0, w1, band_inks, style, supersample)
    phase_rows = np.where(ed < depth[f], 2, 0)
    kept = keep.reshape(-1)
    return (
        np.repeat(f, nb)[kept],
        np.repeat(phase_rows, nb)[kept],
        polys.reshape(-1, 8)[kept],
        rgb.reshape(-1, 3)[kept],
    )


def _half_sticks(bonds, coords, depth, u, v, focal, half_img, base, fog_level):
    """The half-sticks to draw, or None: for each, its atom ``f``, its far end on screen
    (``ex``, ``ey``, supersampled px) and in depth (``ed``, Å), and its screen vector ``dx``,
    ``dy`` and ``length`` (px). A half runs from its atom to the bond's midpoint, or, when both
    halves look alike, to the other atom (drawn once, at the farther atom's turn)."""
    a, b = bonds[:, 0], bonds[:, 1]
    mid = (coords[a] + coords[b]) / 2.0
    mdepth = depth[a] * 0.5 + depth[b] * 0.5
    mu = half_img + mid[:, 0] * focal / mdepth
    mv = half_img - mid[:, 1] * focal / mdepth
    # Same colour and (nearly) the same fog on both halves: one full stick, drawn at the farther
    # atom's turn in the farther atom's shade (a one-level fog step is invisible; this saves a
    # third of the polygons of a pocket).
    same = (base[a] == base[b]).all(axis=1) & (np.abs(fog_level[a] - fog_level[b]) <= 1)
    # Both halves in one pass: the half at a (rows 0..M-1), then the half at b (rows M..2M-1).
    first, second = np.concatenate([a, b]), np.concatenate([b, a])
    same = np.concatenate([same, same])
    mu, mv, mdepth = (
        np.concatenate([mu, mu]),
        np.concatenate([mv, mv]),
        np.concatenate([mdepth, mdepth]),
    )
    # Half at `first`: from first to the midpoint, or to `second` when merged.
    ex = np.where(same, u[second], mu)
    ey = np.where(same, v[second], mv)
    ed = np.where(same, depth[second], mdepth)
    dx, dy = ex - u[first], ey - v[first]
    length = np.hypot(dx, dy)
    ok = length > 1e-6
    farther_first = (depth[first] > depth[second]) | (
        (depth[first] == depth[second]) & (first < second)
    )
    ok &= ~same | farther_first  # merged sticks only once, at the farther atom
    rows = np.flatnonzero(ok)
    if rows.size == 0:
        return None
    return first[rows], ex[rows], ey[rows], ed[rows], dx[rows], dy[rows], length[rows]


def _band_corners(uf, vf, exr, eyr, nx, ny, w0, w1, layout) -> np.ndarray:
    """(rows, bands, 8) corners of each band polygon (supersampled px): (first, s0), (first,
    s1), (end, s1), (end, s0), each ``point + normal * s * width`` (the same products and sums,
    element by element, as one corner at a time)."""
    n_rows = uf.size
    points = np.empty((n_rows, 4, 2))
    points[:, 0, 0] = points[:, 1, 0] = uf
    points[:, 0, 1] = points[:, 1, 1] = vf
    points[:, 2, 0] = points[:, 3, 0] = exr
    points[:, 2, 1] = points[:, 3, 1] = eyr
    widths = np.empty((n_rows, 4))
    widths[:, :2] = w0[:, None]
    widths[:, 2:] = w1[:, None]
    across = np.array([[s0, s1, s1, s0] for s0, s1 in layout])  # (bands, 4)
    normal = np.stack([nx, ny], axis=1)
    return (
        points[:, None]
        + normal[:, None, None, :] * across[None, :, :, None] * widths[:, None, :, None]
    ).reshape(n_rows, len(layout), 8)


def _band_colours(base_f, fog, w0, w1, band_inks, style, supersample):
    """``(rgb, keep)``: the shaded colour of each band (rows, bands, 3) and which bands are
    drawn (a thin stick is one band in the one-band shade)."""
    nb = band_inks.shape[1]
    colours = base_f.astype(np.float64)
    rgb = np.clip(np.rint(colours[:, None, :] * band_inks[fog][:, :, None]), 0, 255).astype(
        np.int64
    )
    keep = np.ones((colours.shape[0], nb), dtype=bool)
    if nb > 1:
        # Thin sticks (half-width under THIN_STICK_PX final pixels) show no visible banding:
        # draw them as one full-width polygon in the one-band shade (saves a third of the
        # drawing time of a whole-pocket view; close-ups keep their bands).
        thin = np.maximum(w0, w1) / float(supersample) < THIN_STICK_PX
        if thin.any():
            _, single_inks = band_table(1, float(style.fog))
            rgb[thin, 0] = np.clip(
                np.rint(colours[thin] * single_inks[fog[thin], 0][:, None]), 0, 255
            )
            keep[thin, 1:] = False
    return rgb, keep
