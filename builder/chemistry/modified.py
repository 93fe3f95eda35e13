"""Modified amino acids inside a chain (MSE, PTR, SEP, TPO, CSO, IIL ...): which stay in the pocket,
and the IDATM-style types and donor/acceptor roles of their atoms.

A non-standard residue stays in the pocket, under its own name, when the PDB chemical component
dictionary (as bundled in biotite, :mod:`.ccd`) calls it a peptide-linking component whose
parent (``mon_nstd_parent_comp_id``) is one of the twenty standard amino acids, and every heavy
atom the input gives it is named in that component. Anything else that looks like an amino
acid (a peptide-linking component, or an unknown one with ``N``, ``CA`` and ``C``) is left out
with a WARNING naming it and the reason; cofactors and other hetero groups stay out as before
(counted in ``ReadReport.nonstandard_atoms``).

Typing (docs/hbonds.md, "Modified residues"): ChimeraX types a residue it has no built-in
template for from its chemistry, the component's connectivity; we do the same with the
component's own bonds, bond orders and hydrogens (``idatm.ligand_types``), as the residue sits
in a chain: ``OXT`` and one hydrogen of ``N`` leave (the peptide bonds), unless the input keeps
``OXT`` (a C-terminus). The backbone is typed as the parent's backbone (``N`` ``Npl``, ``CA``
``C3``, ``C`` ``C2``, ``O`` ``O2``; a segment's first ``N`` becomes ``N3+`` in
``hbonds._terminal_n_types`` as for any residue). Hydrogens: the input's on each atom where the
residue has any, else the component's in-chain count, with acid OH (phosphate, sulfate,
carboxylate) taken as deprotonated, as a crystal file without hydrogens shows them to ChimeraX
(its long-P-O rule then makes one phosphate O an OH again, ``idatm.phosphate_hydroxyls``); an
O that keeps a hydrogen is a hydroxyl ``O3`` (CSO's S-OH); carbons carry no hydrogen count, as
in the standard residues' templates.
The ``plip`` mode's roles follow from the same types: donors are N, O and S atoms with a
hydrogen; acceptors are O atoms, N without a hydrogen that is not ``N3+``/``Npl``, and S without
a hydrogen.
"""

from __future__ import annotations

import functools
import logging

import numpy as np

from .ccd import ccd_template
from .idatm import ligand_types

log = logging.getLogger(__name__)

#: CCD ``_chem_comp.type`` values of components that link into a peptide chain.
PEPTIDE_LINKING = frozenset(
    {"L-PEPTIDE LINKING", "D-PEPTIDE LINKING", "PEPTIDE LINKING", "L-PEPTIDE NH3 AMINO TERMINUS"}
)
#: The twenty standard amino acids (the parents a kept modified residue may have).
STANDARD_PARENTS = frozenset(
    "ALA ARG ASN ASP CYS GLN GLU GLY HIS ILE LEU LYS MET PHE PRO SER THR TRP TYR VAL".split()
)
#: Backbone atoms typed as the parent's backbone: (IDATM type, hydrogens in a chain).
_BACKBONE = {"CA": "C3", "C": "C2", "O": "O2"}


@functools.lru_cache(maxsize=2048)
def _ccd_text(category: str, code: str, column: str) -> str:
    """One text field of CCD component ``code`` ('' when biotite or the field is unavailable)."""
    try:
        import biotite.structure.info as info  # noqa: PLC0415

        field = info.get_from_ccd(category, code, column)
        values = field.as_array() if hasattr(field, "as_array") else field
        value = str(np.asarray(values).ravel()[0]) if values is not None else ""
    except Exception as exc:  # biotite missing, unknown code or field: the residue stays out
        log.debug("no CCD %s.%s for %s: %s", category, column, code, exc)
        return ""
    return "" if value in ("?", ".") else value.strip().upper()


@functools.lru_cache(maxsize=512)
def parent_of(code: str) -> str:
    """The standard parent of a peptide-linking CCD component (``MSE`` -> ``MET``), '' when
    ``code`` is no such component (a cofactor, a ligand, an unknown code)."""
    if _ccd_text("chem_comp", code, "type") not in PEPTIDE_LINKING:
        return ""
    parent = _ccd_text("chem_comp", code, "mon_nstd_parent_comp_id")
    return parent if parent in STANDARD_PARENTS else ""


def keep_reason(code: str, heavy_names: list[str]) -> str:
    """'' when a non-standard residue ``code`` with these heavy atom names stays in the pocket,
    else why not (one phrase). Only asked of residues that look like amino acids."""
    parent = parent_of(code)
    if not parent:
        return "no standard parent amino acid in the chemical component dictionary"
    template = ccd_template(code)
    if template is None:
        return "no chemical component template"
    missing = sorted(set(heavy_names) - set(template["names"]))
    if missing:
        return f"atoms {', '.join(missing)} are not in component {code}"
    return ""


def looks_like_amino_acid(code: str, heavy_names: list[str]) -> bool:
    """True for a peptide-linking component, or an unknown one with backbone N, CA and C."""
    if parent_of(code) or _ccd_text("chem_comp", code, "type") in PEPTIDE_LINKING:
        return True
    return {"N", "CA", "C"} <= set(heavy_names)


def _chain_chemistry(code: str, has_oxt: bool):
    """The component as it sits in a chain: (names, elements, charges, bonds, orders, aromatic,
    hydrogens per heavy atom), ``OXT`` dropped unless ``has_oxt`` and one H off ``N``."""
    from rdkit import Chem  # noqa: PLC0415

    t = ccd_template(code)
    keep = [k for k, n in enumerate(t["names"]) if has_oxt or n != "OXT"]
    new = {old: i for i, old in enumerate(keep)}
    names = [t["names"][k] for k in keep]
    elements = [t["elements"][k] for k in keep]
    charges = [int(t["charges"][k]) for k in keep]
    n_h = [int(t["n_h"][k]) for k in keep]
    if "N" in names and n_h[names.index("N")] > 0:
        n_h[names.index("N")] -= 1
    bonds = [(new[a], new[b], o) for a, b, o in t["bonds"] if a in new and b in new]
    kinds = {1: "SINGLE", 2: "DOUBLE", 3: "TRIPLE", 4: "AROMATIC"}
    rw = Chem.RWMol()
    for el, q, h in zip(elements, charges, n_h):
        atom = Chem.Atom(el)
        atom.SetFormalCharge(q)
        atom.SetNumExplicitHs(h)
        atom.SetNoImplicit(True)
        rw.AddAtom(atom)
    for a, b, o in bonds:
        rw.AddBond(a, b, getattr(Chem.BondType, kinds.get(o, "SINGLE")))
    mol = rw.GetMol()
    try:
        Chem.SanitizeMol(mol)
    except (ValueError, RuntimeError):
        mol.UpdatePropertyCache(strict=False)
    aromatic = [a.GetIsAromatic() for a in mol.GetAtoms()]
    orders = [4 if aromatic[a] and aromatic[b] and o != 1 else o for a, b, o in bonds]
    pairs = np.array([(a, b) for a, b, _ in bonds], dtype=np.int64).reshape(-1, 2)
    return names, elements, charges, pairs, orders, aromatic, n_h


def _acid_oxygens(elements, pairs) -> set[int]:
    """Terminal O of phosphate/sulfate (three or more terminal O on P/S) and carboxylate groups."""
    nbrs: list[list[int]] = [[] for _ in elements]
    for a, b in pairs.tolist():
        nbrs[a].append(b)
        nbrs[b].append(a)
    out: set[int] = set()
    for centre, el in enumerate(elements):
        terminal = [j for j in nbrs[centre] if elements[j] == "O" and len(nbrs[j]) == 1]
        if (el in ("P", "S") and len(terminal) >= 3) or (el == "C" and len(terminal) == 2):
            out.update(terminal)
    return out


def residue_types(
    code: str, atom_names: list[str], input_h: list[int | None]
) -> list[tuple[str, int]]:
    """(IDATM type, hydrogens) of each heavy atom of one kept modified residue, in the order of
    ``atom_names``. ``input_h``: hydrogens the input puts on each atom, None where the residue
    has none (see the module docstring)."""
    has_oxt = "OXT" in atom_names
    names, elements, charges, pairs, orders, aromatic, n_h = _chain_chemistry(code, has_oxt)
    with_input = any(h is not None for h in input_h)
    if with_input:
        given = dict(zip(atom_names, input_h))
        n_h = [int(given.get(n) or 0) if n in given else h for n, h in zip(names, n_h)]
    else:
        for i in _acid_oxygens(elements, pairs):
            n_h[i] = 0
    types = ligand_types(elements, charges, pairs, orders, n_h, aromatic)
    index = {n: i for i, n in enumerate(names)}
    out = []
    for name in atom_names:
        i = index[name]
        if name == "N":
            kind = "Npl"
        elif name in _BACKBONE and not (has_oxt and name in ("C", "O")):
            kind = _BACKBONE[name]
        elif elements[i] == "O" and kind_is_carbonyl(types[i]) and n_h[i]:
            kind = "O3"  # an O that carries a hydrogen is a hydroxyl (a sulfenic acid's S-OH)
        else:
            kind = types[i]
        out.append((kind, 0 if elements[i] == "C" else n_h[i]))
    return out


def kind_is_carbonyl(kind: str) -> bool:
    """True for the planar terminal-O types (``O2``, ``O2-``)."""
    return kind in ("O2", "O2-")


def residue_roles(
    elements: list[str], typed: list[tuple[str, int]]
) -> list[tuple[bool, bool, int]]:
    """(donor, acceptor, donor hydrogens) per atom of a kept modified residue for the ``plip``
    mode, from its ``residue_types`` (see the module docstring)."""
    out = []
    for el, (kind, n_h) in zip(elements, typed):
        donor = el in ("N", "O", "S") and n_h > 0
        acceptor = (
            el == "O"
            or (el == "N" and n_h == 0 and kind not in ("N3+", "Npl"))
            or (el == "S" and n_h == 0)
        )
        out.append((donor, acceptor, n_h if donor else 0))
    return out
