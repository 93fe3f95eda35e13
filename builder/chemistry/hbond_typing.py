"""Donor and acceptor typing of complex atoms for the hydrogen-bond detector (``hbonds``).

Protein atoms from a per-residue table (SPEC section 3); ligand atoms from their chemistry.
"""
from __future__ import annotations

import numpy as np

from .ligand import LigandData

# Protein donor/acceptor table (SPEC section 3): (residue or '*', atom) -> (donor, acceptor).
_PROTEIN_POLAR: dict[tuple[str, str], tuple[bool, bool]] = {
    ("*", "N"): (True, False),
    ("PRO", "N"): (False, False),
    ("*", "O"): (False, True),
    ("*", "OXT"): (False, True),
    ("SER", "OG"): (True, True),
    ("THR", "OG1"): (True, True),
    ("TYR", "OH"): (True, True),
    ("ASN", "OD1"): (False, True),
    ("GLN", "OE1"): (False, True),
    ("ASN", "ND2"): (True, False),
    ("GLN", "NE2"): (True, False),
    ("HIS", "ND1"): (True, True),
    ("HIS", "NE2"): (True, True),
    ("LYS", "NZ"): (True, False),
    ("ARG", "NE"): (True, False),
    ("ARG", "NH1"): (True, False),
    ("ARG", "NH2"): (True, False),
    ("TRP", "NE1"): (True, False),
    ("ASP", "OD1"): (False, True),
    ("ASP", "OD2"): (False, True),
    ("GLU", "OE1"): (False, True),
    ("GLU", "OE2"): (False, True),
    ("CYS", "SG"): (True, False),
    ("MET", "SD"): (False, True),
}


def protein_polarity(res_name: str, atom_name: str) -> tuple[bool, bool]:
    """(is_donor, is_acceptor) of a protein heavy atom from the per-residue table."""
    key = (res_name, atom_name)
    if key in _PROTEIN_POLAR:
        return _PROTEIN_POLAR[key]
    return _PROTEIN_POLAR.get(("*", atom_name), (False, False))


def ligand_polarity(lig: LigandData) -> tuple[np.ndarray, np.ndarray]:
    """(is_donor, is_acceptor) of ligand heavy atoms from their chemistry (SPEC section 3).

    Donors: N or O carrying at least one hydrogen (explicit or implied). Acceptors: O with
    charge <= 0; N with a lone pair, i.e. not positively charged, not an amide/sulfonamide N
    (bonded to a C or S that has a double bond to O/S), not an aromatic N carrying an H or
    three connections, not a four-connected N.
    """
    n = len(lig.elements)
    donor = np.zeros(n, dtype=bool)
    acceptor = np.zeros(n, dtype=bool)
    neighbours: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for (a, b), order in zip(lig.bonds, lig.orders):
        neighbours[a].append((int(b), int(order)))
        neighbours[b].append((int(a), int(order)))
    for i, el in enumerate(lig.elements):
        if el not in ("N", "O"):
            continue
        n_h = int(lig.n_hydrogens[i])
        donor[i] = n_h > 0
        q = int(lig.charges[i])
        if el == "O":
            acceptor[i] = q <= 0
            continue
        connections = len(neighbours[i]) + n_h
        if q > 0 or connections >= 4:
            continue
        if lig.aromatic[i] and (n_h > 0 or len(neighbours[i]) >= 3):
            continue
        if any(order in (2, 3) for _, order in neighbours[i]) or lig.aromatic[i]:
            acceptor[i] = True
            continue
        amide = any(
            lig.elements[j] in ("C", "S") and any(
                lig.elements[k] in ("O", "S") and order == 2 for k, order in neighbours[j] if k != i)
            for j, _ in neighbours[i])
        acceptor[i] = not amide
    return donor, acceptor
