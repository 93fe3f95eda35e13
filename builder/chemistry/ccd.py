"""The PDB chemical component dictionary (as bundled in biotite): ligand templates with atom
names, elements, formal charges, bond orders and hydrogen counts, and raw-entry ligands built
from them.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from ..core.errors import InputError
from .files import distance_bonds, normalise_element
from .ligand import LigandData, rdkit_order

log = logging.getLogger(__name__)

#: Refuse ligands with more heavy atoms than this (not a small-molecule ligand).
MAX_LIGAND_ATOMS = 400

_CCD_CACHE: dict[str, dict | None] = {}


def release_dictionary() -> None:
    """Drop biotite's decoded copy of the dictionary, keeping the templates already made here.

    The first template a process reads decodes the dictionary's atom and bond tables (about
    665 MB held for the process's life, measured with biotite 1.6; docs/measurements.md); a
    long-lived process that reads many unrelated structures (the test suite between modules)
    gives it back here, and the next unknown code decodes it again (about 0.8 CPU-s)."""
    try:
        from biotite.structure.info import atoms, ccd  # noqa: PLC0415
    except ImportError:
        return
    for cached in (
        getattr(ccd, "get_ccd", None),
        getattr(ccd, "get_from_ccd", None),
        getattr(ccd, "_residue_index", None),
        getattr(atoms, "_residue", None),
    ):
        if hasattr(cached, "cache_clear"):
            cached.cache_clear()


def ccd_template(code: str) -> dict | None:
    """Heavy atoms of CCD component ``code``, or None when biotite or the code is unavailable.

    Keys: ``code``, ``names``, ``elements``, ``charges``, ``bonds`` ((i, j, order) with order
    1-3, 4 aromatic; aromatic single/double bonds keep their Kekulé order 1/2), ``n_h``
    (hydrogens on each heavy atom) and ``coords`` (ideal coordinates, Å). Cached; read only.
    """
    if code in _CCD_CACHE:
        return _CCD_CACHE[code]
    try:
        import biotite.structure as struc  # noqa: PLC0415
        import biotite.structure.info as info  # noqa: PLC0415

        arr = info.residue(code)
    except Exception as exc:  # biotite missing or unknown code: callers fall back
        log.debug("no CCD template for %s: %s", code, exc)
        _CCD_CACHE[code] = None
        return None
    kind = {
        struc.BondType.SINGLE: 1,
        struc.BondType.DOUBLE: 2,
        struc.BondType.TRIPLE: 3,
        struc.BondType.AROMATIC_SINGLE: 1,
        struc.BondType.AROMATIC_DOUBLE: 2,
        struc.BondType.AROMATIC_TRIPLE: 3,
        struc.BondType.AROMATIC: 4,
    }
    elements = [normalise_element(str(e)) for e in arr.element]
    heavy = [k for k, el in enumerate(elements) if el not in ("H", "D")]
    remap = {old: new for new, old in enumerate(heavy)}
    n_h = [0] * len(heavy)
    bonds = []
    for a, b, t in arr.bonds.as_array():
        a, b = int(a), int(b)
        if a in remap and b in remap:
            bonds.append((remap[a], remap[b], kind.get(struc.BondType(int(t)), 1)))
        elif a in remap:
            n_h[remap[a]] += 1
        elif b in remap:
            n_h[remap[b]] += 1
    template = {
        "code": code,
        "names": [str(arr.atom_name[k]) for k in heavy],
        "elements": [elements[k] for k in heavy],
        "charges": [int(arr.charge[k]) for k in heavy],
        "bonds": bonds,
        "n_h": n_h,
        "coords": np.asarray(arr.coord)[heavy],
    }
    _CCD_CACHE[code] = template
    return template


def ligand_from_ccd(path: Path, copy: dict):
    """The ligand of a raw entry (``copy``: a hetero residue from ``protein.read_protein``) with
    bond orders and charges from the CCD template, matched by atom name."""
    from rdkit import Chem, RDLogger  # noqa: PLC0415

    RDLogger.DisableLog("rdApp.*")
    atoms = [a for a in copy["atoms"] if a[1] not in ("H", "D")]
    if not atoms:
        raise InputError(path, f"ligand {copy['name']} has only hydrogen atoms")
    if len(atoms) > MAX_LIGAND_ATOMS:
        raise InputError(
            path,
            f"ligand {copy['name']} has {len(atoms)} heavy atoms (> {MAX_LIGAND_ATOMS}); not a small molecule",
        )
    names = [a[0] for a in atoms]
    coords = np.array([a[2] for a in atoms], dtype=np.float64)
    elements = [a[1] for a in atoms]
    template = ccd_template(copy["name"])
    rw = Chem.RWMol()
    charges = [0] * len(atoms)
    bonds: list[list[int]] = []
    orders: list[int] = []
    if template is not None:
        t_index = {n: k for k, n in enumerate(template["names"])}
        for k, name in enumerate(names):
            if name in t_index:
                charges[k] = int(template["charges"][t_index[name]])
        local = {n: k for k, n in enumerate(names)}
        for a, b, order in template["bonds"]:
            na, nb = template["names"][a], template["names"][b]
            if na in local and nb in local:
                bonds.append(sorted((local[na], local[nb])))
                orders.append(order)
    else:
        log.warning(
            "%s: no chemical component template for %s; bonds from distances, all single",
            path,
            copy["name"],
        )
        bonds = [list(p) for p in distance_bonds(coords, elements)]
        orders = [1] * len(bonds)
    for el, q in zip(elements, charges):
        atom = Chem.Atom(el if el != "X" else "*")
        atom.SetFormalCharge(q)
        rw.AddAtom(atom)
    for (a, b), order in zip(bonds, orders):
        bt = {
            1: Chem.BondType.SINGLE,
            2: Chem.BondType.DOUBLE,
            3: Chem.BondType.TRIPLE,
            4: Chem.BondType.AROMATIC,
        }.get(order, Chem.BondType.SINGLE)
        rw.AddBond(int(a), int(b), bt)
    mol = rw.GetMol()
    try:
        Chem.SanitizeMol(mol)
    except (ValueError, RuntimeError):
        mol.UpdatePropertyCache(strict=False)
    n_h = [atom.GetTotalNumHs() for atom in mol.GetAtoms()]
    aromatic = [atom.GetIsAromatic() for atom in mol.GetAtoms()]
    final_orders = [rdkit_order(mol.GetBondBetweenAtoms(int(a), int(b))) for a, b in bonds]
    unique_names = (
        names if len(set(names)) == len(names) else [f"{n}:{k + 1}" for k, n in enumerate(names)]
    )
    return LigandData(
        coords,
        elements,
        unique_names,
        charges,
        bonds,
        final_orders,
        n_h,
        aromatic,
        np.zeros((0, 3)),
        np.zeros(0, dtype=np.int64),
        copy["name"],
        str(path),
    )
