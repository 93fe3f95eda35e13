"""Donor and acceptor classes of the ``chimerax`` H-bond mode: Mills & Dean (1996) as ChimeraX's
``hbonds`` applies them (class tables, generic fallbacks and their neighbour patterns from
RBVI/ChimeraX ``src/bundles/hbonds/src/hbond.py`` and ``chem_group``; our own code).
"""
from __future__ import annotations

from .hbond_graph import Graph, Site
from .idatm import PLANAR, SINGLE, TETRAHEDRAL, substituents

DIST_SLOP = 0.4
ANGLE_SLOP = 20.0
SULFUR_COMP = 0.35
METAL_ACCEPTOR_RANGE = 4.0
METAL_MIN_ANGLE = 45.0
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
    """Ring N and O acceptors (ChimeraX ``chem_group``): an N2 (or a two-bonded Npl/N2+ with
    another N in its ring) in exactly one 5- or 6-membered ring, symmetric when its two ring
    neighbours and the next ring atoms on either side match by element; any O in a 5-ring."""
    t, nb, rings = g.types[i], g.nbrs[i], g.rings_of[i]
    ring = rings[0] if len(rings) == 1 else ()
    candidate = t == "N2" and len(ring) in (5, 6) or t in ("Npl", "N2+") and len(ring) == 5 and any(
        g.elements[k] == "N" for k in ring if k != i)
    if candidate and len(nb) == 2 and nh_free(g, i) and all(k in ring for k in nb):
        b1, b2 = nb
        if len(ring) == 5:
            rest = [k for k in ring if k not in (i, b1, b2)]
        else:
            rest = [next((k for k in g.nbrs[b] if k in ring and k != i), b) for b in (b1, b2)]
        symmetric = g.elements[b1] == g.elements[b2] and g.elements[rest[0]] == g.elements[rest[1]]
        return Site(i, f"{'symmetric' if symmetric else 'asymmetric'} {len(ring)}-ring N", (b1, b2))
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


