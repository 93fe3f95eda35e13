"""Geometric hydrogen-bond detection between pocket residues and the ligand (SPEC section 3).

Definition (documented in the dataset card too):

* Donors and acceptors come from the ``Complex`` record: protein atoms from the per-residue
  table (``hbond_typing.protein_polarity``), ligand atoms from the ligand's chemistry
  (``hbond_typing.ligand_polarity``).
* Distance: donor-acceptor heavy-atom distance at most ``MAX_DISTANCE`` = 3.5 + 0.4 Å (the
  Mills & Dean survey value with the paper's 0.4 Å relaxation).
* Angles, where the donor's hydrogens are known from the input *and* fixed by the donor's
  geometry (N-H, i.e. not a rotatable hydroxyl, thiol or ammonium group): the best D-H...A angle
  must be at least 120 - 20 = 100 degrees.
* Otherwise (no hydrogens, or rotatable ones whose positions the input only guessed): every angle
  between a heavy-atom neighbour of the donor, the donor and the acceptor, and every angle
  between a heavy-atom neighbour of the acceptor, the acceptor and the donor, must be at least
  90 - 20 = 70 degrees.

Why this differs from ChimeraX's finder: ChimeraX uses per-atom-type angle tables and adds
hydrogens itself; we use one distance and the two angle tests above. ``builder.scripts.hbond_report``
measures the agreement with PLIP (an independent implementation) on the sample complexes.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.records import Complex

MAX_DISTANCE = 3.5 + 0.4
MIN_DHA_ANGLE = 120.0 - 20.0
MIN_NEIGHBOUR_ANGLE = 90.0 - 20.0


@dataclass(frozen=True, order=True)
class HBond:
    """One protein-ligand hydrogen bond. Sort order is the canonical answer order:
    chain, residue number, insertion code, protein atom name, ligand atom name."""

    chain: str
    res_number: int
    ins_code: str
    protein_atom_name: str
    ligand_atom_name: str
    res_name: str
    protein_atom: int
    ligand_atom: int
    donor_side: str  # "protein" or "ligand"
    distance: float

    def pocket_text(self) -> str:
        """``RES NUM ATOM CHAIN, LIGATOM`` (T9, T8)."""
        return f"{self.res_name} {self.res_number}{self.ins_code} {self.protein_atom_name} {self.chain}, {self.ligand_atom_name}"

    def residue_text(self) -> str:
        """``RES ATOM, LIGATOM`` (T4)."""
        return f"{self.res_name} {self.protein_atom_name}, {self.ligand_atom_name}"


def format_pocket_answer(bonds: list[HBond] | tuple[HBond, ...]) -> str:
    """T9 answer: every bond in canonical order, ``; ``-separated, or ``None``."""
    return "; ".join(b.pocket_text() for b in sorted(bonds)) if bonds else "None"


def format_residue_answer(bonds: list[HBond] | tuple[HBond, ...]) -> str:
    """T4 answer: ``No`` or ``Yes: RES ATOM, LIGATOM; ...`` in canonical order."""
    return "Yes: " + "; ".join(b.residue_text() for b in sorted(bonds)) if bonds else "No"


def _angle(a: np.ndarray, vertex: np.ndarray, b: np.ndarray) -> float:
    u, v = a - vertex, b - vertex
    denom = float(np.linalg.norm(u) * np.linalg.norm(v))
    if denom == 0.0:
        return 180.0
    return float(np.degrees(np.arccos(np.clip(np.dot(u, v) / denom, -1.0, 1.0))))


def _neighbours(cx: Complex) -> list[list[int]]:
    nbrs: list[list[int]] = [[] for _ in range(cx.n_atoms)]
    for a, b in cx.bonds:
        nbrs[int(a)].append(int(b))
        nbrs[int(b)].append(int(a))
    return nbrs


_PLANAR_PROTEIN_NH2 = frozenset({"ND2", "NE2", "NH1", "NH2"})


def _hydrogens_fixed(cx: Complex, donor: int, nbrs: list[list[int]], sp2: np.ndarray) -> bool:
    """True when the donor's hydrogen positions follow from its heavy-atom frame: an N with two
    or more heavy neighbours, or a planar NH2 (amide, guanidine, aniline-like: its neighbour is
    sp2). False for rotatable groups (OH, SH, NH3+, sp3 NH2), whose input H positions are guesses."""
    if cx.elements[donor] != "N":
        return False
    if len(nbrs[donor]) >= 2:
        return True
    if not cx.is_ligand[donor]:
        return str(cx.atom_names[donor]) in _PLANAR_PROTEIN_NH2
    return any(sp2[n] for n in nbrs[donor])


def detect_hbonds(cx: Complex, max_distance: float = MAX_DISTANCE, min_dha: float = MIN_DHA_ANGLE,
                  min_neighbour_angle: float = MIN_NEIGHBOUR_ANGLE) -> tuple[HBond, ...]:
    """All pocket-ligand hydrogen bonds of ``cx`` in canonical order (see module docstring)."""
    lig = cx.ligand_indices
    pocket = cx.pocket_indices
    if not len(lig) or not len(pocket):
        return ()
    nbrs = _neighbours(cx)
    sp2 = np.zeros(cx.n_atoms, dtype=bool)  # atoms with a double, triple or aromatic bond
    multiple = cx.bond_orders > 1
    sp2[cx.bonds[multiple].ravel()] = True
    h_of: dict[int, list[int]] = {}
    for k, parent in enumerate(cx.h_parent):
        h_of.setdefault(int(parent), []).append(k)
    found: list[HBond] = []
    for side, donors, acceptors in (("protein", pocket[cx.is_donor[pocket]], lig[cx.is_acceptor[lig]]),
                                    ("ligand", lig[cx.is_donor[lig]], pocket[cx.is_acceptor[pocket]])):
        if not len(donors) or not len(acceptors):
            continue
        d = np.linalg.norm(cx.coords[donors][:, None] - cx.coords[acceptors][None], axis=2)
        for i, j in zip(*np.nonzero(d <= max_distance)):
            don, acc = int(donors[i]), int(acceptors[j])
            if not _geometry_ok(cx, don, acc, nbrs, sp2, h_of, min_dha, min_neighbour_angle):
                continue
            prot, ligand_atom = (don, acc) if side == "protein" else (acc, don)
            res = cx.residues[int(cx.residue_index[prot])]
            found.append(HBond(res.chain, res.number, res.ins_code, str(cx.atom_names[prot]),
                               str(cx.atom_names[ligand_atom]), res.name, prot, ligand_atom, side,
                               round(float(d[i, j]), 3)))
    # an atom pair can be both donor->acceptor and acceptor->donor (e.g. SER OG with a ligand OH)
    unique = {(b.protein_atom, b.ligand_atom): b for b in sorted(found, key=lambda b: b.distance, reverse=True)}
    return tuple(sorted(unique.values()))


def _geometry_ok(cx: Complex, don: int, acc: int, nbrs: list[list[int]], sp2: np.ndarray, h_of: dict[int, list[int]],
                 min_dha: float, min_neighbour_angle: float) -> bool:
    pd, pa = cx.coords[don], cx.coords[acc]
    hydrogens = h_of.get(don, [])
    if hydrogens and _hydrogens_fixed(cx, don, nbrs, sp2):
        return max(_angle(pd, cx.h_coords[h], pa) for h in hydrogens) >= min_dha
    if any(_angle(cx.coords[n], pd, pa) < min_neighbour_angle for n in nbrs[don]):
        return False
    return all(_angle(cx.coords[n], pa, pd) >= min_neighbour_angle for n in nbrs[acc])
