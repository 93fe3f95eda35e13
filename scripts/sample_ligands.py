"""Sample builder, ligand side: crystal ligand atoms matched to their chemical component
dictionary template and rebuilt as an RDKit molecule (bond orders, charges, trusted hydrogens).

Readers and the CCD template come from the chemistry layer (``chemistry.files``,
``chemistry.ccd``); used by ``make_samples``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from misi_bench.builder.chemistry.ccd import ccd_template as _ccd_template
from misi_bench.builder.chemistry.files import distance_bonds, open_text, parse_mol2

# --------------------------------------------------------------------------------------------
# Reading structures
# --------------------------------------------------------------------------------------------


@dataclass
class Atom:
    name: str
    element: str  # capitalised symbol, e.g. "C", "Br"
    xyz: np.ndarray
    charge: int = 0


@dataclass
class LigandSource:
    heavy: list[Atom]
    hydrogens: list[Atom]
    res_name: str
    chain: str
    resnum: int
    ins: str = ""
    h_parent: list[int] = field(default_factory=list)  # index into heavy for each H (-1: unknown)


def atom_element(atom) -> str:
    """Capitalised element symbol of a gemmi atom, guessed from its name when the file has none."""
    el = atom.element.name
    if el in ("X", ""):
        import gemmi

        el = gemmi.Element(atom.name.strip()[:1]).name
    return el[:1].upper() + el[1:].lower()


def find_ligand(st, code: str, chain: str | None, resnum: int | None) -> LigandSource:
    model = st[0]
    for ch in model:
        for res in ch:
            if res.name.strip() != code:
                continue
            if chain is not None and ch.name.strip() != chain:
                continue
            if resnum is not None and res.seqid.num != resnum:
                continue
            heavy, hyd = [], []
            for a in res:
                at = Atom(a.name.strip(), atom_element(a), np.array(a.pos.tolist()), int(a.charge))
                (hyd if at.element in ("H", "D") else heavy).append(at)
            return LigandSource(
                heavy, hyd, code, ch.name.strip(), res.seqid.num, res.seqid.icode.strip()
            )
    raise LookupError(f"ligand {code} chain={chain} resnum={resnum} not found")


def read_mol2_atoms(path: Path) -> list[Atom]:
    """Atoms (name, element, coordinates) of a MOL2 file, through the chemistry layer's reader."""
    return [Atom(a["name"], a["element"], np.array(a["xyz"])) for a in parse_mol2(path)[0]]


def read_sdf_atoms(path: Path) -> list[Atom]:
    from rdkit import Chem

    mol = Chem.MolFromMolBlock(open_text(path).split("$$$$")[0], sanitize=False, removeHs=False)
    pos = mol.GetConformer().GetPositions()
    return [
        Atom("", a.GetSymbol(), pos[a.GetIdx()].copy(), a.GetFormalCharge()) for a in mol.GetAtoms()
    ]


# --------------------------------------------------------------------------------------------
# CCD chemistry and matching
# --------------------------------------------------------------------------------------------


def ccd_template(code: str) -> dict:
    """The chemistry layer's CCD template of ``code`` (names, elements, charges, bonds, H counts,
    ideal coordinates); a ``ValueError`` when biotite does not know it."""
    tmpl = _ccd_template(code)
    if tmpl is None:
        raise ValueError(f"no chemical component template for {code} (is biotite installed?)")
    return tmpl


def _skeleton(elements: list[str], bonds) -> object:
    from rdkit import Chem

    m = Chem.RWMol()
    for e in elements:
        a = Chem.Atom(e)
        a.SetNoImplicit(True)
        m.AddAtom(a)
    for b in bonds:
        m.AddBond(int(b[0]), int(b[1]), Chem.BondType.SINGLE)
    m = m.GetMol()
    m.UpdatePropertyCache(strict=False)
    Chem.FastFindRings(m)
    return m


def match_to_template(lig: list[Atom], tmpl: dict) -> tuple[list[int], str]:
    """Map each crystal heavy atom to a template atom. Returns (mapping, method)."""
    names = [a.name for a in lig]
    coords = np.array([a.xyz for a in lig])
    elements = [a.element for a in lig]
    # 1) by name, when every name exists with the same element and the bonds agree
    idx = {n: k for k, n in enumerate(tmpl["names"])}
    if all(n in idx and tmpl["elements"][idx[n]] == e for n, e in zip(names, elements)):
        mapping = [idx[n] for n in names]
        inv = {t: c for c, t in enumerate(mapping)}
        ok = len(set(mapping)) == len(mapping)
        tb = {
            (min(inv[i], inv[j]), max(inv[i], inv[j]))
            for i, j, _ in tmpl["bonds"]
            if i in inv and j in inv
        }
        db = set(distance_bonds(coords, elements))
        if ok and tb == db:
            return mapping, "name"
    # 2) by covalent graph, preferring the mapping with most agreeing names
    query = _skeleton(elements, distance_bonds(coords, elements))
    target = _skeleton(tmpl["elements"], tmpl["bonds"])
    matches = target.GetSubstructMatches(query, uniquify=False, maxMatches=5000, useChirality=False)
    if not matches:
        raise ValueError(f"crystal ligand does not match CCD {tmpl['code']} by covalent graph")
    best = max(matches, key=lambda m: sum(tmpl["names"][t] == names[c] for c, t in enumerate(m)))
    return list(best), "graph"


# --------------------------------------------------------------------------------------------
# Building the ligand molecule
# --------------------------------------------------------------------------------------------


def assign_hydrogens(src: LigandSource) -> list[int]:
    heavy = np.array([a.xyz for a in src.heavy])
    parents = []
    for h in src.hydrogens:
        d = np.linalg.norm(heavy - h.xyz, axis=1)
        k = int(np.argmin(d))
        parents.append(k if d[k] < 1.35 else -1)
    return parents


def build_ligand(
    src: LigandSource, tmpl: dict, mapping: list[int]
) -> tuple[object, list[str], list[str]]:
    """RDKit molecule (heavy atoms in source order, then kept H), atom names, notes."""
    from rdkit import Chem
    from rdkit.Geometry import Point3D

    notes = []
    n = len(src.heavy)
    inv = {t: c for c, t in enumerate(mapping)}
    charges = [tmpl["charges"][mapping[c]] for c in range(n)]
    keep_h = bool(src.hydrogens)
    parents = assign_hydrogens(src) if keep_h else []
    if keep_h:
        counts = [0] * n
        for p in parents:
            if p >= 0:
                counts[p] += 1
        if any(p < 0 for p in parents):
            keep_h = False
            notes.append("ligand H dropped (orphan H)")
        else:
            for c in range(n):
                want = tmpl["n_h"][mapping[c]]
                el = src.heavy[c].element
                if counts[c] == want:
                    continue
                if el in ("N", "O", "S") and abs(counts[c] - want) == 1:
                    charges[c] += counts[c] - want
                    continue
                keep_h = False
                notes.append(
                    f"ligand H dropped ({el} {src.heavy[c].name}: {counts[c]} H, CCD {want})"
                )
                break
        if not keep_h:
            charges = [tmpl["charges"][mapping[c]] for c in range(n)]
        elif charges != [tmpl["charges"][mapping[c]] for c in range(n)]:
            notes.append("protonation of the source kept (formal charges adjusted)")
    m = Chem.RWMol()
    for c, a in enumerate(src.heavy):
        at = Chem.Atom(a.element)
        at.SetFormalCharge(charges[c])
        m.AddAtom(at)
    for i, j, order in tmpl["bonds"]:
        if i in inv and j in inv:
            bt = {1: Chem.BondType.SINGLE, 2: Chem.BondType.DOUBLE, 3: Chem.BondType.TRIPLE}[order]
            m.AddBond(inv[i], inv[j], bt)
    names = [a.name for a in src.heavy]
    if keep_h:
        used = set(names)
        for h, p in zip(src.hydrogens, parents):
            idx = m.AddAtom(Chem.Atom(1))
            m.AddBond(p, idx, Chem.BondType.SINGLE)
            name = h.name
            if not name or name in used:
                base = "H"
                q = 1
                while f"{base}{q}" in used:
                    q += 1
                name = f"{base}{q}"
            used.add(name)
            names.append(name)
    conf = Chem.Conformer(m.GetNumAtoms())
    pts = [a.xyz for a in src.heavy] + ([h.xyz for h in src.hydrogens] if keep_h else [])
    for k, p in enumerate(pts):
        conf.SetAtomPosition(k, Point3D(*map(float, p)))
    m.AddConformer(conf, assignId=True)
    mol = m.GetMol()
    Chem.SanitizeMol(mol)
    Chem.AssignStereochemistryFrom3D(mol)
    return mol, names, notes


def stereo_agrees(mol, tmpl: dict) -> bool:
    """Do the crystal ligand's stereocentres equal the CCD ideal ones (same atom mapping)?"""
    from rdkit import Chem

    return _canon(Chem.RemoveHs(mol)) == _canon(_template_mol(tmpl))


def _template_mol(tmpl: dict):
    from rdkit import Chem
    from rdkit.Geometry import Point3D

    m = Chem.RWMol()
    for e, q in zip(tmpl["elements"], tmpl["charges"]):
        a = Chem.Atom(e)
        a.SetFormalCharge(q)
        m.AddAtom(a)
    for i, j, o in tmpl["bonds"]:
        m.AddBond(
            i, j, {1: Chem.BondType.SINGLE, 2: Chem.BondType.DOUBLE, 3: Chem.BondType.TRIPLE}[o]
        )
    conf = Chem.Conformer(m.GetNumAtoms())
    for k, p in enumerate(tmpl["coords"]):
        conf.SetAtomPosition(k, Point3D(*map(float, p)))
    m.AddConformer(conf, assignId=True)
    mol = m.GetMol()
    Chem.SanitizeMol(mol)
    Chem.AssignStereochemistryFrom3D(mol)
    return mol


def _canon(mol) -> str:
    from rdkit import Chem

    m = Chem.Mol(mol)
    for a in m.GetAtoms():
        a.SetFormalCharge(0)
        a.SetNoImplicit(False)
    m = Chem.RemoveHs(m, sanitize=False)
    try:
        Chem.SanitizeMol(m)
    except Exception:  # noqa: BLE001
        pass
    return Chem.MolToSmiles(m)
