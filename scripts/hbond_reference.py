"""Independent hydrogen-bond reference: PLIP (with Open Babel) on a sample directory.

A validation tool for the builder's own detector (optional extra ``reference``:
``pip install plip==3.0.1 openbabel==3.2.1``). For a PDBbind-layout directory it writes one
merged PDB (pocket heavy atoms as ATOM records, the ligand's heavy atoms as HETATM records with
the MOL2 atom names, ligand CONECT records), lets PLIP add hydrogens and find protein-ligand
hydrogen bonds with its default geometry, and maps the donor/acceptor heavy atoms back to our
atom names by coordinates. Hydrogens of the input files go into the merged PDB (the pocket's,
and the ligand's from the SDF, the file our detector takes them from, else from the MOL2); PLIP
keeps them (``NOHYDRO`` and ``NOFIX``, the issue's setting) when both the pocket and the ligand
carry hydrogens, and otherwise adds the missing polar ones itself. Besides PLIP's bonds it returns
PLIP's candidates (every pair that passes its geometry before it keeps one bond per donor and
drops pairs it files as salt bridges) and the N/O pairs of its salt bridges within 4.1 Å.

    python -m scripts.hbond_reference [SAMPLE_DIR ...]

With no argument it runs over the embedded sample set and prints the bonds of each complex.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np
from misi_bench.builder.chemistry.files import parse_mol2

HBond = tuple[str, str, int, str, str]  # (chain, res_name, res_number, protein atom, ligand atom)


def _read_mol2(path: Path) -> tuple[list[dict], list[tuple[int, int]]]:
    """Ligand atoms (name, xyz, element) and bonds of a sample MOL2 (the chemistry layer's reader)."""
    atoms, bonds = parse_mol2(path)
    return (
        [{"name": a["name"], "xyz": a["xyz"], "element": a["element"]} for a in atoms],
        [(i, j) for i, j, _ in bonds],
    )


def _read_pocket(path: Path, hydrogens: bool | None = False):
    """ATOM/HETATM records of a pocket file: heavy atoms, hydrogens only, or all (None), in file order."""
    atoms = []
    for line in path.read_text().splitlines():
        if not line.startswith(("ATOM", "HETATM")):
            continue
        el = line[76:78].strip() or line[12:16].strip()[:1]
        if hydrogens is not None and (el.upper() in ("H", "D")) != hydrogens:
            continue
        atoms.append(
            {
                "line": line,
                "name": line[12:16].strip(),
                "res_name": line[17:20].strip(),
                "chain": line[21].strip(),
                "resnum": int(line[22:26]),
                "xyz": (float(line[30:38]), float(line[38:46]), float(line[46:54])),
            }
        )
    return atoms


def _ligand_identity(sample_dir: Path) -> tuple[str, str, int]:
    """(code, chain, resnum) from the SDF title line ``PDBID CODE CHAIN RESNUM`` if present."""
    pid = sample_dir.name.lower()
    try:
        title = (sample_dir / f"{pid}_ligand.sdf").read_text().splitlines()[0].split()
        if len(title) >= 4:
            chain = "" if title[2] == "-" else title[2]
            return title[1], chain, int(title[3])
    except (OSError, ValueError, IndexError):
        pass
    return "LIG", "Z", 999


def _sdf_hydrogens(sample_dir: Path, lig_atoms: list[dict], lig_bonds: list[tuple[int, int]]):
    """Ligand atoms and bonds with the hydrogens of the SDF (the chemistry source our detector
    reads) in place of the MOL2's, when the SDF has any; heavy atoms matched by coordinates."""
    from misi_bench.builder.chemistry.ligand import rdkit_mol_from_file  # noqa: PLC0415

    sdf = sample_dir / f"{sample_dir.name.lower()}_ligand.sdf"
    mol = rdkit_mol_from_file(sdf) if sdf.exists() else None
    if mol is None or not any(a.GetAtomicNum() == 1 for a in mol.GetAtoms()):
        return lig_atoms, lig_bonds
    xyz = mol.GetConformer().GetPositions()
    heavy = [i for i, a in enumerate(lig_atoms) if a["element"] not in ("H", "D")]
    ref = np.array([lig_atoms[i]["xyz"] for i in heavy])
    new_index = {old: k for k, old in enumerate(heavy)}
    atoms = [lig_atoms[i] for i in heavy]
    bonds = [
        (new_index[i], new_index[j]) for i, j in lig_bonds if i in new_index and j in new_index
    ]
    for atom in mol.GetAtoms():
        if atom.GetAtomicNum() != 1 or not atom.GetDegree():
            continue
        parent = atom.GetNeighbors()[0].GetIdx()
        k = int(np.argmin(np.linalg.norm(ref - xyz[parent], axis=1)))
        atoms.append(
            {
                "name": f"H{len(atoms) - len(heavy) + 1}",
                "xyz": tuple(xyz[atom.GetIdx()]),
                "element": "H",
            }
        )
        bonds.append((k, len(atoms) - 1))
    return atoms, bonds


def merged_pdb(sample_dir: Path) -> tuple[str, list[dict], list[dict]]:
    pid = sample_dir.name.lower()
    pocket = _read_pocket(sample_dir / f"{pid}_pocket.pdb")
    every = _read_pocket(sample_dir / f"{pid}_pocket.pdb", hydrogens=None)
    lig_atoms, lig_bonds = _sdf_hydrogens(
        sample_dir, *_read_mol2(sample_dir / f"{pid}_ligand.mol2")
    )
    code, chain, resnum = _ligand_identity(sample_dir)
    keep = [i for i, a in enumerate(lig_atoms) if a["element"] not in ("H", "D")]
    keep += [i for i, a in enumerate(lig_atoms) if a["element"] in ("H", "D")]
    lines = []
    serial = 0
    for a in every:
        serial += 1
        ln = a["line"].ljust(80)
        lines.append(f"ATOM  {serial:5d}{ln[11:80]}".rstrip())
    lines.append("TER")
    first = serial + 1
    new_serial = {}
    for i in keep:
        a = lig_atoms[i]
        serial += 1
        new_serial[i] = serial
        name = a["name"][:4]
        name = f" {name:<3s}" if len(name) < 4 and len(a["element"]) == 1 else f"{name:<4s}"
        x, y, z = a["xyz"]
        lines.append(
            f"HETATM{serial:5d} {name} {code:>3s} {(chain or ' ')[:1]}{resnum:4d}    "
            f"{x:8.3f}{y:8.3f}{z:8.3f}  1.00  0.00          {a['element'].upper():>2s}"
        )
    conect: dict[int, list[int]] = {}
    for i, j in lig_bonds:
        if i in new_serial and j in new_serial:
            conect.setdefault(new_serial[i], []).append(new_serial[j])
            conect.setdefault(new_serial[j], []).append(new_serial[i])
    for s in sorted(conect):
        partners = conect[s]
        for k in range(0, len(partners), 4):
            lines.append("CONECT" + f"{s:5d}" + "".join(f"{p:5d}" for p in partners[k : k + 4]))
    lines.append("END")
    del first
    heavy = [lig_atoms[i] for i in keep if lig_atoms[i]["element"] not in ("H", "D")]
    return "\n".join(lines) + "\n", pocket, heavy


def _nearest(xyz, atoms: list[dict], tol: float = 0.05) -> dict | None:
    ref = np.array([a["xyz"] for a in atoms])
    d = np.linalg.norm(ref - np.asarray(xyz, dtype=float), axis=1)
    k = int(np.argmin(d))
    return atoms[k] if d[k] <= tol else None


#: PLIP's short straight bonds (issue 23): D...A at most 3.3 Å and D-H...A at least 140 degrees,
#: which any H-bond criteria accept.
SHORT_DA = 3.3
STRAIGHT_DHA = 140.0


def reference_hbonds(sample_dir: Path) -> set[HBond]:
    """PLIP's protein-ligand hydrogen bonds of one sample directory, as
    (chain, res_name, res_number, protein_atom_name, ligand_atom_name) with heavy-atom names
    (the donor or acceptor heavy atom on each side)."""
    return reference_sets(sample_dir)["bonds"]


def reference_sets(sample_dir: Path) -> dict[str, set[HBond]]:
    """``{"bonds": PLIP's bonds, "candidates": its bonds + the geometric pairs it drops by its
    one-bond-per-donor and salt-bridge rules, "salt_bridges": the N/O pairs of its salt bridges'
    two charged groups closer than its H-bond limit (4.1 Å), "short_straight": its bonds with
    D...A <= 3.3 Å and D-H...A >= 140 degrees}`` of one sample directory."""
    from plip.basic import config  # noqa: PLC0415 (optional dependency, imported lazily)
    from plip.structure.preparation import PDBComplex  # noqa: PLC0415

    config.QUIET = True
    config.SILENT = True
    sample_dir = Path(sample_dir)
    text, pocket, ligand = merged_pdb(sample_dir)
    het = [ln for ln in text.splitlines() if ln.startswith("HETATM")]
    config.NOHYDRO = any(
        ln.startswith("ATOM") and ln[76:78].strip() == "H" for ln in text.splitlines()
    ) and any(ln[76:78].strip() == "H" for ln in het)
    config.NOFIX = config.NOHYDRO  # the setting with input hydrogens (NOHYDRO/NOFIX)
    code, _, _ = _ligand_identity(sample_dir)
    with tempfile.TemporaryDirectory() as tmp:
        pdb = Path(tmp) / f"{sample_dir.name.lower()}_merged.pdb"
        pdb.write_text(text)
        config.OUTPATH = tmp
        cx = PDBComplex()
        cx.output_path = tmp
        cx.load_pdb(str(pdb))
        cx.analyze()
        found: dict[str, set[HBond]] = {
            "bonds": set(),
            "candidates": set(),
            "salt_bridges": set(),
            "short_straight": set(),
        }
        for key, site in cx.interaction_sets.items():
            if key.split(":")[0] != code:
                continue
            for kind, bonds in (
                ("bonds", list(site.hbonds_ldon) + list(site.hbonds_pdon)),
                ("candidates", list(site.all_hbonds_ldon) + list(site.all_hbonds_pdon)),
            ):
                for hb in bonds:
                    prot_atom, lig_atom = (hb.d, hb.a) if hb.protisdon else (hb.a, hb.d)
                    p = _nearest(prot_atom.coords, pocket)
                    lg = _nearest(lig_atom.coords, ligand)
                    if p is None or lg is None:
                        continue
                    found[kind].add((p["chain"], p["res_name"], p["resnum"], p["name"], lg["name"]))
                    if kind == "bonds" and hb.distance_ad <= SHORT_DA and hb.angle >= STRAIGHT_DHA:
                        found["short_straight"].add(
                            (p["chain"], p["res_name"], p["resnum"], p["name"], lg["name"])
                        )
            for sb in list(site.saltbridge_lneg) + list(site.saltbridge_pneg):
                found["salt_bridges"] |= _salt_bridge_pairs(sb, pocket, ligand)
    found["candidates"] |= found["bonds"]
    return found


def _salt_bridge_pairs(sb, pocket: list[dict], ligand: list[dict]) -> set[HBond]:
    """N/O atom pairs of one PLIP salt bridge's two charged groups within PLIP's H-bond distance."""
    from plip.basic import config  # noqa: PLC0415

    prot_group, lig_group = (
        (sb.positive, sb.negative) if sb.protispos else (sb.negative, sb.positive)
    )
    pairs: set[HBond] = set()
    for pa in prot_group.atoms:
        for la in lig_group.atoms:
            if pa.atomicnum not in (7, 8) or la.atomicnum not in (7, 8):
                continue
            if np.linalg.norm(np.subtract(pa.coords, la.coords)) >= config.HBOND_DIST_MAX:
                continue
            p, lg = _nearest(pa.coords, pocket), _nearest(la.coords, ligand)
            if p is not None and lg is not None:
                pairs.add((p["chain"], p["res_name"], p["resnum"], p["name"], lg["name"]))
    return pairs


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args:
        dirs = [Path(a) for a in args]
    else:
        from misi_bench.builder.chemistry.samples import sample_refs  # noqa: PLC0415

        dirs = [r.path for r in sample_refs()]
    total = 0
    for d in dirs:
        bonds = sorted(reference_hbonds(d))
        total += len(bonds)
        print(f"{d.name.upper()}: {len(bonds)} H-bonds")
        for chain, res, num, patom, latom in bonds:
            print(f"    {res} {num} {patom} {chain or '-'}, {latom}")
    print(f"total {total} H-bonds in {len(dirs)} complexes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
