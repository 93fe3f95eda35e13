"""Bonds whose existence depends on where a rotatable hydrogen (OH, SH, NH3+) was modelled: each
such donor's hydrogens are turned about the bond to its heavy neighbour and the bonds of both
H-bond modes recomputed (``rotamer_sensitive``; the audit reports them).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..core.records import Complex
from .hbonds import (
    DEFAULT_HBOND_MODE,
    HBond,
    check_mode,
    chimerax_graph,
    chimerax_hydrogens,
    detect_chimerax_hbonds,
    detect_plip_hbonds,
)

#: Rotations (degrees) tried for a rotatable hydrogen by ``rotamer_sensitive``.
ROTAMER_STEPS = tuple(range(0, 360, 30))


def rotatable_donors(cx: Complex, h_parent: np.ndarray) -> list[int]:
    """Donors whose hydrogens turn about a single bond: O or S with one heavy neighbour (OH, SH,
    phenol OH) and N with one heavy neighbour and three hydrogens (NH3+), that carry explicit
    hydrogens in ``h_parent``."""
    heavy_deg = (
        np.bincount(cx.bonds.ravel(), minlength=cx.n_atoms)
        if len(cx.bonds)
        else np.zeros(cx.n_atoms, int)
    )
    h_deg = (
        np.bincount(h_parent, minlength=cx.n_atoms) if len(h_parent) else np.zeros(cx.n_atoms, int)
    )
    out = []
    for k in np.flatnonzero(h_deg > 0):
        el = cx.elements[k]
        if heavy_deg[k] == 1 and (el in ("O", "S") or (el == "N" and h_deg[k] == 3)):
            out.append(int(k))
    return out


def rotamer_sensitive(cx: Complex, mode: str = DEFAULT_HBOND_MODE) -> tuple[set, set]:
    """Bonds whose existence depends on where a rotatable hydrogen (OH, SH, NH3+) was modelled:
    (bonds found that vanish, bonds not found that appear) when each such donor's hydrogens are
    turned to its best rotamer, the rotation about the bond to its heavy neighbour (in
    ``ROTAMER_STEPS``) that gives it the most bonds (the modelled one on ties). Items are
    ``HBond.pocket_text()`` strings. Only donors with input hydrogens count: without them
    neither mode uses hydrogen directions of rotors."""
    check_mode(mode)
    if mode == "chimerax":
        h_coords, h_parent = chimerax_hydrogens(cx)
    else:
        h_coords, h_parent = cx.h_coords, cx.h_parent
    rotors = [d for d in rotatable_donors(cx, h_parent) if mode == "chimerax" or cx.is_donor[d]]
    if not rotors:
        return set(), set()
    nbr = {int(a): int(b) for a, b in cx.bonds} | {int(b): int(a) for a, b in cx.bonds}
    per_angle: list[dict[int, set[str]]] = []
    for step in ROTAMER_STEPS:
        coords = h_coords.copy()
        for d in rotors:
            axis_from, axis_to = cx.coords[nbr[d]], cx.coords[d]
            rows = np.flatnonzero(h_parent == d)
            coords[rows] = _rotate(coords[rows], axis_from, axis_to, step)
        bonds = _bonds_with_hydrogens(cx, mode, coords, h_parent)
        per_donor: dict[int, set[str]] = {d: set() for d in rotors}
        for b in bonds:
            donor = b.protein_atom if b.donor_side == "protein" else b.ligand_atom
            if donor in per_donor:
                per_donor[donor].add(b.pocket_text())
        per_angle.append(per_donor)
    vanish, appear = set(), set()
    for d in rotors:
        counts = [len(a[d]) for a in per_angle]
        best = per_angle[int(np.argmax(counts))][d]
        now = per_angle[0][d]
        vanish |= now - best
        appear |= best - now
    return vanish, appear


def _rotate(points: np.ndarray, a: np.ndarray, b: np.ndarray, degrees: float) -> np.ndarray:
    """``points`` turned by ``degrees`` about the axis through ``a`` and ``b`` (Rodrigues)."""
    if not degrees or not len(points):
        return points
    k = (b - a) / np.linalg.norm(b - a)
    t = np.radians(degrees)
    v = points - b
    rot = v * np.cos(t) + np.cross(k, v) * np.sin(t) + np.outer(v @ k, k) * (1 - np.cos(t))
    return rot + b


def _bonds_with_hydrogens(
    cx: Complex, mode: str, h_coords: np.ndarray, h_parent: np.ndarray
) -> tuple[HBond, ...]:
    if mode == "chimerax":
        return detect_chimerax_hbonds(cx, chimerax_graph(cx, h_coords, h_parent))
    return detect_plip_hbonds(dataclasses.replace(cx, h_coords=h_coords, h_parent=h_parent))
