"""Read protein-ligand complexes (PDBbind layout or raw PDB/mmCIF) into a ``Complex`` record.

The public entry points of the chemistry layer's reading side. The work is split by job:

* ``protein``: gemmi reading (first model, first alternate location, no waters), the pocket cut
  (whole amino-acid residues, standard or modified (``modified``), with a heavy atom within
  ``pocket_cutoff`` Å of a ligand heavy atom; default ``core.constants.DEFAULT_POCKET_CUTOFF``),
  covalent bonds and input hydrogens of the pocket.
* ``ligand``: the PDBbind SDF (chemistry, via RDKit) and MOL2 (atom names, matched by coordinates).
* ``ccd``: raw-entry ligands with chemistry from the PDB chemical component dictionary (biotite),
  matched by atom name.
* ``hbond_typing``: donor/acceptor typing of protein and ligand atoms (``plip`` H-bond mode);
  ``idatm``: IDATM-style atom types and hydrogen counts (``chimerax`` mode), from residue templates
  and the ligand's RDKit chemistry; the MOL2's hydrogens are kept for that mode.

Every failure raises :class:`~.errors.InputError` naming the input and the reason.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np

from ..core.constants import DEFAULT_POCKET_CUTOFF
from ..core.errors import InputError, InputTooLarge
from ..core.records import Complex, ComplexRef, ReadReport, Residue
from .ccd import MAX_LIGAND_ATOMS, ligand_from_ccd
from .files import MAX_FILE_BYTES, normalise_element
from .geometry_checks import check_ligand, check_pocket
from .hbond_typing import (
    ionisable_groups,
    ligand_donor_h,
    ligand_polarity,
    protein_donor_h,
    protein_polarity,
    tertiary_amines,
)
from .idatm import ligand_types, protein_type
from .ligand import LigandData, read_ligand_files
from .modified import residue_roles, residue_types
from .protein import (
    MAX_POCKET_ATOMS,
    STANDARD_AMINO_ACIDS,
    WATER_NAMES,
    ProteinAtoms,
    metals_near,
    pocket_residue_keys,
    protein_bonds,
    protein_hydrogens,
    read_protein,
)

# ----------------------------------------------------------------------------------------
# entry points


def load_complex(ref: ComplexRef, pocket_cutoff: float = DEFAULT_POCKET_CUTOFF) -> Complex:
    """Read the complex that ``ref`` points to (refused when discovery found a ``problem``).

    >>> from misi_bench.builder.chemistry.samples import sample_refs
    >>> cx = load_complex(sample_refs()[0])
    >>> cx.pdb_id, len(cx.ligand_indices), len(cx.pocket_indices)
    ('1a28', 23, 662)
    """
    if ref.problem:
        raise InputError(ref.pdb_id, ref.problem)
    if ref.kind == "pdbbind":
        return read_pdbbind_dir(ref.path, pdb_id=ref.pdb_id, pocket_cutoff=pocket_cutoff)
    if not ref.ligand_code:
        raise InputError(
            ref.path, "a raw PDB/mmCIF entry needs the ligand's residue name (e.g. --ligand STR)"
        )
    return read_raw_entry(
        ref.path,
        ref.ligand_code,
        chain=ref.ligand_chain,
        resnum=ref.ligand_resnum,
        pdb_id=ref.pdb_id,
        pocket_cutoff=pocket_cutoff,
    )


def ref_for_path(
    path: str | os.PathLike,
    ligand_code: str | None = None,
    chain: str | None = None,
    resnum: int | None = None,
) -> ComplexRef:
    """A ``ComplexRef`` for a user-given path: a PDBbind directory, or a PDB/mmCIF file."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, "no such file or directory")
    if path.is_dir():
        return ComplexRef(
            pdb_id=path.name.lower(), path=path, kind="pdbbind", ligand_code=ligand_code
        )
    stem = path.name.split(".")[0]
    return ComplexRef(
        pdb_id=stem.lower()[:4] if len(stem) >= 4 else stem.lower(),
        path=path,
        kind="raw",
        ligand_code=ligand_code,
        ligand_chain=chain,
        ligand_resnum=resnum,
    )


def read_pdbbind_dir(
    path: str | os.PathLike, pdb_id: str | None = None, pocket_cutoff: float = DEFAULT_POCKET_CUTOFF
) -> Complex:
    """Read ``<root>/<pdbid>/`` with ``<pdbid>_pocket.pdb`` (or ``_protein.pdb``), ``_ligand.sdf``
    and/or ``_ligand.mol2``."""
    path = Path(path)
    if not path.is_dir():
        raise InputError(path, "not a directory (expected a PDBbind complex folder <pdbid>/)")
    pdb_id = (pdb_id or path.name).lower()
    files = {p.name.lower(): p for p in path.iterdir() if p.is_file()}

    def find(suffix: str) -> Path | None:
        return files.get(f"{pdb_id}_{suffix}") or next(
            (p for name, p in sorted(files.items()) if name.endswith(f"_{suffix}")), None
        )

    pocket_file = find("pocket.pdb") or find("protein.pdb")
    sdf_file, mol2_file = find("ligand.sdf"), find("ligand.mol2")
    if pocket_file is None:
        raise InputError(path, f"no {pdb_id}_pocket.pdb or {pdb_id}_protein.pdb found")
    if sdf_file is None and mol2_file is None:
        raise InputError(path, f"no {pdb_id}_ligand.sdf or {pdb_id}_ligand.mol2 found: no ligand")
    ligand = read_ligand_files(sdf_file, mol2_file)
    protein = read_protein(pocket_file)
    lig_code = ligand.residue_name or "LIG"
    return _assemble(
        pdb_id, lig_code, str(path), protein, ligand, pocket_cutoff, source=pocket_file
    )


def read_raw_entry(
    path: str | os.PathLike,
    ligand_code: str,
    chain: str | None = None,
    resnum: int | None = None,
    pdb_id: str | None = None,
    pocket_cutoff: float = DEFAULT_POCKET_CUTOFF,
) -> Complex:
    """Read a PDB or mmCIF file (optionally gzipped) with the ligand named by its residue name.

    With several copies of the ligand, ``chain``/``resnum`` pick one; otherwise the first copy
    in file order is used. Bond orders come from the chemical component dictionary.
    """
    path = Path(path)
    code = ligand_code.strip().upper()
    protein = read_protein(path, keep_hetero=code)
    copies = _ligand_copies(protein, code, chain, resnum)
    if not copies:
        names = sorted({r["name"] for r in protein.het_residues} | protein.het_names)
        where = f" in chain {chain!r}" if chain is not None else ""
        where += f" with number {resnum}" if resnum is not None else ""
        raise InputError(
            path,
            f"no ligand {code}{where} found (hetero residues present: {', '.join(names) or 'none'})",
        )
    ligand = ligand_from_ccd(path, copies[0])
    pdb_id = (pdb_id or protein.entry_id or path.name.split(".")[0]).lower()
    return _assemble(pdb_id, code, str(path), protein, ligand, pocket_cutoff, source=path)


def _ligand_copies(protein: ProteinAtoms, code: str, chain: str | None, resnum: int | None):
    """The hetero residues named ``code`` (in chain ``chain``, numbered ``resnum`` when given).
    A chain is matched by its label, else by the id the file gives (a ligand that repeats a
    residue number of its chain is kept in a segment of its own, e.g. ``A2``)."""

    def pick(field: str) -> list[dict]:
        return [
            r
            for r in protein.het_residues
            if r["name"] == code
            and (chain is None or r.get(field) == chain)
            and (resnum is None or r["number"] == resnum)
        ]

    return pick("chain") or (pick("file_chain") if chain is not None else [])


# ----------------------------------------------------------------------------------------
# assembling the record


def _assemble(
    pdb_id: str,
    lig_code: str,
    location: str,
    protein: ProteinAtoms,
    lig: LigandData,
    cutoff: float,
    source: Path,
) -> Complex:
    pocket_res, p_idx, residues, res_new = _pocket(location, lig_code, protein, lig, cutoff)
    res_key = np.asarray(protein.res_key, dtype=np.int64)
    n_r = len(p_idx)
    res_of_atom = np.array([res_new[k] for k in res_key[p_idx]], dtype=np.int64)
    ions = metals_near(protein, lig.coords, cutoff)  # pocket-side atoms without a residue
    n_p = n_r + len(ions)
    columns = _atom_columns(protein, lig, lig_code, p_idx, residues, res_of_atom, ions)
    p_names, p_elements = columns.pop("p_names"), columns.pop("p_elements")
    p_resnames = columns.pop("p_resnames")
    coords = columns["coords"]

    h_coords, h_parent = protein_hydrogens(protein, pocket_res, res_new, coords[:n_r], res_of_atom)
    report = ReadReport(
        unbonded_hydrogens=int(np.isin(protein.h_res, pocket_res).sum())
        - len(h_parent)
        + lig.mol2_unbonded_h,
        segments=tuple(protein.segments),
        ligand_source=Path(lig.source).name,
        **protein.counts,
    )
    n_h_on = np.bincount(h_parent, minlength=n_r)
    res_with_h = set(res_of_atom[h_parent].tolist())
    input_h = [int(n_h_on[k]) if res_of_atom[k] in res_with_h else None for k in range(n_r)] + [
        None
    ] * len(ions)
    is_donor, is_acceptor, donor_h = _polarity(
        p_resnames, p_names, input_h, n_r, lig, p_elements, res_of_atom
    )
    charges = np.concatenate([np.zeros(n_p, dtype=np.int64), lig.charges])
    bonds, orders = _bonds(coords, p_elements, p_names, res_of_atom, lig, n_r, n_p)

    amidine_n, acid_o = ionisable_groups(lig)
    if len(lig.h_coords):
        # hydrogens drawn on amidine/guanidine N are one arbitrary tautomer: not used
        kept = ~np.isin(lig.h_parent, sorted(amidine_n))
        h_coords = np.vstack([h_coords, lig.h_coords[kept]])
        h_parent = np.concatenate([h_parent, lig.h_parent[kept] + n_p])
    mol2_kept = ~np.isin(lig.mol2_h_parent, sorted(amidine_n))
    atom_types, h_count = _chimerax_typing(
        p_resnames[:n_r],
        p_names[:n_r],
        input_h[:n_r],
        res_of_atom,
        p_elements[n_r:],
        lig,
        amidine_n,
        acid_o,
        location,
    )
    return Complex(
        pdb_id=pdb_id,
        ligand_code=lig_code,
        source=location,
        **columns,
        residues=residues,
        bonds=bonds.reshape(-1, 2),
        bond_orders=orders,
        is_donor=is_donor,
        is_acceptor=is_acceptor,
        formal_charges=charges,
        h_coords=h_coords.reshape(-1, 3),
        h_parent=h_parent.astype(np.int64),
        donor_h=donor_h,
        atom_types=atom_types,
        h_count=h_count,
        mol2_h_coords=lig.mol2_h_coords[mol2_kept].reshape(-1, 3),
        mol2_h_parent=(lig.mol2_h_parent[mol2_kept] + n_p).astype(np.int64),
        read_report=report,
    )


def _pocket(location: str, lig_code: str, protein: ProteinAtoms, lig: LigandData, cutoff):
    """The pocket: whole residues with any heavy atom within ``cutoff`` Å of any ligand heavy
    atom, after the input checks. Returns the pocket's residue keys, the protein atom indices
    kept, the residues and the old-to-new residue numbering."""
    if not (isinstance(cutoff, (int, float)) and math.isfinite(cutoff) and cutoff > 0):
        raise InputError(location, f"pocket cutoff must be a positive number of Å, got {cutoff!r}")
    p_coords = np.asarray(protein.coords, dtype=np.float64).reshape(-1, 3)
    res_key = np.asarray(protein.res_key, dtype=np.int64)
    lig_coords = lig.coords
    check_ligand(location, lig.names, lig_coords, lig.bonds, lig.h_coords, lig.h_parent)
    pocket_res = pocket_residue_keys(p_coords, res_key, lig_coords, cutoff)
    if not pocket_res:
        raise InputError(
            location,
            f"no protein residue within {cutoff:g} Å of ligand {lig_code}: ligand is far from any protein",
        )
    keep = np.isin(res_key, pocket_res)
    if keep.sum() > MAX_POCKET_ATOMS:
        raise InputTooLarge(
            location, f"pocket has {int(keep.sum())} heavy atoms (> {MAX_POCKET_ATOMS})"
        )
    res_new = {old: new for new, old in enumerate(pocket_res)}
    residues = tuple(protein.residues[k] for k in pocket_res)
    _refuse_name_repeats(location, protein, residues)
    p_idx = np.flatnonzero(keep)
    check_pocket(
        location,
        p_coords[p_idx],
        lig_coords,
        cutoff,
        lambda k: (
            f"{protein.names[p_idx[k]]} of {protein.residues[res_key[p_idx[k]]].label} "
            f"chain {protein.residues[res_key[p_idx[k]]].chain}"
        ),
    )
    return pocket_res, p_idx, residues, res_new


def _atom_columns(protein, lig, lig_code, p_idx, residues, res_of_atom, ions) -> dict:
    """The per-atom columns of the complex (pocket residues' atoms, then ions, then the ligand):
    ``coords`` (Å), elements, names, residue names, numbers, insertion codes, chains, ligand
    flag, residue index (-1 off residues); plus the pocket side's names, elements and residue
    names as lists (``p_*``)."""
    n_l = len(lig.coords)
    p_coords = np.asarray(protein.coords, dtype=np.float64).reshape(-1, 3)
    p_names = [protein.names[k] for k in p_idx] + [m["element"] for m in ions]
    p_elements = [protein.elements[k] for k in p_idx] + [m["element"] for m in ions]
    p_resnames = [residues[r].name for r in res_of_atom] + [m["res_name"] for m in ions]
    p_xyz = np.vstack(
        [p_coords[p_idx], np.array([m["xyz"] for m in ions], dtype=np.float64).reshape(-1, 3)]
    )
    return {
        "p_names": p_names,
        "p_elements": p_elements,
        "p_resnames": p_resnames,
        "coords": np.vstack([p_xyz, lig.coords]),
        "elements": np.array(p_elements + lig.elements, dtype="<U2"),
        "atom_names": np.array(p_names + lig.names),
        "res_names": np.array(p_resnames + [lig_code] * n_l),
        "res_numbers": np.array(
            [residues[r].number for r in res_of_atom] + [m["number"] for m in ions] + [0] * n_l,
            dtype=np.int64,
        ),
        "ins_codes": np.array(
            [residues[r].ins_code for r in res_of_atom] + [""] * (len(ions) + n_l)
        ),
        "chain_ids": np.array(
            [residues[r].chain for r in res_of_atom] + [m["chain"] for m in ions] + [""] * n_l
        ),
        "is_ligand": np.array([False] * len(p_names) + [True] * n_l),
        "residue_index": np.concatenate([res_of_atom, -np.ones(len(ions) + n_l, dtype=np.int64)]),
    }


def _modified_typing(res_names, atom_names, input_h, res_of_atom) -> dict[int, tuple[str, int]]:
    """(IDATM type, hydrogens) of the atoms of kept modified residues (:mod:`.modified`), by atom
    index; standard residues' atoms are not in it."""
    members: dict[int, list[int]] = {}
    for k, rn in enumerate(res_names):
        if rn not in STANDARD_AMINO_ACIDS:
            members.setdefault(int(res_of_atom[k]), []).append(k)
    out: dict[int, tuple[str, int]] = {}
    for atoms in members.values():
        typed = residue_types(
            res_names[atoms[0]], [atom_names[k] for k in atoms], [input_h[k] for k in atoms]
        )
        out.update(zip(atoms, typed))
    return out


def _polarity(p_resnames, p_names, input_h, n_r: int, lig: LigandData, p_elements, res_of_atom):
    """``(is_donor, is_acceptor, donor_h)`` per atom: protein atoms by residue and atom name
    (and the hydrogens the input gives them; kept modified residues by their component's
    chemistry, :func:`.modified.residue_roles`), ions neither, ligand atoms by their chemistry."""
    polar = [
        protein_polarity(rn, an, nh) if k < n_r else (False, False)
        for k, (rn, an, nh) in enumerate(zip(p_resnames, p_names, input_h))
    ]
    p_donor_h = [
        protein_donor_h(rn, an, nh) if d else 0
        for (rn, an, nh), (d, _) in zip(zip(p_resnames, p_names, input_h), polar)
    ]
    modified = _modified_typing(p_resnames[:n_r], p_names[:n_r], input_h[:n_r], res_of_atom)
    roles = residue_roles([p_elements[k] for k in modified], list(modified.values()))
    for k, (donor, acceptor, n_h) in zip(modified, roles):
        polar[k], p_donor_h[k] = (donor, acceptor), n_h
    l_donor, l_acceptor = ligand_polarity(lig)
    donor_h = np.concatenate([np.array(p_donor_h, dtype=np.int64), ligand_donor_h(lig, l_donor)])
    is_donor = np.array([d for d, _ in polar] + l_donor.tolist(), dtype=bool)
    is_acceptor = np.array([a for _, a in polar] + l_acceptor.tolist(), dtype=bool)
    return is_donor, is_acceptor, donor_h


def _bonds(coords, p_elements, p_names, res_of_atom, lig: LigandData, n_r: int, n_p: int):
    """``(bonds, orders)``: the pocket residues' bonds (single) then the ligand's (its atoms
    numbered after the ``n_p`` pocket-side atoms)."""
    p_bonds = protein_bonds(coords[:n_r], p_elements[:n_r], p_names[:n_r], res_of_atom)
    l_bonds = lig.bonds + n_p
    bonds = (
        np.vstack([p_bonds, l_bonds]).astype(np.int64) if len(l_bonds) else p_bonds.astype(np.int64)
    )
    orders = np.concatenate([np.ones(len(p_bonds), dtype=np.int64), lig.orders]).astype(np.int8)
    return bonds, orders


def _refuse_name_repeats(location: str, protein: ProteinAtoms, residues) -> None:
    """A pocket residue with two heavy atoms under one name makes answers ambiguous: refused.
    Outside the pocket such a repeat is only counted (``ReadReport.duplicate_atoms``)."""
    pocket = {(r.chain, r.name, r.number, r.ins_code) for r in residues}
    for rep in protein.name_repeats:
        if (rep.chain, rep.res_name, rep.number, rep.ins_code) in pocket:
            raise InputError(
                location,
                f"pocket {rep.describe()}: atom names must be unique within a residue "
                "(an unflagged alternate location or two residues under one id?)",
            )


def _chimerax_typing(
    res_names,
    atom_names,
    input_h,
    res_of_atom,
    ion_elements,
    lig: LigandData,
    amidine_n: set[int],
    acid_o: set[int],
    location: str,
) -> tuple[np.ndarray, np.ndarray]:
    """IDATM-style types and hydrogen counts of every heavy atom (the ``chimerax`` H-bond mode).

    Protein: residue templates, hydrogen counts from the input where it has hydrogens on the
    residue. Ligand: RDKit chemistry; hydrogen counts from the MOL2 where it draws hydrogens
    (those are the hydrogens the mode uses), else from the SDF's chemistry (explicit or implied;
    without any input hydrogens acid OH count as deprotonated and aliphatic tertiary amines as
    protonated, as in the ``plip`` mode);
    amidine/guanidine N carry one H per free valence. A protein atom without a template is typed
    ``?`` (the chimerax detector then reports it)."""
    oxt_res = {int(r) for r, name in zip(res_of_atom, atom_names) if name == "OXT"}
    modified = _modified_typing(res_names, atom_names, input_h, res_of_atom)
    types, counts = [], []
    for k, (rn, an, nh) in enumerate(zip(res_names, atom_names, input_h)):
        if k in modified:
            t, c = modified[k]
        else:
            try:
                has_oxt = int(res_of_atom[k]) in oxt_res
                t, c = protein_type(rn, an, nh, has_oxt=has_oxt, source=location)
            except InputError:
                t, c = "?", 0
        types.append(t)
        counts.append(c)
    types += list(ion_elements)
    counts += [0] * len(ion_elements)
    n_h = np.array(lig.n_hydrogens, dtype=np.int64)
    if len(lig.mol2_h_parent):
        n_h = np.bincount(lig.mol2_h_parent, minlength=len(lig.coords)).astype(np.int64)
    elif not len(lig.h_coords):
        for i in acid_o:
            n_h[i] = 0
        for i in tertiary_amines(lig):  # drawn neutral without hydrogens: the ammonium at pH 7
            n_h[i] = 1
    for i in amidine_n:
        heavy = int(np.sum(lig.bonds == i))
        n_h[i] = max(3 - heavy, 0)
    charges = np.array(lig.charges)
    if not len(lig.h_coords) and not len(lig.mol2_h_parent):
        for i in acid_o:
            charges[i] = -1
    types += ligand_types(
        lig.elements, charges, lig.bonds, lig.orders, n_h, lig.aromatic, amidine_n
    )
    counts += n_h.tolist()
    return np.array(types, dtype="<U4"), np.array(counts, dtype=np.int64)


__all__ = [
    "ComplexRef",
    "Complex",
    "Residue",
    "LigandData",
    "load_complex",
    "read_pdbbind_dir",
    "read_raw_entry",
    "ref_for_path",
    "protein_polarity",
    "ligand_polarity",
    "normalise_element",
    "DEFAULT_POCKET_CUTOFF",
    "MAX_FILE_BYTES",
    "MAX_POCKET_ATOMS",
    "MAX_LIGAND_ATOMS",
    "STANDARD_AMINO_ACIDS",
    "WATER_NAMES",
]
