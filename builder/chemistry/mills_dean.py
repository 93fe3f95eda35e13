"""Hydrogen bonds by ChimeraX's criteria: the ``chimerax`` mode of ``hbonds.detect_hbonds``.

The numbers and rules are those of Mills & Dean, "Three-dimensional hydrogen-bond geometry and
probability information from a crystal survey", J. Comput.-Aided Mol. Des. 10 (1996) 607-622,
as UCSF ChimeraX's ``hbonds`` command applies them (public bundle ``src/bundles/hbonds`` of
RBVI/ChimeraX: ``hbond.py`` holds the donor/acceptor class tables and the generic fallbacks,
``acceptor_geom.py`` / ``donor_geom.py`` / ``common_geom.py`` the geometric tests, ``hydpos.py``
the hydrogen positions). This is our own code written from those published numbers and rules.

A donor D and an acceptor A are H-bonded when both the acceptor's class test and the donor's
class test pass (either failing rejects the pair):

* distances (D...A, or H...A where the class gives an H distance) at most the table value plus
  ``DIST_SLOP`` = 0.4 Å, angles at least the table value minus ``ANGLE_SLOP`` = 20 degrees (upper
  angle limits, written negative in the tables, widen by the same 20 degrees), ChimeraX's
  recommended relaxation, which the paper used;
* hydrogens: explicit ones where the input has them (a hydroxyl with an explicit H bonds only
  where that H points: the D-H...A angle must reach the class's theta), otherwise positions
  inferred where the heavy-atom frame fixes them (``hydrogen_positions``), otherwise none, in
  which case the D-H...A tests are skipped and classes that need an H distance fail;
* sulfur: distances grow by 0.35 Å for a sulfur donor (acceptor tests) or sulfur acceptor (the
  generic donor test), as ChimeraX does;
* metals: an acceptor within 4.0 Å of a metal ion is not bonded when the D...A...metal angle is
  below 45 degrees; a planar N acceptor/donor within 4.0 Å of a metal is no donor (both
  ChimeraX's rules); and as in the ``plip`` mode a pair whose two atoms both coordinate the same
  metal (within 3.0 Å) is not an H-bond (SPEC section 3).

Atom classes come from IDATM-style types (``idatm``) and the neighbour patterns of ChimeraX's
tables (``donor_class`` / ``acceptor_class``); atoms matching no class are generic donors or
acceptors with ChimeraX's generic limits. Every class's limits are listed in docs/hbonds.md.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .idatm import LINEAR, PLANAR, SINGLE, TETRAHEDRAL, geometry, substituents

DIST_SLOP = 0.4
ANGLE_SLOP = 20.0
SULFUR_COMP = 0.35
METAL_ACCEPTOR_RANGE = 4.0
METAL_MIN_ANGLE = 45.0
#: Covalent X-H lengths (Å) for inferred hydrogens.
XH_LENGTH = {"N": 1.01, "O": 0.96, "S": 1.34, "C": 1.09}
#: Pairs farther apart than this (Å) are not tested (above every relaxed limit).
SEARCH_RADIUS = 4.8


def relax(values, dist_slop: float = DIST_SLOP, angle_slop: float = ANGLE_SLOP) -> tuple:
    """A class's limits with the relaxation applied, by ChimeraX's convention for its tables:
    a number between 0 and 7.5 is a distance (Å, slop added), any other number an angle in
    degrees (slop subtracted; a negative number is an upper limit written as its negative, so it
    goes down too, to at most -180); None stays None."""
    out = []
    for v in values:
        if v is None or isinstance(v, str):
            out.append(v)
        elif 0.0 < v < 7.5:
            out.append(v + dist_slop)
        elif v < 0.0:
            out.append(max(v - angle_slop, -180.0))
        else:
            out.append(max(v - angle_slop, 0.0))
    return tuple(out)


# ------------------------------------------------------------------------------------------
# class tables (Mills & Dean 1996 via ChimeraX hbond.py): published limits, unrelaxed

#: donor classes: name -> (test, tau symmetry, limits). ``upsilon_tau`` limits: for a planar O
#: acceptor (D...A, upsilon min, -upsilon max, theta, tau), a tetrahedral O / planar N acceptor
#: (same + phi), a tetrahedral N acceptor (same + upsilon at N); ``theta_tau``: (H...A, theta)
#: for planar O, (H...A, theta, phi) for tetrahedral O / planar N, (H...A, theta, upsilon at N)
#: for tetrahedral N.
DONOR_CLASSES: dict[str, tuple[str, int, tuple]] = {
    "carboxylic acid OH": ("upsilon_tau", 2, (2.87, 103, -128, 140, -30, 2.87, 103, -128, 155, -30, 150,
                                              2.87, 103, -128, 140, -30, 150)),
    "protonated C=N NH2": ("upsilon_tau", 4, (3.17, 90, -146, 140, -30, 3.17, 90, -146, 140, -22.5, 150,
                                              3.17, 113, -161, 125, None, 140)),
    "protonated primary amine": ("upsilon_tau", 6, (3.17, 90, -136, 140, 20, 3.17, 90, -132, 150, 25, 130,
                                                    3.17, 90, -124, 155, 15, 150)),
    "hydroxyl": ("upsilon_tau", 6, (3.17, 90, -141, 130, None, 3.03, 90, -141, 135, None, 140,
                                    3.03, 100, -132, 145, None, 150)),
    "amide NH2": ("upsilon_tau", 4, (3.30, 103, -153, 135, -45, 3.30, 109, -141, 140, -30, 140,
                                     3.30, 113, -161, 125, -30, 145)),
    "aniline NH2": ("upsilon_tau", 4, (3.30, 100, -146, 145, -37.5, 3.30, 103, -146, 140, -37.5, 130,
                                       3.42, 90, 161, 125, None, 140)),
    "phenol OH": ("upsilon_tau", 4, (3.03, 103, -136, 145, -37.5, 3.03, 103, -136, 150, -45.0, 140,
                                     2.87, 109, -128, 145, -52.5, 150)),
    "primary amine": ("upsilon_tau", 6, (3.30, 90, -128, 150, 30, 3.42, 90, -124, 155, 25, 130,
                                         3.42, 90, -132, 155, 20, 140)),
    "planar charged NH": ("theta_tau", 4, (1.92, 146, 1.92, 153, 150, 2.48, 141, 145)),
    "secondary ammonium": ("theta_tau", 2, (2.09, 141, 2.09, 141, 155, 2.48, 141, 145)),
    "amide NH": ("theta_tau", 2, (2.23, 146, 2.23, 146, 140, 2.36, 141, 145)),
    "tertiary ammonium": ("theta_tau", 6, (1.92, 146, 2.09, 146, 140, 2.48, 141, 145)),
    "imine NH": ("theta_tau", 2, (2.23, 132, 2.36, 146, 140, 2.48, 141, 145)),
    "secondary amine": ("theta_tau", 2, (2.36, 141, 2.48, 146, 150, 2.48, 153, 155)),
    "5-ring NH": ("theta_tau", 4, (2.09, 146, 2.09, 141, 140, 2.48, 141, 145)),
    "aromatic 6-ring NH": ("theta_tau", 2, (2.23, 136, 2.23, 141, 150, 2.48, 141, 145)),
    # generic donors (ChimeraX's fallbacks for atoms of no class)
    "generic planar NH": ("theta_tau", 0, (2.23, 136, 2.23, 141, 140, 2.46, 136, 140)),
    "generic planar NH2": ("upsilon_tau", 4, (3.30, 90, -153, 135, -45, 3.30, 90, -146, 140, -37.5, 130,
                                              3.40, 108, -166, 125, -35, 140)),
    "generic O": ("generic", 0, (2.41, 2.28, 2.28, 3.27, 3.14, 3.14)),
    "generic N": ("generic", 0, (2.36, 2.48, 2.48, 3.30, 3.42, 3.42)),
    "generic S": ("generic", 0, (2.42, 2.42, 2.42, 3.65, 3.65, 3.65)),
}
#: Limits every donor test applies to an acceptor of no known geometry (ChimeraX's generic
#: acceptor columns): theta_tau (H...A, theta); upsilon_tau (D...A, upsilon min, -upsilon max,
#: theta); generic (H...A, D...A, D-H...A min, neighbour-D...A min).
GENERIC_ACCEPTOR_LIMITS = {"theta_tau": (2.48, 132), "upsilon_tau": (3.42, 90, -161, 125),
                           "generic": (2.48, 3.42, 130, 90)}

#: acceptor classes: name -> (test, limits). ``syn_anti``: (syn D...A, phi, theta, anti D...A,
#: phi, theta); ``phi_psi``: (D...A, phi, theta); ``theta_tau``: (D...A, upsilon min,
#: -upsilon max, theta); ``generic``: (D...A, minimum neighbour-A...D angle).
ACCEPTOR_CLASSES: dict[str, tuple[str, tuple]] = {
    "phosphate O- (3)": ("syn_anti", (3.03, 110, 145, 3.03, 110, 135)),
    "phosphate O- (2)": ("syn_anti", (3.03, 110, 145, 3.03, 110, 135)),
    "carboxylate O": ("syn_anti", (3.17, 90, 145, 3.17, 110, 145)),
    "thiocarbonyl S": ("phi_psi", (3.73, 90, 145)),
    "carboxylic acid C=O": ("syn_anti", (3.17, 110, 130, 3.17, 110, 135)),
    "amide O": ("syn_anti", (3.30, 110, 135, 3.30, 110, 130)),
    "ketone/aldehyde O": ("phi_psi", (3.30, 110, 130)),
    "ester C=O": ("phi_psi", (3.17, 110, 135)),
    "nitro O": ("syn_anti", (3.42, 90, 145, 3.53, 110, 130)),
    "sulfone O": ("syn_anti", (3.30, 110, 130, 3.30, 120, 135)),
    "phosphate ester O": ("theta_tau", (3.03, 103, -146, 145)),
    "phosphine oxide O": ("theta_tau", (3.03, 109, -180, 145)),
    "sulfoxide O": ("theta_tau", (3.03, 100, -180, 145)),
    "primary amine N": ("theta_tau", (3.03, 103, -180, 155)),
    "hydroxyl O": ("theta_tau", (3.03, 100, -161, 145)),
    "sulfate ester O": ("theta_tau", (3.17, 103, -180, 150)),
    "tertiary amine N": ("theta_tau", (3.17, 153, -180, 145)),
    "nitrile N": ("theta_tau", (3.30, 153, -180, 150)),
    "secondary amine N": ("theta_tau", (3.30, 153, -180, 150)),
    "phenol O": ("theta_tau", (3.17, 100, -153, 150)),
    "aniline N": ("theta_tau", (3.42, 90, -137, 140)),
    "non-ring ether O": ("phi_psi", (3.42, 140, 140)),
    "non-ring imine N": ("phi_psi", (3.42, 140, 140)),
    "symmetric 6-ring N": ("phi_psi", (3.17, 150, 145)),
    "symmetric 5-ring N": ("phi_psi", (3.30, 140, 155)),
    "asymmetric 6-ring N": ("phi_psi", (3.30, 140, 140)),
    "asymmetric 5-ring N": ("phi_psi", (3.30, 150, 135)),
    "5-ring O": ("phi_psi", (3.42, 150, 135)),
    # generic acceptors (ChimeraX's fallbacks by IDATM type)
    "generic O": ("generic", (3.53, 90)),
    "generic O-, planar neighbour": ("phi_psi", (3.53, 90, 130)),
    "generic O2, planar neighbour": ("phi_psi", (3.30, 110, 130)),
    "generic O2, tetrahedral neighbour": ("theta_tau", (3.03, 100, -180, 145)),
    "generic O3, one bond": ("theta_tau", (3.17, 100, -161, 145)),
    "generic O3, two bonds": ("phi_psi", (3.42, 120, 135)),
    "generic N": ("generic", (3.42, 90)),
    "generic N2": ("phi_psi", (3.42, 140, 135)),
    "generic N3, one heavy neighbour": ("theta_tau", (3.13, 98, -180, 150)),
    "generic N3": ("theta_tau", (3.30, 153, -180, 145)),
    "generic N1": ("theta_tau", (3.40, 136, -180, 145)),
    "generic S2": ("phi_psi", (3.83, 85, 140)),
    "generic S": ("generic", (3.83, 85)),
}
#: the aniline acceptor's tau test (ChimeraX passes it unrelaxed): minimum tau, symmetry.
ANILINE_ACCEPTOR_TAU = (37.5, 4)


# ------------------------------------------------------------------------------------------
# the molecular graph the tests read


@dataclass(frozen=True)
class Site:
    """A donor or acceptor: its class and the atoms its test refers to (``partners``: for
    syn/anti the syn atom and the plane atom, for phi/psi the one or two bonded atoms, for
    theta/tau the upsilon partner or None for the lone-pair bisector)."""

    atom: int
    name: str
    partners: tuple = ()


class Graph:
    """Heavy atoms with IDATM types, hydrogen counts and hydrogen positions (explicit or
    inferred). Built by ``hbonds`` from a ``Complex``; kept small so fixtures can build one."""

    def __init__(self, coords, elements, types, bonds, h_count, h_coords, h_parent,
                 rings: list[tuple[int, ...]] | None = None, aromatic_rings: set | None = None,
                 saturated=None):
        self.coords = np.asarray(coords, dtype=np.float64).reshape(-1, 3)
        self.elements = [str(e) for e in elements]
        self.types = [str(t) for t in types]
        n = len(self.coords)
        self.nbrs: list[list[int]] = [[] for _ in range(n)]
        for a, b in np.asarray(bonds, dtype=np.int64).reshape(-1, 2):
            self.nbrs[int(a)].append(int(b))
            self.nbrs[int(b)].append(int(a))
        self.h_count = [int(x) for x in h_count]
        #: atoms whose substituents are complete whatever their neighbour count (protein atoms
        #: typed by template: a neighbour the pocket cut removed is no free valence)
        self.saturated = [bool(x) for x in saturated] if saturated is not None else [False] * n
        self.explicit_h: list[list[np.ndarray]] = [[] for _ in range(n)]
        for pos, parent in zip(np.asarray(h_coords, dtype=np.float64).reshape(-1, 3), h_parent):
            self.explicit_h[int(parent)].append(pos)
        self.rings = rings if rings is not None else find_rings(n, self.nbrs)
        self.aromatic_rings = aromatic_rings if aromatic_rings is not None else {
            r for r in self.rings if all(geometry(self.types[k]) == PLANAR for k in r)}
        self.rings_of: list[list[tuple[int, ...]]] = [[] for _ in range(n)]
        for ring in self.rings:
            for k in ring:
                self.rings_of[k].append(ring)
        self._hpos: dict[int, list[np.ndarray]] = {}

    def geom(self, i: int) -> int:
        return geometry(self.types[i])

    def n_bonds(self, i: int) -> int:
        """Bonded atoms, hydrogens included (explicit or counted); a saturated atom counts as
        having all the substituents of its type."""
        n = len(self.nbrs[i]) + self.h_count[i]
        return max(n, substituents(self.types[i])) if self.saturated[i] else n

    def hydrogen_positions(self, i: int) -> list[np.ndarray]:
        """Hydrogens of atom ``i``: the explicit ones, or positions the heavy-atom frame fixes
        (ChimeraX ``hydpos``): not for a tetrahedral atom with one heavy neighbour (a rotor),
        not where the type leaves a free valence, not when the substituents are complete."""
        if i in self._hpos:
            return self._hpos[i]
        if self.explicit_h[i]:
            out = list(self.explicit_h[i])
        elif self.saturated[i] or self.h_count[i] > 0:
            out = self._inferred(i, self.h_count[i]) if self.h_count[i] > 0 else []
        else:  # no count known: as ChimeraX, the type's free substituent positions
            out = self._inferred(i, substituents(self.types[i]) - len(self.nbrs[i]))
        self._hpos[i] = out
        return out

    def _inferred(self, i: int, wanted: int) -> list[np.ndarray]:
        geom, subs = geometry(self.types[i]), substituents(self.types[i])
        known = self.nbrs[i]
        if not known or len(known) >= subs or (len(known) == 1 and geom == TETRAHEDRAL) or geom - subs > 0:
            return []
        coplanar = None
        if geom == PLANAR and len(known) == 1:
            coplanar = [self.coords[k] for k in self.nbrs[known[0]] if k != i] \
                if self.geom(known[0]) == PLANAR else []
        length = XH_LENGTH.get(self.elements[i], 1.0)
        return bond_positions(self.coords[i], geom, length, [self.coords[k] for k in known], coplanar)[:wanted]

    def substituent_positions(self, i: int) -> list[np.ndarray]:
        """Hydrogen and lone-pair positions of atom ``i`` (ChimeraX ``hyd_positions`` with lone
        pairs): explicit hydrogens, plus the free positions of its geometry where the frame fixes
        them."""
        explicit = list(self.explicit_h[i])
        geom = self.geom(i)
        known = [self.coords[k] for k in self.nbrs[i]] + explicit
        if not geom or len(known) >= geom or not known or (len(known) == 1 and geom == TETRAHEDRAL):
            return explicit
        coplanar = None
        if geom == PLANAR and len(known) == 1:
            coplanar = [self.coords[k] for k in self.nbrs[self.nbrs[i][0]] if k != i] if self.nbrs[i] else []
        return explicit + bond_positions(self.coords[i], geom, 1.0, known, coplanar)


def find_rings(n: int, nbrs: list[list[int]], max_size: int = 8) -> list[tuple[int, ...]]:
    """Smallest rings (up to ``max_size`` atoms) through each bond: enough for ring-size and
    ring-membership tests on pocket and ligand atoms."""
    rings: set[tuple[int, ...]] = set()
    for a in range(n):
        for b in nbrs[a]:
            if b < a:
                continue
            # shortest path from a to b avoiding the a-b bond
            prev = {a: -1}
            frontier = [a]
            found = None
            for _ in range(max_size - 1):
                nxt = []
                for u in frontier:
                    for v in nbrs[u]:
                        if (u == a and v == b) or v in prev:
                            continue
                        prev[v] = u
                        if v == b:
                            found = v
                            break
                        nxt.append(v)
                    if found is not None:
                        break
                if found is not None or not nxt:
                    break
                frontier = nxt
            if found is None:
                continue
            path = [b]
            while prev[path[-1]] != -1:
                path.append(prev[path[-1]])
            rings.add(tuple(sorted(path)))
    # keep rings that are not the union of two smaller ones (drop envelopes of fused systems)
    ordered = sorted(rings, key=lambda r: (len(r), r))
    kept: list[tuple[int, ...]] = []
    for r in ordered:
        if any(set(s) < set(r) for s in kept):
            continue
        kept.append(r)
    return kept


def bond_positions(centre, geom: int, length: float, known: list, coplanar: list | None = None) -> list[np.ndarray]:
    """Positions of the free substituents of an atom of geometry ``geom`` (4 tetrahedral,
    3 planar, 2 linear) given its known substituent positions, at ``length`` Å."""
    centre = np.asarray(centre, dtype=np.float64)
    units = []
    for p in known:
        v = np.asarray(p, dtype=np.float64) - centre
        norm = np.linalg.norm(v)
        if norm > 1e-6:
            units.append(v / norm)
    if not units:
        return []
    if geom == LINEAR and len(units) == 1:
        return [centre - length * units[0]]
    if geom == TETRAHEDRAL and len(units) == 3 or geom == PLANAR and len(units) == 2:
        d = -np.sum(units, axis=0)
        norm = np.linalg.norm(d)
        return [centre + length * d / norm] if norm > 1e-6 else []
    if geom == TETRAHEDRAL and len(units) == 2:
        bis = -(units[0] + units[1])
        perp = np.cross(units[0], units[1])
        if np.linalg.norm(bis) < 1e-6 or np.linalg.norm(perp) < 1e-6:
            return []
        bis, perp = bis / np.linalg.norm(bis), perp / np.linalg.norm(perp)
        half = math.radians(109.47 / 2.0)
        return [centre + length * (math.cos(half) * bis + s * math.sin(half) * perp) for s in (1.0, -1.0)]
    if geom == PLANAR and len(units) == 1:
        u = units[0]
        ref = None
        for c in coplanar or []:
            w = np.asarray(c, dtype=np.float64) - centre
            w = w - np.dot(w, u) * u
            if np.linalg.norm(w) > 1e-3:
                ref = w / np.linalg.norm(w)
                break
        if ref is None:
            return []
        return [centre + length * (-0.5 * u + s * 0.8660254 * ref) for s in (1.0, -1.0)]
    return []


# ------------------------------------------------------------------------------------------
# classes


def _tet(g: Graph, k: int) -> bool:
    return g.geom(k) == TETRAHEDRAL


def _single_or_tet(g: Graph, k: int) -> bool:
    return g.geom(k) in (TETRAHEDRAL, SINGLE)


def donor_class(g: Graph, i: int) -> str | None:
    """The Mills & Dean donor class of atom ``i`` (first match in ChimeraX's table order), a
    generic donor class, or None when ``i`` is no donor."""
    t, el, nb, nh = g.types[i], g.elements[i], g.nbrs[i], g.h_count[i]
    if el not in ("N", "O", "S"):
        return None
    heavy_types = [g.types[k] for k in nb]
    one = len(nb) == 1
    if t == "O3" and one and nh == 1 and heavy_types == ["Cac"]:
        return "carboxylic acid OH"
    if t == "Npl" and one and nh == 2 and heavy_types == ["C2"] and \
            all(_single_or_tet(g, k) for k in g.nbrs[nb[0]] if k != i) and len(g.nbrs[nb[0]]) == 3:
        return "protonated C=N NH2"
    if t == "Ng+" and one and nh == 2 and heavy_types == ["C2"]:
        return "protonated C=N NH2"
    if t == "N3+" and one and nh == 3 and _tet(g, nb[0]):
        return "protonated primary amine"
    if t == "O3" and one and nh == 1 and _tet(g, nb[0]):
        return "hydroxyl"
    if el == "N" and one and nh == 2 and _amide_carbon(g, nb[0], i):
        return "amide NH2"
    if t == "Npl" and one and heavy_types == ["Car"] and nh >= 1 and not g.rings_of[i]:
        return "aniline NH2"
    if t == "O3" and one and nh == 1 and heavy_types == ["Car"]:
        return "phenol OH"
    if t == "N3" and one and nh == 2 and _tet(g, nb[0]):
        return "primary amine"
    if t == "Npl" and nh == 1 and len(nb) == 2 and _planar_charged_nh(g, i):
        return "planar charged NH"
    if t == "N3+" and nh == 2 and len(nb) == 2 and all(_tet(g, k) for k in nb):
        return "secondary ammonium"
    if el == "N" and nh == 1 and len(nb) == 2 and any(
            _amide_carbon(g, k, i) and all(_tet(g, m) for m in nb if m != k) for k in nb):
        return "amide NH"
    if t == "N3+" and nh == 1 and len(nb) == 3 and all(_tet(g, k) for k in nb):
        return "tertiary ammonium"
    if t == "N2" and nh == 1 and one and g.geom(nb[0]) == PLANAR:
        return "imine NH"
    if t == "N3" and nh == 1 and len(nb) == 2 and all(_tet(g, k) for k in nb):
        return "secondary amine"
    if t in ("Npl", "N2+") and len(g.rings_of[i]) == 1 and (g.n_bonds(i) < 3 or nh > 0) and len(nb) == 2:
        ring = g.rings_of[i][0]
        if len(ring) == 5:
            return "5-ring NH"
        if len(ring) == 6 and ring in g.aromatic_rings:
            return "aromatic 6-ring NH"
    # generic donors: an N/O/S with a hydrogen or a free valence
    if t == "Npl" and g.n_bonds(i) == 2 and nh > 0:
        return None  # a partial terminal N: no defined H direction (ChimeraX screens these out)
    if nh > 0 or g.n_bonds(i) < substituents(t):
        if t in ("Npl", "N2+"):
            return "generic planar NH" if len(nb) > 1 else "generic planar NH2"
        return f"generic {el}"
    return None


def _amide_carbon(g: Graph, c: int, n: int) -> bool:
    """``c`` is a C2 with neighbours O2, the N ``n`` and one tetrahedral or single atom."""
    if g.types[c] != "C2" or len(g.nbrs[c]) + g.h_count[c] != 3:
        return False
    others = [k for k in g.nbrs[c] if k != n]
    has_o2 = [k for k in others if g.types[k] == "O2" and len(g.nbrs[k]) == 1]
    if not has_o2:
        return False
    rest = [k for k in others if k != has_o2[0]]
    return all(_single_or_tet(g, k) for k in rest) and len(rest) + g.h_count[c] == 1


def _planar_charged_nh(g: Graph, i: int) -> bool:
    tets = [k for k in g.nbrs[i] if _tet(g, k)]
    planars = [k for k in g.nbrs[i] if g.geom(k) == PLANAR]
    if len(tets) != 1 or len(planars) != 1:
        return False
    p = planars[0]
    others = [k for k in g.nbrs[p] if k != i]
    return len(others) + g.h_count[p] == 2 and all(_tet(g, k) for k in others)


def acceptor_site(g: Graph, i: int) -> Site | None:
    """The acceptor class of atom ``i`` with its test partners (first match in ChimeraX's table
    order, ring classes last, then the generic acceptors by type), or None."""
    t, el, nb, nh = g.types[i], g.elements[i], g.nbrs[i], g.h_count[i]
    if el not in ("N", "O", "S"):
        return None
    one = len(nb) == 1 and nh == 0
    centre = nb[0] if len(nb) == 1 else None
    ctype = g.types[centre] if centre is not None else ""
    if one and t == "O3-" and ctype == "Pac":
        mates = [k for k in g.nbrs[centre] if k != i and g.types[k] == "O3-" and len(g.nbrs[k]) == 1]
        if len(mates) >= 2 and len(g.nbrs[centre]) == 4:
            return Site(i, "phosphate O- (3)", (mates[0], centre))
        if len(mates) == 1 and len(g.nbrs[centre]) == 4:
            return Site(i, "phosphate O- (2)", (mates[0], centre))
    if one and t == "O2-" and ctype == "Cac":
        mates = [k for k in g.nbrs[centre] if k != i and g.types[k] == "O2-"]
        if mates and len(g.nbrs[centre]) + g.h_count[centre] == 3:
            return Site(i, "carboxylate O", (mates[0], centre))
    if one and t == "S2" and g.elements[centre] == "C":
        return Site(i, "thiocarbonyl S", (centre, None))
    if one and t == "O2" and g.elements[centre] == "C":
        others = [k for k in g.nbrs[centre] if k != i]
        acid_oh = [k for k in others if g.types[k] == "O3" and g.h_count[k] == 1 and len(g.nbrs[k]) == 1]
        if acid_oh and len(others) + g.h_count[centre] == 2:
            return Site(i, "carboxylic acid C=O", (acid_oh[0], centre))
        if ctype == "C2" and len(others) + g.h_count[centre] == 2:
            npl = [k for k in others if g.types[k] == "Npl"]
            if npl and all(_single_or_tet(g, k) for k in others if k != npl[0]):
                return Site(i, "amide O", (npl[0], centre))
            if any(g.elements[k] == "C" for k in others):
                return Site(i, "ketone/aldehyde O", (centre, None))
            o3 = [k for k in others if g.types[k] == "O3" and len(g.nbrs[k]) == 2
                  and all(_tet(g, m) for m in g.nbrs[k] if m != centre)]
            if o3 and any(g.elements[k] == "C" for k in others):
                return Site(i, "ester C=O", (centre, None))
    if one and t == "O2-" and ctype == "Ntr":
        mates = [k for k in g.nbrs[centre] if k != i and g.types[k] == "O2-"]
        if mates:
            return Site(i, "nitro O", (mates[0], centre))
    if one and t == "O2" and ctype == "Son":
        mates = [k for k in g.nbrs[centre] if k != i and g.types[k] == "O2" and len(g.nbrs[k]) == 1]
        rest = [k for k in g.nbrs[centre] if k != i and k not in mates]
        if len(mates) == 1 and len(rest) == 2 and all(_single_or_tet(g, k) for k in rest):
            return Site(i, "sulfone O", (mates[0], centre))
    if t == "O3" and len(nb) == 2 and nh == 0:
        pac = [k for k in nb if g.types[k] == "Pac"]
        if pac and sum(1 for m in g.nbrs[pac[0]] if g.types[m] == "O3-") == 2:
            return Site(i, "phosphate ester O", (pac[0],))
    if one and t == "O2" and ctype == "Pox":
        return Site(i, "phosphine oxide O", (centre,))
    if one and t == "O2" and ctype == "Sxd":
        return Site(i, "sulfoxide O", (centre,))
    if t == "N3" and len(nb) == 1 and nh == 2 and _tet(g, nb[0]):
        return Site(i, "primary amine N", (nb[0],))
    if t == "O3" and len(nb) == 1 and nh == 1 and g.types[nb[0]] not in ("Sac", "Pac") and \
            g.geom(nb[0]) in (TETRAHEDRAL, SINGLE):
        return Site(i, "hydroxyl O", (nb[0],))
    if t == "O3" and len(nb) == 2 and nh == 0:
        sac = [k for k in nb if g.types[k] == "Sac"]
        other = [k for k in nb if k not in sac]
        if sac and other and g.types[other[0]] != "Pac" and \
                sum(1 for m in g.nbrs[sac[0]] if g.types[m] == "O3-") == 2:
            return Site(i, "sulfate ester O", (sac[0],))
    if t == "N3" and len(nb) == 3 and nh == 0 and all(_tet(g, k) for k in nb):
        return Site(i, "tertiary amine N", (None,))
    if t == "N1" and len(nb) == 1 and g.types[nb[0]] == "C1":
        return Site(i, "nitrile N", (nb[0],))
    if t == "N3" and len(nb) == 2 and nh == 1 and all(_tet(g, k) for k in nb):
        return Site(i, "secondary amine N", (None,))
    if t == "O3" and len(nb) == 1 and nh == 1 and g.types[nb[0]] == "Car":
        return Site(i, "phenol O", (nb[0],))
    if t in ("Npl", "N3") and len(nb) == 1 and nh == 2 and g.types[nb[0]] == "Car":
        return Site(i, "aniline N", (nb[0],))
    in_ring = bool(g.rings_of[i])
    if t == "O3" and not in_ring and len(nb) == 2 and nh == 0 and all(g.elements[k] == "C" for k in nb):
        return Site(i, "non-ring ether O", (nb[0], nb[1]))
    if t == "N2" and not in_ring and len(nb) == 2 and nh == 0 and all(g.elements[k] == "C" for k in nb):
        return Site(i, "non-ring imine N", (nb[0], nb[1]))
    site = _ring_acceptor(g, i)
    if site is not None:
        return site
    return _generic_acceptor(g, i)


def _ring_acceptor(g: Graph, i: int) -> Site | None:
    t, nb = g.types[i], g.nbrs[i]
    rings = g.rings_of[i]
    if len(rings) == 1 and len(nb) == 2 and nh_free(g, i) and (
            t == "N2" or (t in ("Npl", "N2+") and len(rings[0]) == 5)):
        ring = rings[0]
        b1, b2 = [k for k in nb if k in ring][:2] if all(k in ring for k in nb) else (None, None)
        if b1 is not None and len(ring) in (5, 6):
            if t != "N2" and not any(g.elements[k] == "N" for k in ring if k != i):
                return None if len(ring) == 5 else _generic_acceptor(g, i)
            if len(ring) == 5:
                rest = [k for k in ring if k not in (i, b1, b2)]
                pair = (g.elements[rest[0]], g.elements[rest[1]])
            else:
                n1 = [k for k in g.nbrs[b1] if k in ring and k != i]
                n2 = [k for k in g.nbrs[b2] if k in ring and k != i]
                pair = (g.elements[n1[0]] if n1 else "", g.elements[n2[0]] if n2 else "")
            symmetric = g.elements[b1] == g.elements[b2] and pair[0] == pair[1]
            if t == "N2" or len(ring) == 5:
                kind = f"{'symmetric' if symmetric else 'asymmetric'} {len(ring)}-ring N"
                return Site(i, kind, (b1, b2))
    if g.elements[i] == "O" and any(len(r) == 5 for r in rings) and len(nb) == 2:
        return Site(i, "5-ring O", (nb[0], nb[1]))
    return None


def nh_free(g: Graph, i: int) -> bool:
    """No hydrogen on a ring N (an NH ring N is a donor, not one of these acceptors)."""
    return g.h_count[i] == 0


def _generic_acceptor(g: Graph, i: int) -> Site | None:
    t, el, nb = g.types[i], g.elements[i], g.nbrs[i]
    n_heavy = len(nb)
    if t in ("O2-", "O3-"):
        if not nb:
            return None
        return Site(i, "generic O-, planar neighbour", (nb[0], None)) if g.geom(nb[0]) == PLANAR \
            else Site(i, "generic O", ())
    if t == "O2":
        if not nb:
            return None
        kind = g.geom(nb[0])
        if kind == PLANAR:
            return Site(i, "generic O2, planar neighbour", (nb[0], None))
        if kind == TETRAHEDRAL:
            return Site(i, "generic O2, tetrahedral neighbour", (nb[0],))
        return Site(i, "generic O", ())
    if t == "O3":
        bonds = g.n_bonds(i)
        if bonds == 0:
            return Site(i, "generic O", ())
        if bonds == 1:
            return Site(i, "generic O3, one bond", (nb[0] if nb else None,))
        if bonds == 2:
            return Site(i, "generic O3, two bonds", tuple(nb[:2]) + (None,) * (2 - len(nb[:2])))
        return None
    if el == "O":
        return Site(i, "generic O", ())
    if t == "N2":
        return Site(i, "generic N2", tuple(nb[:2]) + (None,) * (2 - len(nb[:2])))
    if t == "N3":
        if n_heavy == 0:
            return Site(i, "generic N", ())
        if n_heavy == 1:
            return Site(i, "generic N3, one heavy neighbour", (nb[0] if g.n_bonds(i) == 1 else None,))
        return Site(i, "generic N3", (None,))
    if t == "N1":
        return Site(i, "generic N1", (nb[0] if nb else None,))
    if t == "S2":
        return Site(i, "generic S2", (nb[0] if nb else None, None))
    if t in ("Sar", "S3-"):
        return Site(i, "generic S", ())
    return None


# ------------------------------------------------------------------------------------------
# geometry


def _angle(a, vertex, b) -> float:
    u, v = np.asarray(a) - vertex, np.asarray(b) - vertex
    denom = float(np.linalg.norm(u) * np.linalg.norm(v))
    if denom == 0.0:
        return 180.0
    return math.degrees(math.acos(max(-1.0, min(1.0, float(np.dot(u, v)) / denom))))


def _theta_ok(dp, hyds, ap, theta: float) -> bool:
    """Some hydrogen makes D-H...A at least ``theta`` (no hydrogens: passes)."""
    return not hyds or any(_angle(ap, h, dp) >= theta for h in hyds)


def _phi_ok(dp, ap, bp, plane, phi: float) -> bool:
    """The angle base-A-D, all projected into ``plane`` (three points), is at least ``phi``."""
    if plane is None:
        return True
    normal = np.cross(plane[1] - plane[0], plane[2] - plane[1])
    norm = np.linalg.norm(normal)
    if norm < 1e-9:
        return True
    normal = normal / norm
    off = float(np.dot(normal, plane[1]))

    def project(p):
        return p - normal * (float(np.dot(normal, p)) - off)

    return _angle(project(bp), project(ap), project(dp)) >= phi


def _phi_plane(g: Graph, acc: int, b1, b2):
    """(plane, base point) of the phi test for an acceptor with principal bonded atoms."""
    ap = g.coords[acc]
    if b2 is not None:
        return [ap, g.coords[b1], g.coords[b2]], (g.coords[b1] + g.coords[b2]) / 2.0
    if b1 is not None:
        grand = [k for k in g.nbrs[b1] if k != acc] + [None] * 0
        grand_pos = [g.coords[k] for k in grand] + \
            ([] if g.explicit_h[b1] else [])  # heavy grand-neighbours only
        if len(grand_pos) == 1:
            return [ap, g.coords[b1], grand_pos[0]], g.coords[b1]
        if len(grand_pos) == 2:
            return [ap, grand_pos[0], grand_pos[1]], g.coords[b1]
        return None, g.coords[b1]
    return None, None


def _lone_pair_bisectors(g: Graph, acc: int) -> list[np.ndarray]:
    """Points opposite the acceptor's tetrahedral lone pairs (ChimeraX's upsilon partner when a
    class names none)."""
    ap = g.coords[acc]
    known = [g.coords[k] for k in g.nbrs[acc]] + list(g.explicit_h[acc])
    return [ap - (lp - ap) for lp in bond_positions(ap, TETRAHEDRAL, 1.0, known)]


def _tau_ok(g: Graph, tau, tau_sym: int, da: int, other) -> bool:
    """Tau test of a donor (or the aniline acceptor) ``da``: the other atom's direction, projected
    on the plane normal to the bond to ``da``'s heavy neighbour, against the substituents there.
    A positive limit needs every angle at least ``tau``; a negative one some angle at most
    ``-tau``. False when the substituents do not match the symmetry (ChimeraX skips the pair)."""
    if tau is None:
        return True
    heavy = g.nbrs[da]
    if not heavy:
        return True
    subs = g.hydrogen_positions(da) if tau_sym == 4 else []
    if 2 * len(subs) != tau_sym:
        subs = g.substituent_positions(heavy[0]) + [g.coords[k] for k in g.nbrs[heavy[0]] if k != da]
        if not subs:
            return True
    if 2 * len(subs) != tau_sym:
        return False
    dap = g.coords[da]
    normal = g.coords[heavy[0]] - dap
    normal = normal / np.linalg.norm(normal)

    def project(p):
        return p - normal * float(np.dot(normal, p))

    op = project(np.asarray(other))
    dproj = project(dap)
    angles = [_angle(op, dproj, project(np.asarray(s))) for s in subs]
    if tau < 0.0:
        return any(a <= -tau for a in angles)
    return all(a >= tau for a in angles)


def _acceptor_kind(g: Graph, acc: int) -> str:
    """Which column of a donor table applies: 'sp2 O', 'sp3 O' (also planar N), 'sp3 N', 'other'."""
    el, geom = g.elements[acc], g.geom(acc)
    if el == "O" and geom == PLANAR:
        return "sp2 O"
    if el == "O" and geom == TETRAHEDRAL or el == "N" and geom == PLANAR:
        return "sp3 O"
    if el == "N" and geom == TETRAHEDRAL:
        return "sp3 N"
    return "other"


def acceptor_ok(g: Graph, site: Site, don: int) -> bool:
    """The acceptor class's test for donor ``don``."""
    test, limits = ACCEPTOR_CLASSES[site.name]
    lim = relax(limits)
    acc = site.atom
    dp, ap = g.coords[don], g.coords[acc]
    hyds = g.hydrogen_positions(don)
    comp = SULFUR_COMP if g.elements[don] == "S" else 0.0
    dist = float(np.linalg.norm(dp - ap))
    if test == "syn_anti":
        syn, plane_atom = site.partners
        pp, sp = g.coords[plane_atom], g.coords[syn]
        axis = pp - ap
        axis = axis / np.linalg.norm(axis)
        up = (sp - pp) - np.dot(sp - pp, axis) * axis
        is_syn = float(np.dot(dp - ap, up)) > 0.0
        r, phi, theta = lim[0:3] if is_syn else lim[3:6]
        if dist > r + comp:
            return False
        return _phi_ok(dp, ap, pp, [ap, pp, sp], phi) and _theta_ok(dp, hyds, ap, theta)
    if test == "phi_psi":
        r, phi, theta = lim
        b1, b2 = (site.partners + (None, None))[:2]
        if b1 is None and g.nbrs[acc]:
            b1 = g.nbrs[acc][0]
            b2 = g.nbrs[acc][1] if len(g.nbrs[acc]) > 1 else None
        if dist > r + comp:
            return False
        plane, base = _phi_plane(g, acc, b1, b2)
        return (base is None or _phi_ok(dp, ap, base, plane, phi)) and _theta_ok(dp, hyds, ap, theta)
    if test == "theta_tau":
        r, up_low, up_high, theta = lim
        if dist > r + comp:
            return False
        partner = site.partners[0] if site.partners else None
        up_high = -up_high
        candidates = [g.coords[partner]] if partner is not None else _lone_pair_bisectors(g, acc)
        tau, tau_sym = ANILINE_ACCEPTOR_TAU if site.name == "aniline N" else (None, None)
        for pp in candidates:
            ups = _angle(pp, ap, dp)
            if up_low <= ups <= up_high and _theta_ok(dp, hyds, ap, theta) and \
                    _tau_ok(g, tau, tau_sym or 0, acc, dp):
                return True
        return not candidates and _theta_ok(dp, hyds, ap, theta)
    r, min_angle = lim  # generic
    if dist > r + comp:
        return False
    return all(_angle(g.coords[k], ap, dp) >= min_angle for k in g.nbrs[acc])


def donor_ok(g: Graph, don: int, name: str, acc: int) -> bool:
    """The donor class's test against acceptor ``acc``."""
    test, tau_sym, limits = DONOR_CLASSES[name]
    lim = relax(limits)
    gen = relax(GENERIC_ACCEPTOR_LIMITS[test]) if test in GENERIC_ACCEPTOR_LIMITS else ()
    dp, ap = g.coords[don], g.coords[acc]
    hyds = g.hydrogen_positions(don)
    kind = _acceptor_kind(g, acc)
    acc_s = g.elements[acc] == "S"
    if test == "theta_tau":
        if not hyds:
            return False
        if kind == "sp2 O":
            rp, theta = lim[0], lim[1]
        elif kind == "sp3 O":
            rp, theta = lim[2], lim[3]
            if g.n_bonds(acc) == 2 and len(g.nbrs[acc]) == 2:
                plane, base = _phi_plane(g, acc, g.nbrs[acc][0], g.nbrs[acc][1])
                if not _phi_ok(dp, ap, base, plane, lim[4]):
                    return False
        elif kind == "sp3 N":
            rp, theta = lim[5], lim[6]
            bis = _lone_pair_bisectors(g, acc)
            if bis and not any(_angle(dp, ap, b) > lim[7] for b in bis):
                return False
        else:
            rp, theta = gen[0] + (SULFUR_COMP if acc_s else 0.0), gen[1]
        if not any(np.linalg.norm(h - ap) <= rp for h in hyds):
            return False
        return _theta_ok(dp, hyds, ap, theta)
    if test == "upsilon_tau":
        if kind == "sp2 O":
            r, lo, hi, theta, tau = lim[0:5]
        elif kind == "sp3 O":
            r, lo, hi, theta, tau = lim[5:10]
        elif kind == "sp3 N":
            r, lo, hi, theta, tau = lim[11:16]
            if len(g.nbrs[acc]) + len(g.explicit_h[acc]) > 1:
                bis = _lone_pair_bisectors(g, acc)
                if bis and not any(_angle(b, ap, dp) >= lim[16] for b in bis):
                    return False
        else:
            r, lo, hi, theta = gen
            r += SULFUR_COMP if acc_s else 0.0
            tau = None
        if np.linalg.norm(dp - ap) > r:
            return False
        heavy = g.nbrs[don]
        if len(heavy) != 1:
            return False
        ups = _angle(g.coords[heavy[0]], dp, ap)
        if ups < lo or ups > -hi:
            return False
        return _theta_ok(dp, hyds, ap, theta) and _tau_ok(g, tau, tau_sym, don, ap)
    # generic donor
    sp2_rp, sp3o_rp, sp3n_rp, sp2_r, sp3o_r, sp3n_r = lim
    gen_rp, gen_r, min_h_angle, min_bonded = gen
    if kind == "sp2 O":
        r, rp = sp2_r, sp2_rp
    elif kind == "sp3 O":
        r, rp = sp3o_r, sp3o_rp
    elif kind == "sp3 N":
        r, rp = sp3n_r, sp3n_rp
    else:
        r, rp = gen_r, gen_rp
        if acc_s:
            min_bonded -= 9.0  # ChimeraX widens the angle, not the distance, for an S acceptor
    if not hyds:
        if np.linalg.norm(dp - ap) > r:
            return False
    elif not any(np.linalg.norm(h - ap) < rp for h in hyds):
        return False
    if any(_angle(g.coords[k], dp, ap) < min_bonded for k in g.nbrs[don]):
        return False
    return not hyds or any(_angle(dp, h, ap) >= min_h_angle for h in hyds)


def metal_partners(g: Graph, metals: list[int], atoms: list[int], cutoff: float) -> dict[int, list[int]]:
    """For each of ``atoms``, the metal atoms within ``cutoff`` Å."""
    out: dict[int, list[int]] = {}
    for a in atoms:
        near = [m for m in metals if np.linalg.norm(g.coords[a] - g.coords[m]) <= cutoff]
        if near:
            out[a] = near
    return out


def find_pairs(g: Graph, donors: list[int], acceptors: list[int], metals: list[int] = ()) -> list[tuple[int, int]]:
    """(donor, acceptor) pairs among ``donors`` x ``acceptors`` that pass both class tests and
    ChimeraX's metal rules."""
    sites = {a: acceptor_site(g, a) for a in acceptors}
    sites = {a: s for a, s in sites.items() if s is not None}
    classes = {d: donor_class(g, d) for d in donors}
    near_metal = metal_partners(g, list(metals), sorted(set(sites) | set(classes)), METAL_ACCEPTOR_RANGE)
    pairs = []
    acc_idx = np.array(sorted(sites), dtype=np.int64)
    if not len(acc_idx):
        return []
    for d, name in classes.items():
        if name is None:
            continue
        if g.elements[d] == "N" and g.geom(d) == PLANAR and d in near_metal and acceptor_site(g, d):
            continue  # a planar N coordinating a metal donates nothing
        dist = np.linalg.norm(g.coords[acc_idx] - g.coords[d], axis=1)
        for a in acc_idx[dist <= SEARCH_RADIUS]:
            a = int(a)
            if a == d or not acceptor_ok(g, sites[a], d) or not donor_ok(g, d, name, a):
                continue
            if any(_angle(g.coords[d], g.coords[a], g.coords[m]) < METAL_MIN_ANGLE for m in near_metal.get(a, ())):
                continue
            pairs.append((d, a))
    return pairs


def explain_pair(g: Graph, don: int, acc: int) -> str:
    """Why ``don`` -> ``acc`` is or is not an H-bond by these criteria (for reports)."""
    name = donor_class(g, don)
    site = acceptor_site(g, acc)
    if name is None:
        return f"{g.types[don]} is no donor"
    if site is None:
        return f"{g.types[acc]} is no acceptor"
    dist = float(np.linalg.norm(g.coords[don] - g.coords[acc]))
    if not acceptor_ok(g, site, don):
        test, limits = ACCEPTOR_CLASSES[site.name]
        longest = max(v for v in relax(limits) if v is not None and 0 < v < 7.5)
        comp = SULFUR_COMP if g.elements[don] == "S" else 0.0
        if dist > longest + comp:
            return f"D...A {dist:.2f} Å over the {site.name} limit {longest + comp:.2f} Å"
        return f"an angle of the {site.name} acceptor test ({test})"
    if not donor_ok(g, don, name, acc):
        test = DONOR_CLASSES[name][0]
        what = "H...A distance or D-H...A angle" if test == "theta_tau" else "distance or angle"
        if not g.hydrogen_positions(don) and test == "theta_tau":
            what = "no hydrogen position (the class needs one)"
        return f"{what} of the {name} donor test ({test}) against a {_acceptor_kind(g, acc)} acceptor"
    return f"{name} -> {site.name}"
