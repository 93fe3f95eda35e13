"""IDATM-style atom types for the ``chimerax`` hydrogen-bond mode (``mills_dean``).

ChimeraX's ``hbonds`` picks each atom's donor/acceptor class from its IDATM type (Meng & Lewis
1991, as ChimeraX assigns it) and its neighbours. We assign the same type names ourselves:

* protein atoms from residue templates (``PROTEIN_TYPES`` below, one entry per standard residue
  atom; a residue or atom missing from the table is bad input). Histidine ring N are both
  ``Npl`` whatever hydrogens the input has, as ChimeraX's HIS template types them (a ring N
  without a hydrogen is then both a ring-N acceptor and a donor with an inferred H). A segment's
  first N (no peptide bond to a preceding residue, e.g. where the pocket cuts the chain) is
  ``N3+``, as the template's terminal-N condition makes it (``hbonds.chimerax_graph``);
* ligand atoms from the ligand's RDKit chemistry (elements, bond orders, aromaticity, formal
  charges, hydrogen counts) with the rules of ``ligand_types``. Amidine/guanidine N are ``Ng+``
  whatever tautomer the file draws (docs/spec.md section 3).

Where we differ from ChimeraX's typing (documented in docs/hbonds.md): ChimeraX infers types
from geometry and connectivity when a residue has no template; we use the ligand's bond orders,
which the SDF/MOL2 state. Sulfonamide and phosphoramide N bonded only to tetrahedral atoms are
``N3`` (ChimeraX may call a flat one ``Npl``).
"""

from __future__ import annotations

import numpy as np

from ..core.errors import InputError

TETRAHEDRAL, PLANAR, LINEAR, SINGLE = 4, 3, 2, 1

#: type -> (geometry, substituents), as in ChimeraX's IDATM type table.
TYPE_INFO: dict[str, tuple[int, int]] = {
    "C3": (4, 4),
    "C2": (3, 3),
    "Car": (3, 3),
    "Cac": (3, 3),
    "C1": (2, 2),
    "N3": (4, 3),
    "N3+": (4, 4),
    "Npl": (3, 3),
    "N2": (3, 2),
    "N2+": (3, 3),
    "Ng+": (3, 3),
    "Ntr": (3, 3),
    "N1": (2, 1),
    "O3": (4, 2),
    "O2": (3, 1),
    "O3-": (4, 1),
    "O2-": (3, 1),
    "Oar": (3, 2),
    "S3": (4, 2),
    "S2": (3, 1),
    "S3-": (4, 1),
    "Sar": (3, 2),
    "Sac": (4, 4),
    "Son": (4, 4),
    "Sxd": (4, 3),
    "Pac": (4, 4),
    "Pox": (4, 4),
    "P": (4, 4),
    "F": (1, 1),
    "Cl": (1, 1),
    "Br": (1, 1),
    "I": (1, 1),
    "H": (1, 1),
}


def geometry(atom_type: str) -> int:
    """Geometry of a type (4 tetrahedral, 3 planar, 2 linear, 1 single; 0 unknown, e.g. metals)."""
    return TYPE_INFO.get(atom_type, (0, 0))[0]


def substituents(atom_type: str) -> int:
    return TYPE_INFO.get(atom_type, (0, 0))[1]


_BACKBONE = {"N": ("Npl", 1), "CA": ("C3", 0), "C": ("C2", 0), "O": ("O2", 0), "OXT": ("O2-", 0)}
_C3 = ("C3", 0)
_CAR = ("Car", 0)
#: residue -> atom -> (type, hydrogens the atom carries when the input has none).
PROTEIN_TYPES: dict[str, dict[str, tuple[str, int]]] = {
    "ALA": {"CB": _C3},
    "ARG": {
        "CB": _C3,
        "CG": _C3,
        "CD": _C3,
        "NE": ("Ng+", 1),
        "CZ": ("C2", 0),
        "NH1": ("Ng+", 2),
        "NH2": ("Ng+", 2),
    },
    "ASN": {"CB": _C3, "CG": ("C2", 0), "OD1": ("O2", 0), "ND2": ("Npl", 2)},
    "ASP": {"CB": _C3, "CG": ("Cac", 0), "OD1": ("O2-", 0), "OD2": ("O2-", 0)},
    "CYS": {"CB": _C3, "SG": ("S3", 1)},
    "GLN": {"CB": _C3, "CG": _C3, "CD": ("C2", 0), "OE1": ("O2", 0), "NE2": ("Npl", 2)},
    "GLU": {"CB": _C3, "CG": _C3, "CD": ("Cac", 0), "OE1": ("O2-", 0), "OE2": ("O2-", 0)},
    "GLY": {},
    "HIS": {"CB": _C3, "CG": _CAR, "ND1": ("Npl", 0), "CD2": _CAR, "CE1": _CAR, "NE2": ("Npl", 0)},
    "ILE": {"CB": _C3, "CG1": _C3, "CG2": _C3, "CD1": _C3, "CD": _C3},
    "LEU": {"CB": _C3, "CG": _C3, "CD1": _C3, "CD2": _C3},
    "LYS": {"CB": _C3, "CG": _C3, "CD": _C3, "CE": _C3, "NZ": ("N3+", 3)},
    "MET": {"CB": _C3, "CG": _C3, "SD": ("S3", 0), "CE": _C3},
    "PHE": {"CB": _C3, "CG": _CAR, "CD1": _CAR, "CD2": _CAR, "CE1": _CAR, "CE2": _CAR, "CZ": _CAR},
    "PRO": {"CB": _C3, "CG": _C3, "CD": _C3},
    "SER": {"CB": _C3, "OG": ("O3", 1)},
    "THR": {"CB": _C3, "OG1": ("O3", 1), "CG2": _C3},
    "TRP": {
        "CB": _C3,
        "CG": _CAR,
        "CD1": _CAR,
        "CD2": _CAR,
        "NE1": ("Npl", 1),
        "CE2": _CAR,
        "CE3": _CAR,
        "CZ2": _CAR,
        "CZ3": _CAR,
        "CH2": _CAR,
    },
    "TYR": {
        "CB": _C3,
        "CG": _CAR,
        "CD1": _CAR,
        "CD2": _CAR,
        "CE1": _CAR,
        "CE2": _CAR,
        "CZ": _CAR,
        "OH": ("O3", 1),
    },
    "VAL": {"CB": _C3, "CG1": _C3, "CG2": _C3},
}


def protein_type(
    res_name: str,
    atom_name: str,
    n_input_h: int | None,
    has_oxt: bool = False,
    source: object = "protein",
) -> tuple[str, int]:
    """(IDATM type, hydrogen count) of a protein heavy atom from the residue templates.

    ``n_input_h``: hydrogens the input puts on this atom, or None when the input has none on the
    residue (then the template's count is used). Raises ``InputError`` (naming ``source``) for a
    residue or atom without a template."""
    table = PROTEIN_TYPES.get(res_name)
    if table is None:
        raise InputError(
            source, f"residue {res_name} has no atom-type template (chimerax H-bond mode)"
        )
    if atom_name in _BACKBONE:
        kind, n_h = _BACKBONE[atom_name]
        if res_name == "PRO" and atom_name == "N":
            n_h = 0
        if has_oxt and atom_name == "C":
            kind = "Cac"
        elif has_oxt and atom_name == "O":
            kind = "O2-"
    elif atom_name in table:
        kind, n_h = table[atom_name]
    else:
        raise InputError(
            source, f"atom {atom_name} of residue {res_name} is not in its atom-type template"
        )
    return kind, (n_input_h if n_input_h is not None else n_h)


def ligand_types(
    elements,
    charges,
    bonds,
    orders,
    n_hydrogens,
    aromatic,
    amidine_n: set[int] | frozenset = frozenset(),
) -> list[str]:
    """IDATM-style types of ligand heavy atoms from their chemistry (see the module docstring).

    ``bonds``/``orders``: heavy-atom bonds with orders 1-3, 4 aromatic. ``amidine_n``: N atoms of
    amidine/guanidine groups (typed ``Ng+``)."""
    n = len(elements)
    nbrs: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for (a, b), o in zip(np.asarray(bonds).reshape(-1, 2), orders):
        nbrs[int(a)].append((int(b), int(o)))
        nbrs[int(b)].append((int(a), int(o)))

    def terminal_o(i: int) -> list[int]:
        return [j for j, _ in nbrs[i] if elements[j] == "O" and len(nbrs[j]) == 1]

    types: list[str] = []
    for i in range(n):
        el, q, arom = elements[i], int(charges[i]), bool(aromatic[i])
        ords = [o for _, o in nbrs[i]]
        n_heavy = len(nbrs[i])
        unsat = any(o in (2, 3, 4) for o in ords)
        if el == "C":
            if arom:
                t = "Car"
            elif 3 in ords or ords.count(2) >= 2:
                t = "C1"
            elif len(terminal_o(i)) == 2 and n_heavy <= 3 and unsat:
                t = "Cac"
            else:
                t = "C2" if unsat else "C3"
        elif el == "N":
            n_o = terminal_o(i)
            if arom:
                t = "Npl" if n_heavy >= 3 or n_hydrogens[i] > 0 else "N2"
            elif i in amidine_n:
                t = "Ng+"
            elif len(n_o) >= 2 and n_hydrogens[i] == 0:
                t = "Ntr"
            elif 3 in ords:
                t = "N1"
            elif 2 in ords:
                t = "N2+" if q > 0 and n_heavy + n_hydrogens[i] >= 3 else "N2"
            elif n_heavy + n_hydrogens[i] >= 4 or q > 0 and n_heavy == 4:
                t = "N3+"
            elif any(_is_planar_neighbour(j, i, elements, nbrs, aromatic) for j, _ in nbrs[i]):
                t = "Npl"
            else:
                t = "N3"
        elif el == "O":
            t = _oxygen_type(i, elements, nbrs, n_hydrogens, arom, q, terminal_o)
        elif el == "S":
            n_o = len(terminal_o(i))
            if arom:
                t = "Sar"
            elif n_heavy == 1 and 2 in ords:
                t = "S2"
            elif q < 0 and n_heavy == 1:
                t = "S3-"
            elif n_o >= 3:
                t = "Sac"
            elif n_o == 2:
                t = "Son"
            elif n_o == 1 and n_heavy >= 3:
                t = "Sxd"
            else:
                t = "S3"
        elif el == "P":
            n_o = len(terminal_o(i))
            t = "Pac" if n_o >= 2 else ("Pox" if n_o == 1 else "P")
        else:
            t = el
        types.append(t)
    return types


#: a terminal P-O at least this much longer (Å) than the P's other terminal P-O bonds is an OH
#: (ChimeraX's atom typing, AtomTypes.cpp: "if this bond is 0.05 A longer than the other P-O
#: bonds, assume OH")
PHOSPHATE_OH_EXCESS = 0.05


def phosphate_hydroxyls(types, elements, coords, bonds, h_count, h_parent) -> list[int]:
    """Terminal O on a ``Pac`` that ChimeraX types ``O3`` (a P-OH) rather than ``O3-``.

    ChimeraX: where a P carries at least three terminal O (one bonded atom, a hydrogen counting
    as one, so an O with a hydrogen is not terminal), an O whose P-O bond is at least
    ``PHOSPHATE_OH_EXCESS`` longer than each of the P's other terminal P-O bonds is an OH.
    ``h_count``: hydrogens per atom (explicit or counted); ``h_parent``: the explicit ones'
    parents. Returns the indices of the O3- atoms to retype, in index order."""
    pac = np.flatnonzero(np.asarray(types) == "Pac")
    if not len(pac):
        return []
    coords = np.asarray(coords, dtype=np.float64).reshape(-1, 3)
    bonds = np.asarray(bonds, dtype=np.int64).reshape(-1, 2)
    degree = np.bincount(bonds.ravel(), minlength=len(types))
    hydrogens = np.asarray(h_count, dtype=np.int64).copy()
    hydrogens[np.asarray(h_parent, dtype=np.int64)] += 1
    out = []
    for p in pac:
        rows = bonds[(bonds == p).any(axis=1)]
        terminal = [
            int(k)
            for k in rows[rows != p]
            if elements[k] == "O" and degree[k] == 1 and not hydrogens[k]
        ]
        if len(terminal) < 3:
            continue
        length = {k: float(np.linalg.norm(coords[k] - coords[p])) for k in terminal}
        for k in terminal:
            if types[k] == "O3-" and all(
                length[k] >= length[m] + PHOSPHATE_OH_EXCESS for m in terminal if m != k
            ):
                out.append(k)
    return sorted(out)


def _is_planar_neighbour(j: int, i: int, elements, nbrs, aromatic) -> bool:
    """True when neighbour ``j`` of N ``i`` is sp2/aromatic (conjugation makes the N planar)."""
    if aromatic[j]:
        return True
    return elements[j] in ("C", "N") and any(o in (2, 4) for k, o in nbrs[j] if k != i)


def _oxygen_type(i, elements, nbrs, n_hydrogens, arom, q, terminal_o) -> str:
    if arom:
        return "Oar"
    if len(nbrs[i]) != 1:
        return "O3"
    j, order = nbrs[i][0]
    partner = elements[j]
    n_o = len(terminal_o(j))
    if partner == "P" and n_o >= 2:
        return "O3" if n_hydrogens[i] else "O3-"
    if partner == "S" and n_o >= 3:
        return "O3" if n_hydrogens[i] else "O3-"
    if partner == "S" or partner == "P":
        return "O2"
    if partner == "N" and n_o >= 2:
        return "O2-"
    if (
        partner == "C"
        and n_o == 2
        and not n_hydrogens[i]
        and not any(n_hydrogens[k] for k in terminal_o(j))
    ):
        return "O2-"  # carboxylate
    if order == 2:
        return "O2"
    if q < 0:
        return "O3-"
    return "O3"
