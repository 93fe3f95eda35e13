"""The typed records that flow between stages (frozen dataclasses, numpy arrays).

``ComplexRef`` (where the files are) -> ``Complex`` (atoms, masks, labels, bonds, donors and
acceptors; the only contract between geometry and question generation).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class ComplexRef:
    """Where one complex's files are.

    ``kind`` is ``"pdbbind"`` (``path`` is a ``<root>/<pdbid>/`` directory with
    ``<pdbid>_pocket.pdb`` / ``_protein.pdb``, ``_ligand.sdf``, ``_ligand.mol2``) or ``"raw"``
    (``path`` is a PDB or mmCIF file, possibly gzipped, and ``ligand_code`` names the ligand's
    residue name; ``ligand_chain`` / ``ligand_resnum`` pick one copy).
    """

    pdb_id: str
    path: Path
    kind: str = "pdbbind"
    ligand_code: str | None = None
    ligand_chain: str | None = None
    ligand_resnum: int | None = None
    #: why this complex cannot be read at all (found by discovery, e.g. a folder name that is not
    #: UTF-8 or that collides with another by case); the build records it as a skipped complex
    problem: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", Path(self.path))
        if self.kind not in ("pdbbind", "raw"):
            raise ValueError(f"ComplexRef.kind must be 'pdbbind' or 'raw', got {self.kind!r}")

    def describe(self) -> str:
        extra = f" ligand {self.ligand_code}" if self.ligand_code else ""
        return f"{self.pdb_id} ({self.path}{extra})"


@dataclass(frozen=True)
class Residue:
    """One pocket residue. ``label`` is what images and answers show, e.g. ``ASN 460``."""

    chain: str
    name: str
    number: int
    ins_code: str = ""

    @property
    def label(self) -> str:
        return f"{self.name} {self.number}{self.ins_code}"

    @property
    def number_text(self) -> str:
        return f"{self.number}{self.ins_code}"


#: The :class:`ReadReport` counts taken while the pocket/protein file is read
#: (``chemistry.protein``), then all its counts in manifest order.
PROTEIN_READ_COUNTS: tuple[str, ...] = (
    "atoms_read",
    "other_model_atoms",
    "altloc_atoms",
    "duplicate_atoms",
    "lost_atoms",
    "water_atoms",
    "nonstandard_atoms",
)
READ_COUNTS: tuple[str, ...] = (*PROTEIN_READ_COUNTS, "unbonded_hydrogens")


@dataclass(frozen=True)
class ReadReport:
    """What reading one complex left out, kept apart or relabelled, counted (``Complex.read_report``;
    a build's manifest carries it per complex under ``reading``).

    ``atoms_read``: atom records of the first model of the protein/pocket file (hydrogens and
    waters included). Left out: ``other_model_atoms`` (models after the first),
    ``altloc_atoms`` (alternate locations other than the kept one, and microheterogeneity),
    ``duplicate_atoms`` (a record repeating an atom name of its residue at the same place),
    ``lost_atoms`` (heavy atoms named like another atom of their residue at another place, an
    unflagged alternate location or two residues merged under one id: outside the pocket left
    out, logged as a WARNING and named by the build's summary; in the pocket they refuse the
    complex),
    ``water_atoms``, ``nonstandard_atoms`` (atoms of residues that are not amino acids
    or kept metal ions: cofactors, other ligands, and modified amino acids the reader cannot
    type, ``chemistry.modified``), ``unbonded_hydrogens``
    (pocket hydrogens with no heavy atom of their residue within 1.3 Å, and MOL2 hydrogens that
    its bond table attaches to no ligand heavy atom). ``segments``: chain
    runs that repeat residue ids (number, insertion code) of an earlier run of the same chain id
    without being alternate locations (a second chain under the same or a blank id, insertion
    codes stripped, a chain per alternate-location letter), each kept with its own chain label,
    as ``"A -> A2: 44 residues"``. ``ligand_source``: the file the ligand's chemistry came from.
    """

    atoms_read: int = 0
    other_model_atoms: int = 0
    altloc_atoms: int = 0
    duplicate_atoms: int = 0
    lost_atoms: int = 0
    water_atoms: int = 0
    nonstandard_atoms: int = 0
    unbonded_hydrogens: int = 0
    segments: tuple[str, ...] = ()
    ligand_source: str = ""

    def as_dict(self) -> dict:
        """The manifest's record: the counts that are not zero (``atoms_read`` always), the
        relabelled segments when there are any, and ``ligand_source``."""
        out = {
            name: getattr(self, name)
            for name in READ_COUNTS
            if getattr(self, name) or name == "atoms_read"
        }
        if self.segments:
            out["segments"] = list(self.segments)
        out["ligand_source"] = self.ligand_source
        return out


@dataclass(frozen=True, eq=False)
class Complex:
    """Heavy atoms of the pocket residues (and metal ions) and the ligand of one complex.

    Arrays are indexed by atom (N atoms, hydrogens and waters excluded). Coordinates are the
    input file's, in Å. Pocket atoms come first, in chain/residue order; ligand atoms follow in
    file order. ``residue_index`` points into ``residues`` (-1 for ligand atoms). ``atom_names``
    of ligand atoms are unique display names (``N:2`` style when the input repeats a name).
    ``bonds`` are (M, 2) atom index pairs (i < j) of covalent bonds between heavy atoms with
    ``bond_orders`` 1, 2, 3 or 4 (aromatic). Hydrogens known from the input are kept apart in
    ``h_coords`` with ``h_parent`` the index of the heavy atom each is bonded to. Metal ions within
    the pocket cutoff of the ligand are pocket-side atoms without a residue (``residue_index``
    -1, after the residues' atoms; ``atom_names`` their element symbol, ``res_names`` their
    residue name, e.g. ``ZN``). ``donor_h``: how many hydrogens each donor atom carries (input or
    implied; 0 for non-donors; empty when unknown). ``atom_types``: IDATM-style types
    (``chemistry.idatm``; ``?`` for a protein atom without a template; empty when not typed) and
    ``h_count``: hydrogens each heavy atom carries (explicit or implied), both for the ``chimerax``
    H-bond mode. ``mol2_h_coords``/``mol2_h_parent``: the ligand's hydrogens as the MOL2 draws
    them (the ``chimerax`` mode's ligand hydrogens; ``h_coords`` holds the SDF's).
    ``read_report``: what reading left out or relabelled (:class:`ReadReport`).
    """

    pdb_id: str
    ligand_code: str
    source: str
    coords: np.ndarray
    elements: np.ndarray
    atom_names: np.ndarray
    res_names: np.ndarray
    res_numbers: np.ndarray
    ins_codes: np.ndarray
    chain_ids: np.ndarray
    is_ligand: np.ndarray
    residue_index: np.ndarray
    residues: tuple[Residue, ...]
    bonds: np.ndarray
    bond_orders: np.ndarray
    is_donor: np.ndarray
    is_acceptor: np.ndarray
    formal_charges: np.ndarray
    h_coords: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    h_parent: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    donor_h: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    atom_types: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype="<U4"))
    h_count: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    mol2_h_coords: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    mol2_h_parent: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    read_report: ReadReport = field(default_factory=ReadReport)

    def __post_init__(self) -> None:
        n = len(self.coords)
        for name in (
            "elements",
            "atom_names",
            "res_names",
            "res_numbers",
            "ins_codes",
            "chain_ids",
            "is_ligand",
            "residue_index",
            "is_donor",
            "is_acceptor",
            "formal_charges",
        ):
            if len(getattr(self, name)) != n:
                raise ValueError(
                    f"{self.pdb_id}: array {name} has {len(getattr(self, name))} rows, expected {n}"
                )
        for name in ("donor_h", "atom_types", "h_count"):
            if len(getattr(self, name)) not in (0, n):
                raise ValueError(
                    f"{self.pdb_id}: array {name} has {len(getattr(self, name))} rows, expected {n} (or none)"
                )
        for arr in (
            self.coords,
            self.elements,
            self.atom_names,
            self.is_ligand,
            self.bonds,
            self.h_coords,
        ):
            arr.setflags(write=False)

    @property
    def n_atoms(self) -> int:
        return len(self.coords)

    @property
    def ligand_indices(self) -> np.ndarray:
        return np.flatnonzero(self.is_ligand)

    @property
    def pocket_indices(self) -> np.ndarray:
        return np.flatnonzero(~self.is_ligand)

    @property
    def scene_centre(self) -> np.ndarray:
        """Centre of the bounding box of all displayed atoms (pocket + ligand), model frame, Å."""
        return (self.coords.min(axis=0) + self.coords.max(axis=0)) / 2.0

    @property
    def screen_coords(self) -> np.ndarray:
        """Front-view screen coordinates: model coordinates minus the scene centre (Å)."""
        return self.coords - self.scene_centre

    def residue_atoms(self, residue: int) -> np.ndarray:
        """Atom indices of pocket residue number ``residue`` (index into ``residues``)."""
        return np.flatnonzero(self.residue_index == residue)
