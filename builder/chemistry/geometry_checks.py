"""Sanity of a complex's coordinates once the pocket is cut: a broken coordinate refuses the
complex (an ``InputError`` naming the atom), so a build skips it with the reason instead of
drawing blank pictures or failing later.

* Every ligand coordinate (heavy atoms and hydrogens) is a finite number.
* No ligand bond is longer than ``MAX_BOND_LENGTH`` Å (a hydrogen counts as bonded to its
  parent), and no ligand atom is farther than ``MAX_LIGAND_GAP`` Å from every other ligand atom:
  one atom moved far away is caught whether or not the file bonds it.
* Every pocket atom is within ``cutoff + MAX_RESIDUE_REACH`` Å of the ligand: a pocket residue
  has an atom within the cutoff, and no amino acid spans more than ``MAX_RESIDUE_REACH``.
"""

from __future__ import annotations

import numpy as np

from ..core.errors import InputError

#: Longest covalent bond accepted in a ligand (Å; real ones are under 2.5 Å, metal-ligand
#: bonds included).
MAX_BOND_LENGTH = 4.0
#: Largest distance (Å) from a ligand atom to its nearest ligand neighbour.
MAX_LIGAND_GAP = 10.0
#: Largest distance (Å) between two atoms of one amino acid residue, with margin (ARG, LYS and
#: TRP span about 9 Å).
MAX_RESIDUE_REACH = 15.0


def check_ligand(location: str, names: list[str], coords, bonds, h_coords, h_parent) -> None:
    """Refuse ligand coordinates that are not numbers, over-long bonds and far-away atoms."""
    coords = np.asarray(coords, dtype=np.float64).reshape(-1, 3)
    bad = np.flatnonzero(~np.isfinite(coords).all(axis=1))
    if len(bad):
        raise InputError(
            location, f"ligand atom {names[bad[0]]} has a coordinate that is not a number"
        )
    h_coords = np.asarray(h_coords, dtype=np.float64).reshape(-1, 3)
    h_parent = np.asarray(h_parent, dtype=np.int64)
    bad = np.flatnonzero(~np.isfinite(h_coords).all(axis=1))
    if len(bad):
        raise InputError(
            location,
            f"a hydrogen of ligand atom {names[h_parent[bad[0]]]} has a coordinate that is not a number",
        )
    bonds = np.asarray(bonds, dtype=np.int64).reshape(-1, 2)
    if len(bonds):
        length = np.linalg.norm(coords[bonds[:, 0]] - coords[bonds[:, 1]], axis=1)
        k = int(length.argmax())
        if length[k] > MAX_BOND_LENGTH:
            a, b = bonds[k]
            raise InputError(
                location,
                f"ligand bond {names[a]}-{names[b]} is {length[k]:.4g} Å long "
                f"(> {MAX_BOND_LENGTH:g} Å): broken coordinates",
            )
    if len(h_parent):
        length = np.linalg.norm(h_coords - coords[h_parent], axis=1)
        k = int(length.argmax())
        if length[k] > MAX_BOND_LENGTH:
            raise InputError(
                location,
                f"a hydrogen of ligand atom {names[h_parent[k]]} is {length[k]:.4g} Å from it "
                f"(> {MAX_BOND_LENGTH:g} Å): broken coordinates",
            )
    if len(coords) > 1:
        d = np.linalg.norm(coords[:, None] - coords[None], axis=2)
        np.fill_diagonal(d, np.inf)
        nearest = d.min(axis=1)
        k = int(nearest.argmax())
        if nearest[k] > MAX_LIGAND_GAP:
            raise InputError(
                location,
                f"ligand atom {names[k]} is {nearest[k]:.4g} Å from every other ligand atom "
                f"(> {MAX_LIGAND_GAP:g} Å): broken coordinates",
            )


def check_pocket(location: str, pocket_xyz, lig_xyz, cutoff: float, describe) -> None:
    """Refuse a pocket atom farther than ``cutoff + MAX_RESIDUE_REACH`` Å from the ligand
    (``describe(k)`` names pocket atom ``k``)."""
    pocket_xyz = np.asarray(pocket_xyz, dtype=np.float64).reshape(-1, 3)
    if not len(pocket_xyz):
        return
    reach = cutoff + MAX_RESIDUE_REACH
    lo, hi = lig_xyz.min(axis=0) - reach, lig_xyz.max(axis=0) + reach
    outside = np.flatnonzero(~((pocket_xyz >= lo) & (pocket_xyz <= hi)).all(axis=1))
    for k in outside[:1]:
        d = float(np.linalg.norm(lig_xyz - pocket_xyz[k], axis=1).min())
        raise InputError(
            location,
            f"pocket atom {describe(int(k))} is {d:.4g} Å from the nearest ligand atom "
            f"(a residue within {cutoff:g} Å cannot reach past {reach:g} Å): broken coordinates",
        )
    for start in range(0, len(pocket_xyz), 4096):
        part = pocket_xyz[start : start + 4096]
        d = np.sqrt(((part[:, None] - lig_xyz[None]) ** 2).sum(axis=2)).min(axis=1)
        far = np.flatnonzero(d > reach)
        if len(far):
            k = start + int(far[0])
            raise InputError(
                location,
                f"pocket atom {describe(k)} is {d[far[0]]:.4g} Å from the nearest ligand atom "
                f"(a residue within {cutoff:g} Å cannot reach past {reach:g} Å): broken coordinates",
            )
