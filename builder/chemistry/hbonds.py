"""Geometric hydrogen-bond detection between pocket residues and the ligand (docs/spec.md section 3).

Two modes (``HBOND_MODES``; ``--hbonds`` of the build, recorded in its manifest and card):

* ``chimerax`` (default): ChimeraX's criteria, the Mills & Dean (1996) donor and acceptor classes
  with the recommended relaxation (0.4 Å, 20 degrees), as the paper made its truths; see
  ``mills_dean`` and docs/hbonds.md. Ligand hydrogens from the MOL2 (the file whose atom names the
  answers use, so the file the paper loaded), protein hydrogens from the pocket file.
* ``plip``: the earlier flat rule below, for PLIP-comparable truths (ligand hydrogens from the
  SDF, as before).

Both modes take rotatable hydrogens (OH, SH, NH3+) where the input models them;
``hbond_rotamers.rotamer_sensitive`` lists the bonds whose existence depends on that (the audit
reports them).

Definition of the ``plip`` mode:

* Donors and acceptors come from the ``Complex`` record (``hbond_typing``): protein atoms from the
  per-residue table, His ring N by their input hydrogens where the input has them; ligand atoms
  by RDKit's ``BaseFeatures.fdef`` definitions, amidine/guanidine groups as cations.
* Distance: donor-acceptor heavy-atom distance at most ``MAX_DISTANCE`` = 4.1 Å (PLIP's limit,
  Hubbard & Haider's 3.5 Å + 0.6). Chosen on evidence (``hbond_report --sweep``): against PLIP on
  the tuned samples and on complexes not tuned on, 4.1 Å raises recall by 0.05-0.24 over 3.9 Å
  with precision within 0.01 or higher, 4.3 Å adds no recall and loses precision; the pairs at
  3.9-4.1 Å are mostly neutral backbone N-H...O, so a type-dependent limit (longer only for S or
  charged pairs) would not recover them. The D-H...A test below keeps such long pairs to hydrogens that point
  at the acceptor: Jeffrey's weak, mostly electrostatic H-bonds (D...A 3.2-4.0 Å and beyond).
* Angle, where the donor's hydrogens are known: the D-H...A angle must be at least
  120 - 20 = 100 degrees. Known means given by the input (protein polar H of protonated PDB
  files, ligand H of the SDF; on every donor, rotatable OH/SH/NH3+ included, except amidine and
  guanidine N whose drawn tautomer is arbitrary), or placed from the heavy-atom frame for planar
  N donors without input H (peptide, amide, aromatic, aniline N: one H on the outer bisector, or
  two at 120 degrees in the plane of an NH2). A known hydrogen bonds every acceptor it points at
  (three-centre, bifurcated H-bonds are common in crystal structures, Jeffrey & Saenger).
* Otherwise (rotatable donors without input H): every angle between a heavy-atom neighbour of the
  donor, the donor and the acceptor, and every angle between a heavy-atom neighbour of the
  acceptor, the acceptor and the donor, must be at least 90 - 20 = 70 degrees; such a donor bonds
  at most its ``donor_h`` nearest acceptors (D...A), one per hydrogen it carries, since where
  its hydrogens point is unknown.
* Not an H-bond: a pair whose two atoms both coordinate the same metal ion (pocket ion or a metal
  of the ligand such as haem iron; within ``METAL_COORDINATION_MAX`` = 3.0 Å of it).

Why this differs from ChimeraX's finder (which the paper used): ChimeraX uses per-atom-type
angle and distance tables and adds hydrogens itself; we use one distance and the tests above.
``scripts.hbond_report`` measures the agreement with PLIP (an independent
implementation) on the samples and on a held-out set.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.constants import DEFAULT_HBOND_MODE, HBOND_MODES
from ..core.errors import InputError
from ..core.records import Complex
from . import mills_dean
from .hbond_limits import CHIMERAX_METALS
from .idatm import phosphate_hydroxyls
from .modified import STANDARD_PARENTS, parent_of
from .protein import METAL_ELEMENTS


def check_mode(mode: str) -> str:
    """``mode`` if it is one of ``HBOND_MODES``; otherwise a ``ValueError`` naming the choices."""
    if mode not in HBOND_MODES:
        raise ValueError(f"unknown H-bond mode {mode!r}: expected one of {', '.join(HBOND_MODES)}")
    return mode


MAX_DISTANCE = 4.1
MIN_DHA_ANGLE = 120.0 - 20.0
MIN_NEIGHBOUR_ANGLE = 90.0 - 20.0
#: An atom this close to a metal ion (Å) coordinates it (PLIP's limit, after Harding 2001).
METAL_COORDINATION_MAX = 3.0


@dataclass(frozen=True, order=True)
class HBond:
    """One protein-ligand hydrogen bond. Sort order is the canonical answer order:
    chain, residue number, insertion code, protein atom name, ligand atom name."""

    chain: str
    res_number: int
    ins_code: str
    protein_atom_name: str
    ligand_atom_name: str
    res_name: str
    protein_atom: int
    ligand_atom: int
    donor_side: str  # "protein" or "ligand"
    distance: float

    def pocket_text(self) -> str:
        """``RES NUM ATOM CHAIN, LIGATOM`` (T9, T8)."""
        residue = f"{self.res_name} {self.res_number}{self.ins_code}"
        return f"{residue} {self.protein_atom_name} {self.chain}, {self.ligand_atom_name}"

    def residue_text(self) -> str:
        """``RES ATOM, LIGATOM`` (T4)."""
        return f"{self.res_name} {self.protein_atom_name}, {self.ligand_atom_name}"


def format_pocket_answer(bonds: list[HBond] | tuple[HBond, ...]) -> str:
    """T9 answer: every bond in canonical order, ``; ``-separated, or ``None``."""
    return "; ".join(b.pocket_text() for b in sorted(bonds)) if bonds else "None"


def format_residue_answer(bonds: list[HBond] | tuple[HBond, ...]) -> str:
    """T4 answer: ``No`` or ``Yes: RES ATOM, LIGATOM; ...`` in canonical order."""
    return "Yes: " + "; ".join(b.residue_text() for b in sorted(bonds)) if bonds else "No"


def _angle(a: np.ndarray, vertex: np.ndarray, b: np.ndarray) -> float:
    u, v = a - vertex, b - vertex
    denom = float(np.linalg.norm(u) * np.linalg.norm(v))
    if denom == 0.0:
        return 180.0
    return float(np.degrees(np.arccos(np.clip(np.dot(u, v) / denom, -1.0, 1.0))))


def _neighbours(cx: Complex) -> list[list[int]]:
    nbrs: list[list[int]] = [[] for _ in range(cx.n_atoms)]
    for a, b in cx.bonds:
        nbrs[int(a)].append(int(b))
        nbrs[int(b)].append(int(a))
    return nbrs


_PLANAR_PROTEIN_NH2 = frozenset({"ND2", "NE2", "NH1", "NH2"})
N_H_LENGTH = 1.01  # Å


def _hydrogens_fixed(cx: Complex, donor: int, nbrs: list[list[int]], sp2: np.ndarray) -> bool:
    """True when the donor's hydrogen positions follow from its heavy-atom frame: a planar
    (sp2 or aromatic) N with one or two heavy neighbours, e.g. a peptide, amide, aromatic or
    aniline N-H. False for rotatable groups (OH, SH, NH3+, sp3 amines)."""
    if cx.elements[donor] != "N" or not 1 <= len(nbrs[donor]) <= 2:
        return False
    if not cx.is_ligand[donor]:
        name = str(cx.atom_names[donor])
        return name in _PLANAR_PROTEIN_NH2 or len(nbrs[donor]) == 2
    return bool(sp2[donor]) or any(sp2[n] for n in nbrs[donor])


def donor_hydrogen_source(cx: Complex, donor: int) -> str:
    """Where the detector takes a donor's hydrogens from: ``"input"`` (the input file),
    ``"placed"`` (a planar N without input hydrogens: placed from the heavy-atom frame) or
    ``"unknown"`` (a rotatable donor without input hydrogens: judged by heavy-atom angles)."""
    if donor in set(cx.h_parent.tolist()):
        return "input"
    nbrs = _neighbours(cx)
    sp2 = np.zeros(cx.n_atoms, dtype=bool)
    sp2[cx.bonds[cx.bond_orders > 1].ravel()] = True
    return "placed" if _hydrogens_fixed(cx, donor, nbrs, sp2) else "unknown"


def _placed_hydrogens(cx: Complex, donor: int, nbrs: list[list[int]]) -> list[np.ndarray]:
    """Ideal positions of the hydrogens of a planar N donor without input hydrogens: one on the
    outer bisector of two neighbours, or two in the plane of an NH2 at 120 degrees."""
    n_pos = cx.coords[donor]
    units = [(cx.coords[k] - n_pos) / np.linalg.norm(cx.coords[k] - n_pos) for k in nbrs[donor]]
    if len(units) == 2:
        d = -(units[0] + units[1])
        norm = np.linalg.norm(d)
        return [n_pos + N_H_LENGTH * d / norm] if norm > 1e-6 else []
    x = nbrs[donor][0]
    others = [k for k in nbrs[x] if k != donor]
    b = units[0]
    ref = cx.coords[others[0]] - cx.coords[x] if others else np.cross(b, [1.0, 0.0, 0.0])
    normal = np.cross(b, ref)
    if np.linalg.norm(normal) < 1e-6:
        return []
    p = np.cross(normal / np.linalg.norm(normal), b)
    p /= np.linalg.norm(p)
    count = int(cx.donor_h[donor]) if len(cx.donor_h) else 2
    hs = [n_pos + N_H_LENGTH * (-0.5 * b + sign * 0.8660254 * p) for sign in (1.0, -1.0)]
    return hs[: max(count, 1)] if count < 2 else hs


def _metal_partners(cx: Complex) -> list[set[int]]:
    """For each metal atom of ``cx`` (a pocket ion or a metal inside the ligand, e.g. haem iron),
    the N/O/S atoms within ``METAL_COORDINATION_MAX`` Å that coordinate it."""
    metals = np.flatnonzero(np.isin(cx.elements, sorted(METAL_ELEMENTS)))
    if not len(metals):
        return []
    polar = np.flatnonzero(np.isin(cx.elements, ("N", "O", "S")))
    d = np.linalg.norm(cx.coords[metals][:, None] - cx.coords[polar][None], axis=2)
    return [set(polar[row <= METAL_COORDINATION_MAX].tolist()) for row in d]


ONE_PER_HYDROGEN = ("unknown", "all", "none")


def detect_hbonds(cx: Complex, mode: str = DEFAULT_HBOND_MODE, **plip_options) -> tuple[HBond, ...]:
    """All pocket-ligand hydrogen bonds of ``cx`` in canonical order, by ``mode`` (see the module
    docstring). ``plip_options`` go to ``detect_plip_hbonds`` (``plip`` mode only)."""
    check_mode(mode)
    if mode == "plip":
        return detect_plip_hbonds(cx, **plip_options)
    if plip_options:
        raise ValueError(f"options {sorted(plip_options)} apply to the plip mode only")
    return detect_chimerax_hbonds(cx)


def chimerax_graph(
    cx: Complex, h_coords: np.ndarray | None = None, h_parent: np.ndarray | None = None
) -> mills_dean.Graph:
    """The ``mills_dean.Graph`` of ``cx``: its IDATM-style types and hydrogen counts, protein
    hydrogens of the pocket file, ligand hydrogens of the MOL2 (of the SDF where the MOL2 has
    none). Raises ``InputError`` naming the complex for an atom without a type template."""
    if len(cx.atom_types) != cx.n_atoms:
        raise InputError(
            cx.source, "complex carries no atom types (needed by the chimerax H-bond mode)"
        )
    untyped = np.flatnonzero(cx.atom_types == "?")
    if len(untyped):
        k = int(untyped[0])
        raise InputError(
            cx.source,
            f"residue {cx.res_names[k]} {cx.res_numbers[k]}{cx.ins_codes[k]} "
            f"{cx.chain_ids[k]} atom {cx.atom_names[k]} has no atom-type template "
            "(chimerax H-bond mode)",
        )
    if h_coords is None:
        h_coords, h_parent = chimerax_hydrogens(cx)
    types, h_count = _terminal_n_types(cx, h_parent)
    # ChimeraX's long terminal P-O is an OH: O3 with one hydrogen it does not place (its hydroxyl
    # donor pattern matches an O3 whose H is missing)
    for o in phosphate_hydroxyls(types, cx.elements, cx.coords, cx.bonds, h_count, h_parent):
        types[o], h_count[o] = "O3", 1
    # protein atoms are typed by template, so their substituents are complete; histidine ring N
    # without a hydrogen stay open (ChimeraX's template types both Npl: an H-less one may carry
    # an inferred H)
    open_his = (
        (cx.res_names == "HIS")
        & np.isin(cx.atom_names, ("ND1", "NE2"))
        & (types == "Npl")
        & (h_count == 0)
    )
    saturated = ~cx.is_ligand & ~open_his
    return mills_dean.Graph(
        cx.coords,
        cx.elements,
        types,
        cx.bonds,
        h_count,
        h_coords,
        h_parent,
        saturated=saturated,
    )


def _terminal_n_types(cx: Complex, h_parent: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Atom types and hydrogen counts with each segment's first backbone N typed ``N3+``.

    ChimeraX's residue templates type N ``N3+`` when it "doesn't connect to another residue"
    (the ``N.`` condition of its ``.idatmres`` files). The paper loaded PDBbind's pocket file,
    which cuts the chains, so there every segment's first N is such an N; our pocket is the same
    whole-residue cut. Its hydrogens as ChimeraX meets them in a protonated pocket file: a
    proline N's two free tetrahedral positions (ChimeraX infers both: its secondary ammonium
    class matches without explicit H), any other N's backbone H (the input's, else one)."""
    types, h_count = cx.atom_types.copy(), cx.h_count.copy()
    protein = ~cx.is_ligand & (cx.residue_index >= 0)
    n_atoms = np.flatnonzero(protein & (cx.atom_names == "N"))
    if not len(n_atoms):
        return types, h_count
    bonds = np.asarray(cx.bonds, dtype=np.int64).reshape(-1, 2)
    pairs = np.vstack([bonds, bonds[:, ::-1]])  # (n, c) both ways
    n_end, c_end = pairs[:, 0], pairs[:, 1]
    peptide = (
        (cx.atom_names[n_end] == "N")
        & (cx.atom_names[c_end] == "C")
        & protein[n_end]
        & protein[c_end]
        & (cx.residue_index[n_end] != cx.residue_index[c_end])
    )
    linked = set(n_end[peptide].tolist())
    res_with_h = set(cx.residue_index[h_parent[~cx.is_ligand[h_parent]]].tolist())
    for n in n_atoms:
        if int(n) in linked:
            continue
        types[n] = "N3+"
        name = str(cx.res_names[n])
        if name == "PRO" or (name not in STANDARD_PARENTS and parent_of(name) == "PRO"):
            h_count[n] = 2
        elif int(cx.residue_index[n]) not in res_with_h:
            h_count[n] = 1
    return types, h_count


def chimerax_hydrogens(cx: Complex) -> tuple[np.ndarray, np.ndarray]:
    """The explicit hydrogens the ``chimerax`` mode uses: the pocket file's on protein atoms, the
    MOL2's on ligand atoms (the SDF's where the MOL2 draws none)."""
    on_protein = ~cx.is_ligand[cx.h_parent] if len(cx.h_parent) else np.zeros(0, dtype=bool)
    coords, parents = [cx.h_coords[on_protein]], [cx.h_parent[on_protein]]
    if len(cx.mol2_h_parent):
        coords.append(cx.mol2_h_coords)
        parents.append(cx.mol2_h_parent)
    else:
        coords.append(cx.h_coords[~on_protein])
        parents.append(cx.h_parent[~on_protein])
    return np.vstack(coords).reshape(-1, 3), np.concatenate(parents).astype(np.int64)


def detect_chimerax_hbonds(cx: Complex, graph: mills_dean.Graph | None = None) -> tuple[HBond, ...]:
    """Pocket-ligand H-bonds by ChimeraX's criteria (``mills_dean``), plus the metal rule of
    docs/spec.md section 3."""
    lig, pocket = cx.ligand_indices, cx.pocket_indices
    if not len(lig) or not len(pocket):
        return ()
    g = graph if graph is not None else chimerax_graph(cx)
    polar = np.isin(cx.elements, ("N", "O", "S"))
    near = _near_other_side(cx, mills_dean.SEARCH_RADIUS)
    p_atoms = [int(k) for k in pocket if polar[k] and near[k]]
    l_atoms = [int(k) for k in lig if polar[k] and near[k]]
    # ChimeraX's metals (its wider element list), each paired with the acceptors of its own
    # model: the paper loaded the pocket and the ligand as two models
    metals = [int(k) for k in np.flatnonzero(np.isin(cx.elements, sorted(CHIMERAX_METALS)))]
    models = cx.is_ligand.astype(np.int64)
    bridged = _metal_partners(cx)
    found: dict[tuple[int, int], HBond] = {}
    for side, donors, acceptors in (("protein", p_atoms, l_atoms), ("ligand", l_atoms, p_atoms)):
        for don, acc in mills_dean.find_pairs(g, donors, acceptors, metals, models):
            if any(don in group and acc in group for group in bridged):
                continue
            prot, ligand_atom = (don, acc) if side == "protein" else (acc, don)
            bond = _make_bond(cx, prot, ligand_atom, side)
            found.setdefault((prot, ligand_atom), bond)
    return tuple(sorted(found.values()))


def _near_other_side(cx: Complex, radius: float) -> np.ndarray:
    """Atoms within ``radius`` Å of some atom of the other side (pocket vs ligand)."""
    lig, pocket = cx.ligand_indices, cx.pocket_indices
    d = np.linalg.norm(cx.coords[pocket][:, None] - cx.coords[lig][None], axis=2)
    near = np.zeros(cx.n_atoms, dtype=bool)
    near[pocket[(d <= radius).any(axis=1)]] = True
    near[lig[(d <= radius).any(axis=0)]] = True
    return near


def _make_bond(
    cx: Complex, prot: int, ligand_atom: int, side: str, distance: float | None = None
) -> HBond:
    """The bond between pocket atom ``prot`` and ligand atom ``ligand_atom``; ``distance`` (Å)
    where the caller has it already, else measured here; stored rounded to 0.001 Å."""
    res = cx.residues[int(cx.residue_index[prot])]
    if distance is None:
        distance = float(np.linalg.norm(cx.coords[prot] - cx.coords[ligand_atom]))
    dist = round(float(distance), 3)
    return HBond(
        res.chain,
        res.number,
        res.ins_code,
        str(cx.atom_names[prot]),
        str(cx.atom_names[ligand_atom]),
        res.name,
        prot,
        ligand_atom,
        side,
        dist,
    )


def detect_plip_hbonds(
    cx: Complex,
    max_distance: float = MAX_DISTANCE,
    min_dha: float = MIN_DHA_ANGLE,
    min_neighbour_angle: float = MIN_NEIGHBOUR_ANGLE,
    rotatable_h: bool = True,
    one_per_hydrogen: str = "unknown",
) -> tuple[HBond, ...]:
    """All pocket-ligand hydrogen bonds of ``cx`` by the ``plip`` mode's rule (module docstring).

    ``rotatable_h=False`` ignores input hydrogens on rotatable donors (OH, SH, NH3+) and judges
    those by heavy-atom angles (the pre-0.2 rule). ``one_per_hydrogen``: ``"unknown"`` (default)
    limits only donors whose hydrogens are unknown to their ``donor_h`` nearest acceptors (a
    known hydrogen bonds every acceptor it points at: bifurcated bonds); ``"all"`` also limits each
    known hydrogen to its nearest acceptor (the 0.2 rule); ``"none"`` limits nothing. The other
    values are kept for the agreement report."""
    if one_per_hydrogen not in ONE_PER_HYDROGEN:
        raise ValueError(
            f"one_per_hydrogen must be one of {ONE_PER_HYDROGEN}, not {one_per_hydrogen!r}"
        )
    lig = cx.ligand_indices
    pocket = cx.pocket_indices
    if not len(lig) or not len(pocket):
        return ()
    nbrs = _neighbours(cx)
    sp2 = np.zeros(cx.n_atoms, dtype=bool)  # atoms with a double, triple or aromatic bond
    multiple = cx.bond_orders > 1
    sp2[cx.bonds[multiple].ravel()] = True
    h_of: dict[int, list[np.ndarray]] = {}
    for k, parent in enumerate(cx.h_parent):
        h_of.setdefault(int(parent), []).append(cx.h_coords[k])
    bridged = _metal_partners(cx)
    # donor -> [(slot, rank, bond)]: slot is the donor hydrogen used (None when unknown)
    by_donor: dict[int, list[tuple[int | None, float, HBond]]] = {}
    for side, donors, acceptors in (
        ("protein", pocket[cx.is_donor[pocket]], lig[cx.is_acceptor[lig]]),
        ("ligand", lig[cx.is_donor[lig]], pocket[cx.is_acceptor[pocket]]),
    ):
        if not len(donors) or not len(acceptors):
            continue
        d = np.linalg.norm(cx.coords[donors][:, None] - cx.coords[acceptors][None], axis=2)
        for i, j in zip(*np.nonzero(d <= max_distance)):
            don, acc = int(donors[i]), int(acceptors[j])
            if any(don in group and acc in group for group in bridged):
                continue  # both coordinate the same metal ion: a metal bridge, not an H-bond
            slot = _geometry(
                cx, don, acc, nbrs, sp2, h_of, min_dha, min_neighbour_angle, rotatable_h
            )
            if slot is False:
                continue
            prot, ligand_atom = (don, acc) if side == "protein" else (acc, don)
            bond = _make_bond(cx, prot, ligand_atom, side, d[i, j])
            rank = (
                float(np.linalg.norm(h_of[don][slot] - cx.coords[acc]))
                if slot is not None
                else float(d[i, j])
            )
            by_donor.setdefault(don, []).append((slot, rank, bond))
    found: list[HBond] = []
    for don, pairs in by_donor.items():
        limited = one_per_hydrogen == "all" or (
            one_per_hydrogen == "unknown" and pairs[0][0] is None
        )
        found.extend(_one_per_hydrogen(cx, don, pairs) if limited else [b for _, _, b in pairs])
    # an atom pair can be both donor->acceptor and acceptor->donor (e.g. SER OG with a ligand OH)
    unique = {
        (b.protein_atom, b.ligand_atom): b
        for b in sorted(found, key=lambda b: b.distance, reverse=True)
    }
    return tuple(sorted(unique.values()))


def _one_per_hydrogen(
    cx: Complex, don: int, pairs: list[tuple[int | None, float, HBond]]
) -> list[HBond]:
    """Each donor hydrogen makes one H-bond: with known hydrogens, the acceptor nearest each H;
    otherwise the donor's ``donor_h`` nearest acceptors (all of them when the count is unknown)."""
    pairs = sorted(pairs, key=lambda p: (p[1], p[2]))
    if pairs[0][0] is not None:
        best: dict[int, HBond] = {}
        for slot, _, bond in pairs:
            best.setdefault(slot, bond)
        return list(best.values())
    capacity = int(cx.donor_h[don]) if len(cx.donor_h) else len(pairs)
    return [b for _, _, b in pairs[: max(capacity, 1)]]


def _geometry(
    cx: Complex,
    don: int,
    acc: int,
    nbrs: list[list[int]],
    sp2: np.ndarray,
    h_of: dict[int, list[np.ndarray]],
    min_dha: float,
    min_neighbour_angle: float,
    rotatable_h: bool = True,
) -> int | None | bool:
    """False when the pair fails the angle tests; else the index of the donor hydrogen used
    (in ``h_of[don]``), or None when the hydrogens are unknown or not used. Planar N donors
    without input hydrogens get theirs placed (``_placed_hydrogens``) first."""
    pd, pa = cx.coords[don], cx.coords[acc]
    fixed = _hydrogens_fixed(cx, don, nbrs, sp2)
    if don not in h_of and fixed:
        h_of[don] = _placed_hydrogens(cx, don, nbrs)
    hydrogens = h_of.get(don, [])
    if hydrogens and (rotatable_h or fixed):
        angle, k = max((_angle(pd, h, pa), k) for k, h in enumerate(hydrogens))
        return k if angle >= min_dha else False
    if any(_angle(cx.coords[n], pd, pa) < min_neighbour_angle for n in nbrs[don]):
        return False
    if all(_angle(cx.coords[n], pa, pd) >= min_neighbour_angle for n in nbrs[acc]):
        return None
    return False
