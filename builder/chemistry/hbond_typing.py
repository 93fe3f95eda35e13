"""Donor and acceptor typing of complex atoms for the hydrogen-bond detector (``hbonds``).

Protein atoms: the per-residue table of docs/spec.md section 3. Histidine ring N follow the input where
it carries hydrogens on that residue (N with H: donor only; N without: acceptor only); without
input hydrogens the tautomer is unknown and both ring N are donor and acceptor.

Ligand atoms: RDKit's chemical feature definitions (``BaseFeatures.fdef`` in ``RDConfig.RDDataDir``,
families ``Donor`` and ``Acceptor``) on the ligand's chemistry (bond orders, charges, hydrogens
of the input or implied by valence). Consequences of that definition, kept as they are: amide,
sulfonamide, aniline and other N-H nitrogens are donors, not acceptors; amine N are donors, not
acceptors; carbonyl, sulfonyl, ether and ester O are acceptors, nitro O are not; aromatic N
without H are acceptors. Protonation follows the input: a donor must carry a hydrogen, so the
file's azole tautomer donors (``n`` next to an ``nH``) are not used; only when the ligand file
has no hydrogens at all is an aliphatic tertiary amine (the file's protonated-amine donor) kept.
The file's two ``Atomtype`` lines (lower-case t: anionic O except nitro, aromatic o) are skipped
by RDKit's parser; we apply them as the file's comments intend (carboxylate, phenolate, furan O
are acceptors). Halogens are not counted (the question text names N, O and S), so the file's
fluorine acceptor is left out. Chemical rules on top (``ionisable_groups``):

* amidine, amidinium and guanidine groups (non-aromatic ``N-C=N``, pKa 11-13.5) are cations at
  pH 7 whatever tautomer the file draws: every group N with an H position (fewer than three heavy
  neighbours) is a donor and none is an acceptor; the input's hydrogens on them are not used;
* when the ligand file carries no hydrogens at all (crystal entries typed from the CCD, drawn
  neutral), carboxylic, sulfonic and phosphoric acid OH are taken as deprotonated (acceptor only).
"""

from __future__ import annotations

import functools
import os

import numpy as np

from .ligand import LigandData

# Protein donor/acceptor table (docs/spec.md section 3): (residue or '*', atom) -> (donor, acceptor).
_PROTEIN_POLAR: dict[tuple[str, str], tuple[bool, bool]] = {
    ("*", "N"): (True, False),
    ("PRO", "N"): (False, False),
    ("*", "O"): (False, True),
    ("*", "OXT"): (False, True),
    ("SER", "OG"): (True, True),
    ("THR", "OG1"): (True, True),
    ("TYR", "OH"): (True, True),
    ("ASN", "OD1"): (False, True),
    ("GLN", "OE1"): (False, True),
    ("ASN", "ND2"): (True, False),
    ("GLN", "NE2"): (True, False),
    ("HIS", "ND1"): (True, True),
    ("HIS", "NE2"): (True, True),
    ("LYS", "NZ"): (True, False),
    ("ARG", "NE"): (True, False),
    ("ARG", "NH1"): (True, False),
    ("ARG", "NH2"): (True, False),
    ("TRP", "NE1"): (True, False),
    ("ASP", "OD1"): (False, True),
    ("ASP", "OD2"): (False, True),
    ("GLU", "OE1"): (False, True),
    ("GLU", "OE2"): (False, True),
    ("CYS", "SG"): (True, False),
    ("MET", "SD"): (False, True),
}


_HIS_RING_N = frozenset({"ND1", "NE2"})


def protein_polarity(
    res_name: str, atom_name: str, n_input_h: int | None = None
) -> tuple[bool, bool]:
    """(is_donor, is_acceptor) of a protein heavy atom from the per-residue table.

    ``n_input_h``: hydrogens the input puts on this atom, or None when the input has no hydrogens
    on the residue; it decides the histidine tautomer (see the module docstring)."""
    if res_name == "HIS" and atom_name in _HIS_RING_N and n_input_h is not None:
        return (n_input_h > 0, n_input_h == 0)
    key = (res_name, atom_name)
    if key in _PROTEIN_POLAR:
        return _PROTEIN_POLAR[key]
    return _PROTEIN_POLAR.get(("*", atom_name), (False, False))


#: Hydrogens on protein donor atoms when the input has none (HIS ring N: one, either tautomer).
_PROTEIN_DONOR_H = {
    "N": 1,
    "ND2": 2,
    "NH1": 2,
    "NH2": 2,
    "NE": 1,
    "NZ": 3,
    "NE1": 1,
    "ND1": 1,
    "OG": 1,
    "OG1": 1,
    "OH": 1,
    "SG": 1,
}


def protein_donor_h(res_name: str, atom_name: str, n_input_h: int | None) -> int:
    """Hydrogens a protein donor atom carries: the input's count, else the residue chemistry's."""
    if n_input_h is not None:
        return n_input_h
    if atom_name == "NE2":
        return 2 if res_name == "GLN" else 1
    return _PROTEIN_DONOR_H.get(atom_name, 1)


def ligand_donor_h(lig: LigandData, donor: np.ndarray) -> np.ndarray:
    """Hydrogens each ligand donor carries (0 for non-donors): the ligand's count, at least one
    (a donor typed as protonated), and for amidinium/guanidinium N one per free valence."""
    counts = np.where(donor, np.maximum(lig.n_hydrogens, 1), 0)
    amidine_n, _ = ionisable_groups(lig)
    for i in amidine_n:
        heavy = sum(1 for a, b in lig.bonds if i in (a, b))
        counts[i] = max(3 - heavy, 0) if donor[i] else 0
    return counts.astype(np.int64)


@functools.lru_cache(maxsize=1)
def _feature_factory():
    from rdkit import RDConfig  # noqa: PLC0415 (heavy import kept out of import time)
    from rdkit.Chem import ChemicalFeatures  # noqa: PLC0415

    return ChemicalFeatures.BuildFeatureFactory(
        os.path.join(RDConfig.RDDataDir, "BaseFeatures.fdef")
    )


def _typing_mol(lig: LigandData):
    """RDKit molecule of the ligand's heavy atoms with their hydrogen counts as explicit Hs."""
    from rdkit import Chem  # noqa: PLC0415

    rw = Chem.RWMol()
    for el, q, n_h, arom in zip(lig.elements, lig.charges, lig.n_hydrogens, lig.aromatic):
        atom = Chem.Atom(el if el != "X" else "*")
        atom.SetFormalCharge(int(q))
        atom.SetNumExplicitHs(int(n_h))
        atom.SetNoImplicit(True)
        atom.SetIsAromatic(bool(arom))
        rw.AddAtom(atom)
    kinds = {
        1: Chem.BondType.SINGLE,
        2: Chem.BondType.DOUBLE,
        3: Chem.BondType.TRIPLE,
        4: Chem.BondType.AROMATIC,
    }
    for (a, b), order in zip(lig.bonds, lig.orders):
        rw.AddBond(int(a), int(b), kinds.get(int(order), Chem.BondType.SINGLE))
        if int(order) == 4:
            rw.GetBondBetweenAtoms(int(a), int(b)).SetIsAromatic(True)
    mol = rw.GetMol()
    mol.UpdatePropertyCache(strict=False)
    Chem.FastFindRings(mol)
    return mol


_AMIDINE_CENTRE = "[CX3;!a;$(C(=[#7;!a])-[#7;!a])]"
_ACID_OH = "[OX2;H1]-[$([CX3]=[OX1]),$([SX4]=[OX1]),$([PX4]=[OX1])]"
_ACYL_N = "[#7]-[C,S,P]=[O,S]"
_TERTIARY_AMINE = "[NX3;H0;+0;!a;!$(N-[a]);!$(N-[C,S,P]=[O,S,N])](-[CX4])(-[CX4])-[CX4]"


def ionisable_groups(lig: LigandData, mol=None) -> tuple[set[int], set[int]]:
    """(N atoms of amidine/amidinium/guanidine groups, acid OH oxygens) of the ligand."""
    from rdkit import Chem  # noqa: PLC0415

    mol = _typing_mol(lig) if mol is None else mol
    acyl = {m[0] for m in mol.GetSubstructMatches(Chem.MolFromSmarts(_ACYL_N))}
    amidine_n: set[int] = set()
    for (c,) in mol.GetSubstructMatches(Chem.MolFromSmarts(_AMIDINE_CENTRE)):
        group = [
            nb.GetIdx()
            for nb in mol.GetAtomWithIdx(c).GetNeighbors()
            if nb.GetAtomicNum() == 7 and not nb.GetIsAromatic()
        ]
        if len(group) >= 2 and not acyl & set(group):
            amidine_n.update(group)
    acid_o = {m[0] for m in mol.GetSubstructMatches(Chem.MolFromSmarts(_ACID_OH))}
    return amidine_n, acid_o


def tertiary_amines(lig: LigandData) -> set[int]:
    """Aliphatic tertiary amine N of the ligand (taken as protonated when the file has no
    hydrogens at all)."""
    from rdkit import Chem  # noqa: PLC0415

    if not len(lig.elements):
        return set()
    mol = _typing_mol(lig)
    return {m[0] for m in mol.GetSubstructMatches(Chem.MolFromSmarts(_TERTIARY_AMINE))}


def ligand_polarity(lig: LigandData) -> tuple[np.ndarray, np.ndarray]:
    """(is_donor, is_acceptor) of ligand heavy atoms (see the module docstring)."""
    from rdkit import Chem  # noqa: PLC0415

    n = len(lig.elements)
    donor = np.zeros(n, dtype=bool)
    acceptor = np.zeros(n, dtype=bool)
    if n == 0:
        return donor, acceptor
    mol = _typing_mol(lig)
    factory = _feature_factory()
    for family, mask in (("Donor", donor), ("Acceptor", acceptor)):
        for feat in factory.GetFeaturesForMol(mol, includeOnly=family):
            mask[list(feat.GetAtomIds())] = True
    for atom in mol.GetAtoms():
        i = atom.GetIdx()
        if lig.elements[i] not in ("N", "O", "S"):
            donor[i] = acceptor[i] = False
        elif lig.elements[i] == "O" and (
            atom.GetIsAromatic()
            and atom.GetFormalCharge() == 0
            or (
                atom.GetFormalCharge() < 0
                and not any(nb.GetAtomicNum() == 7 for nb in atom.GetNeighbors())
            )
        ):
            acceptor[i] = True
    # protonation follows the input: a donor carries a hydrogen (the file's two tautomer rules for
    # azole n next to an nH are not used); only without input hydrogens are aliphatic amines
    # without H (the file's protonated tertiary amine) kept as donors
    tertiary_amine = {m[0] for m in mol.GetSubstructMatches(Chem.MolFromSmarts(_TERTIARY_AMINE))}
    for i in range(n):
        if donor[i] and lig.n_hydrogens[i] == 0 and (len(lig.h_coords) or i not in tertiary_amine):
            donor[i] = False
    amidine_n, acid_o = ionisable_groups(lig, mol)
    for i in amidine_n:
        donor[i] = (
            sum(1 for nb in mol.GetAtomWithIdx(i).GetNeighbors() if nb.GetAtomicNum() > 1) < 3
        )
        acceptor[i] = False
    if not len(lig.h_coords):
        for i in acid_o:
            donor[i], acceptor[i] = False, True
    return donor, acceptor
