"""Protein side of a complex: gemmi reading, standard residues, the pocket cut, covalent bonds
and the hydrogens the input carries.

* First model, first alternate location; waters and non-standard residues other than modified
  amino acids (:mod:`.modified`: MSE, PTR, SEP, TPO, CSO ..., kept under their own names) are not
  pocket residues; hydrogens are kept apart for the H-bond detector.
* The pocket is every amino-acid residue (standard or kept modified) with any heavy atom within the cutoff
  (default ``core.constants.DEFAULT_POCKET_CUTOFF``) of any ligand heavy atom; whole residues are kept.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

import numpy as np

from ..core.errors import InputError
from ..core.records import PROTEIN_READ_COUNTS, Residue
from .atom_checks import check_finite, count_atoms, drop_alternates, repeated_names
from .files import distance_bonds, normalise_element, open_text
from .modified import keep_reason, looks_like_amino_acid
from .segments import Segments, split_cif_segments, split_segments

log = logging.getLogger(__name__)
#: Refuse pockets with more heavy atoms than this (a wrong cutoff or a broken ligand).
MAX_POCKET_ATOMS = 20_000

STANDARD_AMINO_ACIDS = frozenset(
    "ALA ARG ASN ASP CYS GLN GLU GLY HIS ILE LEU LYS MET PHE PRO SER THR TRP TYR VAL".split()
)
WATER_NAMES = frozenset({"HOH", "WAT", "H2O", "DOD", "D2O", "SOL", "TIP", "TIP3"})
#: Elements kept as metal ions when they form a single-atom hetero residue.
METAL_ELEMENTS = frozenset(
    "Li Na K Rb Cs Mg Ca Sr Ba Mn Fe Co Ni Cu Zn Cd Hg Pt Au Ag Mo W V Cr Al Ga".split()
)


class ProteinAtoms:
    """Plain arrays of the amino-acid atoms (standard or kept modified) of a structure (internal
    to reading)."""

    def __init__(self) -> None:
        self.coords: list[tuple[float, float, float]] = []
        self.elements: list[str] = []
        self.names: list[str] = []
        self.res_key: list[int] = []
        self.residues: list[Residue] = []
        self.het_residues: list[dict] = []
        self.het_names: set[str] = set()
        self.entry_id: str = ""
        self.h_coords: list[tuple[float, float, float]] = []
        self.h_res: list[int] = []
        self.h_names: list[str] = []
        self.metals: list[dict] = []  # one-atom metal residues: element, name, chain, number, xyz
        #: ``ReadReport`` counts of what reading left out (see ``core.records.ReadReport``)
        self.counts: dict[str, int] = dict.fromkeys(PROTEIN_READ_COUNTS, 0)
        self.segments: tuple[str, ...] = ()  # chain runs kept apart (``segments.Segments.notes``)
        self.name_repeats: list = []  # heavy atoms named like another of their residue (dropped)


def _looks_like_cif(path: Path, text: str) -> bool:
    name = path.name.lower().removesuffix(".gz")
    return name.endswith((".cif", ".mmcif")) or text.lstrip().startswith("data_")


def _legacy_pdb_fix(text: str, force: bool = False) -> str:
    """Cut ATOM/HETATM records of pre-1996 files to 72 columns when columns 73-80 hold an old
    identifier instead of an element symbol (gemmi then infers elements from atom names).
    ``force`` cuts every line to 72 columns without looking."""
    lines = text.splitlines()
    if force:
        return "\n".join(ln[:72] for ln in lines) + "\n"
    records = [ln for ln in lines if ln.startswith(("ATOM  ", "HETATM"))]
    if not records:
        return text
    sample = records[: min(len(records), 200)]
    bad = sum(
        1 for ln in sample if len(ln) > 72 and ln[72:76].strip() and not ln[76:78].strip().isalpha()
    )
    if bad < len(sample) // 2:
        return text
    return (
        "\n".join(ln[:72] if ln.startswith(("ATOM  ", "HETATM", "ANISOU")) else ln for ln in lines)
        + "\n"
    )


def _parse(path: Path, legacy72: bool = False, split: bool = False):
    """(gemmi ``Structure`` of a PDB or mmCIF file, its ``Segments`` or None). ``split`` gives
    repeated runs of a PDB chain id their own chains (:mod:`.segments`)."""
    import gemmi  # noqa: PLC0415 (heavy import kept out of import time)

    path = Path(path)
    text = open_text(path)
    segments = None
    try:
        if _looks_like_cif(path, text):
            block = gemmi.cif.read_string(text).sole_block()
            if split:
                segments = Segments(text, {}, split_cif_segments(block))
            st = gemmi.make_structure_from_block(block)
        else:
            text = _legacy_pdb_fix(text, force=legacy72)
            if split:
                segments = split_segments(text)
                text = segments.text
            st = gemmi.read_pdb_string(text)
    except (RuntimeError, ValueError, IndexError) as exc:
        raise InputError(path, f"unparsable structure file ({exc})") from None
    if len(st) == 0 or sum(1 for _ in st[0].all()) == 0:
        raise InputError(path, "no atom records found")
    return st, segments


def read_structure(path: Path, legacy72: bool = False):
    """gemmi ``Structure`` of a PDB or mmCIF file (gzip allowed), alternate locations removed
    (the first conformer kept). ``legacy72`` forces cutting PDB lines to 72 columns."""
    st, _ = _parse(path, legacy72)
    for model in st:
        drop_alternates(model, lambda name: name.strip() or "_")
    return st


def read_protein(path: Path, keep_hetero: str | None = None) -> ProteinAtoms:
    """Amino-acid heavy atoms (standard or kept modified, + their hydrogens) of the first model, and hetero
    residues named ``keep_hetero`` (raw entries) with their atoms."""
    st, segments = _parse(path, split=True)
    labels = segments.labels if segments is not None else {}
    origin = segments.origin if segments is not None else {}

    def label(chain_name: str) -> str:
        return labels.get(chain_name) or chain_name.strip() or "_"

    out = ProteinAtoms()
    out.entry_id = st.name if re.fullmatch(r"[0-9][A-Za-z0-9]{3}", st.name or "") else ""
    _read_counts(st, segments, out, path, label)
    skipped: set[str] = set()
    for chain in st[0]:
        for res in chain:
            name = res.name.strip().upper()
            if name in WATER_NAMES:
                out.counts["water_atoms"] += len(res)
            elif keep_hetero and name == keep_hetero:
                het = _hetero_residue(res, name, labels.get(chain.name, chain.name))
                het["file_chain"] = origin.get(chain.name, chain.name)
                out.het_residues.append(het)
            elif (metal := _metal_ion(res, name, label(chain.name))) is not None:
                out.metals.append(metal)
            elif name not in STANDARD_AMINO_ACIDS and not _keep_modified(res, name, path):
                out.counts["nonstandard_atoms"] += len(res)
                skipped.add(name)
                if res.het_flag == "H":
                    out.het_names.add(name)
            else:
                _add_amino_acid(out, res, name, label(chain.name))
    if skipped:
        log.debug(
            "%s: non-standard residues left out of the pocket: %s", path, ", ".join(sorted(skipped))
        )
    if not out.coords and not out.het_residues:
        raise InputError(
            path,
            "no standard amino-acid heavy atoms found (only hydrogens, waters or hetero groups?)",
        )
    return out


def _read_counts(st, segments, out: ProteinAtoms, path: Path, label) -> None:
    """Check the first model's coordinates, fill ``out.counts`` (atoms read, in other models,
    duplicates, atoms lost under a repeated name, alternative locations, all before filtering),
    drop alternative conformations from the first model and note chains kept apart."""
    model = st[0]
    check_finite(model, path, label)
    counts = out.counts
    counts["atoms_read"] = count_atoms(model)
    counts["other_model_atoms"] = sum(count_atoms(st[k]) for k in range(1, len(st)))
    repeated, out.name_repeats = repeated_names(model, label)
    counts["lost_atoms"] = len(out.name_repeats)  # heavy atoms under a name their residue has
    counts["duplicate_atoms"] = repeated - counts["lost_atoms"]
    drops = drop_alternates(model, label)
    counts["altloc_atoms"] = drops.altloc - repeated
    if out.name_repeats:  # in the pocket they refuse the complex (``structure._assemble``)
        log.warning(
            "%s: %d heavy atoms left out: named like another atom of their residue at another "
            "place (an unflagged alternate location, or two residues under one id): %s",
            path,
            len(out.name_repeats),
            "; ".join(r.describe() for r in out.name_repeats[:5]),
        )
    out.segments = (segments.notes if segments is not None else ()) + drops.notes
    if out.segments:
        log.warning(
            "%s: chain id or residue ids repeated, kept as separate chains: %s",
            path,
            "; ".join(out.segments),
        )


def _keep_modified(res, name: str, path: Path) -> bool:
    """True when non-standard residue ``res`` is a modified amino acid kept in the pocket under
    its own name (:mod:`.modified`); a left-out one that looks like an amino acid is logged as
    a WARNING naming it and why."""
    heavy = [a.name for a in res if normalise_element(a.element.name) not in ("H", "D")]
    if not heavy or not looks_like_amino_acid(name, heavy):
        return False
    reason = keep_reason(name, heavy)
    if reason:
        log.warning(
            "%s: modified residue %s %s%s left out of the pocket: %s",
            path,
            name,
            res.seqid.num,
            res.seqid.icode.strip(),
            reason,
        )
    return not reason


def _hetero_residue(res, name: str, chain: str) -> dict:
    """A kept hetero residue (raw entry): name, chain, number, insertion code and its atoms as
    ``(name, element, (x, y, z) Å)``."""
    atoms = [(a.name, normalise_element(a.element.name), (a.pos.x, a.pos.y, a.pos.z)) for a in res]
    return {
        "name": name,
        "chain": chain,
        "number": res.seqid.num,
        "icode": res.seqid.icode.strip(),
        "atoms": atoms,
    }


def _metal_ion(res, name: str, chain: str) -> dict | None:
    """A residue whose one heavy atom is a metal, as a pocket-side ion record, or None."""
    heavy = [a for a in res if normalise_element(a.element.name) not in ("H", "D")]
    if len(heavy) == 1 and normalise_element(heavy[0].element.name) in METAL_ELEMENTS:
        atom = heavy[0]
        return {
            "element": normalise_element(atom.element.name),
            "res_name": name,
            "chain": chain,
            "number": int(res.seqid.num),
            "xyz": (atom.pos.x, atom.pos.y, atom.pos.z),
        }
    return None


def _add_amino_acid(out: ProteinAtoms, res, name: str, chain: str) -> None:
    """Append an amino-acid residue (standard or kept modified) and its atoms: heavy atoms to the atom lists,
    hydrogens (H or D) to the hydrogen lists."""
    key = len(out.residues)
    out.residues.append(Residue(chain, name, int(res.seqid.num), res.seqid.icode.strip()))
    for atom in res:
        element = normalise_element(atom.element.name)
        pos = (atom.pos.x, atom.pos.y, atom.pos.z)
        if element in ("H", "D"):
            out.h_coords.append(pos)
            out.h_res.append(key)
            out.h_names.append(atom.name)
            continue
        out.coords.append(pos)
        out.elements.append(element)
        out.names.append(atom.name)
        out.res_key.append(key)


def pocket_residue_keys(
    p_coords: np.ndarray, res_key: np.ndarray, lig_coords: np.ndarray, cutoff: float
) -> list[int]:
    """Sorted residue keys with any atom of ``p_coords`` within ``cutoff`` Å of any ligand atom."""
    p_coords = np.asarray(p_coords, dtype=np.float64).reshape(-1, 3)
    res_key = np.asarray(res_key, dtype=np.int64)
    lo, hi = lig_coords.min(axis=0) - cutoff, lig_coords.max(axis=0) + cutoff
    near_box = (
        np.flatnonzero(((p_coords >= lo) & (p_coords <= hi)).all(axis=1))
        if len(p_coords)
        else np.zeros(0, int)
    )
    close = np.zeros(len(p_coords), dtype=bool)
    for start in range(0, len(near_box), 4096):
        idx = near_box[start : start + 4096]
        d2 = ((p_coords[idx, None, :] - lig_coords[None, :, :]) ** 2).sum(axis=2)
        close[idx] = (d2 <= cutoff * cutoff).any(axis=1)
    return sorted(set(res_key[close].tolist()))


def metals_near(protein: ProteinAtoms, lig_coords: np.ndarray, cutoff: float) -> list[dict]:
    """The metal ions (``ProteinAtoms.metals`` records) within ``cutoff`` Å of a ligand atom."""
    return [
        m
        for m in protein.metals
        if np.linalg.norm(lig_coords - np.asarray(m["xyz"]), axis=1).min() <= cutoff
    ]


def protein_bonds(
    coords: np.ndarray, elements: list[str], names: list[str], res_of_atom: np.ndarray
) -> np.ndarray:
    """Covalent bonds of pocket residues from distances: within a residue, peptide C-N between
    residues, and disulfides."""
    out: list[tuple[int, int]] = []
    order = np.argsort(res_of_atom, kind="stable")
    bounds = np.flatnonzero(np.diff(res_of_atom[order])) + 1
    for group in np.split(order, bounds):
        if len(group) < 2:
            continue
        pairs = distance_bonds(coords[group], [elements[k] for k in group])
        out.extend((int(group[a]), int(group[b])) for a, b in pairs)
    names_arr = np.asarray(names)
    c_idx = np.flatnonzero(names_arr == "C")
    n_idx = np.flatnonzero(names_arr == "N")
    if len(c_idx) and len(n_idx):
        d = np.linalg.norm(coords[c_idx, None] - coords[None, n_idx], axis=2)
        for a, b in zip(*np.nonzero(d < 1.75)):
            if res_of_atom[c_idx[a]] != res_of_atom[n_idx[b]]:
                out.append(tuple(sorted((int(c_idx[a]), int(n_idx[b])))))
    s_idx = np.flatnonzero(names_arr == "SG")
    if len(s_idx) > 1:
        d = np.linalg.norm(coords[s_idx, None] - coords[None, s_idx], axis=2)
        for a, b in zip(*np.nonzero(np.triu(d < 2.3, k=1))):
            out.append((int(s_idx[a]), int(s_idx[b])))
    return np.array(sorted(set(out)), dtype=np.int64).reshape(-1, 2)


def protein_hydrogens(
    protein: ProteinAtoms,
    pocket_res: list[int],
    res_new: dict[int, int],
    heavy: np.ndarray,
    res_of_atom: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Hydrogens of pocket residues attached to their nearest heavy atom of the same residue
    (within 1.3 Å)."""
    if not protein.h_coords:
        return np.zeros((0, 3)), np.zeros(0, dtype=np.int64)
    h_res = np.asarray(protein.h_res)
    h_xyz = np.asarray(protein.h_coords, dtype=np.float64)
    keep = np.isin(h_res, pocket_res)
    coords, parents = [], []
    for pos, r in zip(h_xyz[keep], h_res[keep]):
        cand = np.flatnonzero(res_of_atom == res_new[int(r)])
        if not len(cand):
            continue
        d = np.linalg.norm(heavy[cand] - pos, axis=1)
        k = int(d.argmin())
        if d[k] <= 1.3:
            coords.append(pos)
            parents.append(int(cand[k]))
    return np.asarray(coords, dtype=np.float64).reshape(-1, 3), np.asarray(parents, dtype=np.int64)
