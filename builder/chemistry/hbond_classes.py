"""Donor and acceptor classes of the ``chimerax`` H-bond mode: Mills & Dean (1996) as ChimeraX's
``hbonds`` applies them (which class an atom is, generic fallbacks and their neighbour patterns
from RBVI/ChimeraX ``src/bundles/hbonds/src/hbond.py`` and ``chem_group``; our own code). The
classes' limits are in ``hbond_limits``.
"""

from __future__ import annotations

from .hbond_graph import Graph, Site
from .idatm import PLANAR, SINGLE, TETRAHEDRAL, substituents

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
    if (
        t == "Npl"
        and one
        and nh == 2
        and heavy_types == ["C2"]
        and all(_single_or_tet(g, k) for k in g.nbrs[nb[0]] if k != i)
        and len(g.nbrs[nb[0]]) == 3
    ):
        return "protonated C=N NH2"
    if t == "Ng+" and one and nh == 2 and heavy_types == ["C2"]:
        return "protonated C=N NH2"
    if t == "N3+" and one and 1 <= nh <= 3 and _tet(g, nb[0]):  # H may be missing (ChimeraX)
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
    if (
        el == "N"
        and nh == 1
        and len(nb) == 2
        and any(_amide_carbon(g, k, i) and all(_tet(g, m) for m in nb if m != k) for k in nb)
    ):
        return "amide NH"
    if t == "N3+" and nh == 1 and len(nb) == 3 and all(_tet(g, k) for k in nb):
        return "tertiary ammonium"
    if t == "N2" and nh == 1 and one and g.geom(nb[0]) == PLANAR:
        return "imine NH"
    if t == "N3" and nh == 1 and len(nb) == 2 and all(_tet(g, k) for k in nb):
        return "secondary amine"
    if (
        t in ("Npl", "N2+")
        and len(g.rings_of[i]) == 1
        and (g.n_bonds(i) < 3 or nh > 0)
        and len(nb) == 2
    ):
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


def _phosphate_site(g: Graph, i: int, p: int) -> Site | None:
    """The syn/anti phosphate classes of ChimeraX's table for an O- ``i`` on phosphorus ``p``.

    Three O- on one P (a terminal phosphate): ChimeraX's group matching (``chem_group``) yields
    one group per P, whose first O- is the first in the P's bond order once an O- tried first
    is barred from the other O- slots; only that O (with four O-, the first two) gets the class,
    its syn partner the next O-; the others are generic O3- acceptors. Two O- (a diester): both,
    each the other's partner, when the other two substituents are tetrahedral or single."""
    if len(g.nbrs[p]) != 4:
        return None
    o_minus = [k for k in g.nbrs[p] if g.types[k] == "O3-"]
    rest = [k for k in g.nbrs[p] if k not in o_minus]
    if len(o_minus) >= 3 and all(_single_or_tet(g, k) for k in rest):
        leaders = o_minus[: len(o_minus) - 2]
        if i in leaders:
            return Site(i, "phosphate O- (3)", (o_minus[o_minus.index(i) + 1], p))
        return None
    if len(o_minus) == 2 and all(_single_or_tet(g, k) and g.types[k] != "O3-" for k in rest):
        mate = o_minus[1] if o_minus[0] == i else o_minus[0]
        return Site(i, "phosphate O- (2)", (mate, p))
    return None


def _phosphone_p(g: Graph, p: int, o3: int) -> bool:
    """ChimeraX's "phosphones" pattern ``Pac(O3, O3-, O3-, tetrahedral or single)`` at the O3
    ``o3``: the P's other three substituents all tetrahedral or single, at least two of them O3-
    (the fourth slot takes a third O3- too: a phosphate monoester's ester O). A missing fourth
    substituent may be a hydrogen (ChimeraX lets an H slot match nothing)."""
    others = [k for k in g.nbrs[p] if k != o3]
    minus = sum(1 for k in others if g.types[k] == "O3-")
    return (
        len(others) + g.h_count[p] in (2, 3)
        and minus >= 2
        and all(_single_or_tet(g, k) for k in others)
    )


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
        site = _phosphate_site(g, i, centre)
        if site is not None:
            return site
    if one and t == "O2-" and ctype == "Cac":
        mates = [k for k in g.nbrs[centre] if k != i and g.types[k] == "O2-"]
        if mates and len(g.nbrs[centre]) + g.h_count[centre] == 3:
            return Site(i, "carboxylate O", (mates[0], centre))
    if one and t == "S2" and g.elements[centre] == "C":
        return Site(i, "thiocarbonyl S", (centre, None))
    if one and t == "O2" and g.elements[centre] == "C":
        site = _carbonyl_acceptor(g, i, centre)
        if site is not None:
            return site
    if one and t == "O2-" and ctype == "Ntr":
        mates = [k for k in g.nbrs[centre] if k != i and g.types[k] == "O2-"]
        if mates:
            return Site(i, "nitro O", (mates[0], centre))
    if one and t == "O2" and ctype == "Son":
        mates = [k for k in g.nbrs[centre] if k != i and g.types[k] == "O2" and len(g.nbrs[k]) == 1]
        rest = [k for k in g.nbrs[centre] if k != i and k not in mates]
        if len(mates) == 1 and len(rest) == 2 and all(_single_or_tet(g, k) for k in rest):
            return Site(i, "sulfone O", (mates[0], centre))
    if t == "O3":
        pac = next((k for k in nb if g.types[k] == "Pac" and _phosphone_p(g, k, i)), None)
        if pac is not None:
            return Site(i, "phosphate ester O", (pac,))
    if one and t == "O2" and ctype == "Pox":
        return Site(i, "phosphine oxide O", (centre,))
    if one and t == "O2" and ctype == "Sxd":
        return Site(i, "sulfoxide O", (centre,))
    if t == "N3" and len(nb) == 1 and nh == 2 and _tet(g, nb[0]):
        return Site(i, "primary amine N", (nb[0],))
    if (
        t == "O3"
        and len(nb) == 1
        and nh == 1
        and g.types[nb[0]] not in ("Sac", "Pac")
        and g.geom(nb[0]) in (TETRAHEDRAL, SINGLE)
    ):
        return Site(i, "hydroxyl O", (nb[0],))
    if t == "O3" and len(nb) == 2 and nh == 0:
        sac = [k for k in nb if g.types[k] == "Sac"]
        other = [k for k in nb if k not in sac]
        if (
            sac
            and other
            and g.types[other[0]] != "Pac"
            and sum(1 for m in g.nbrs[sac[0]] if g.types[m] == "O3-") == 2
        ):
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
    site = _open_chain_acceptor(g, i)
    if site is not None:
        return site
    site = _ring_acceptor(g, i)
    if site is not None:
        return site
    return _generic_acceptor(g, i)


def _carbonyl_acceptor(g: Graph, i: int, centre: int) -> Site | None:
    """The class of a terminal O2 on carbon ``centre`` (carboxylic acid C=O, amide O,
    ketone/aldehyde O, ester C=O, in ChimeraX's order), or None."""
    ctype = g.types[centre]
    others = [k for k in g.nbrs[centre] if k != i]
    acid_oh = [
        k for k in others if g.types[k] == "O3" and g.h_count[k] == 1 and len(g.nbrs[k]) == 1
    ]
    if (
        acid_oh
        and len(others) + g.h_count[centre] == 2
        and all(_single_or_tet(g, k) for k in others if k != acid_oh[0])
    ):
        return Site(i, "carboxylic acid C=O", (acid_oh[0], centre))
    if ctype == "C2" and len(others) + g.h_count[centre] == 2:
        npl = [k for k in others if g.types[k] == "Npl"]
        if npl and all(_single_or_tet(g, k) for k in others if k != npl[0]):
            return Site(i, "amide O", (npl[0], centre))
        # ChimeraX's ketone pattern C2(O2, C, R): the other substituents C or H only, so an
        # ester (C2 with O2, C and an ether O3) reaches its own class below
        if any(g.elements[k] == "C" for k in others) and all(g.elements[k] == "C" for k in others):
            return Site(i, "ketone/aldehyde O", (centre, None))
        o3 = [
            k
            for k in others
            if g.types[k] == "O3"
            and len(g.nbrs[k]) == 2
            and all(_tet(g, m) for m in g.nbrs[k] if m != centre)
        ]
        if o3 and any(g.elements[k] == "C" for k in others):
            return Site(i, "ester C=O", (centre, None))
    return None


def _open_chain_acceptor(g: Graph, i: int) -> Site | None:
    """A non-ring ether O or imine N between two carbons, or None."""
    t, nb, nh = g.types[i], g.nbrs[i], g.h_count[i]
    in_ring = bool(g.rings_of[i])
    if (
        t == "O3"
        and not in_ring
        and len(nb) == 2
        and nh == 0
        and all(g.elements[k] == "C" for k in nb)
    ):
        return Site(i, "non-ring ether O", (nb[0], nb[1]))
    if (
        t == "N2"
        and not in_ring
        and len(nb) == 2
        and nh == 0
        and all(g.elements[k] == "C" for k in nb)
    ):
        return Site(i, "non-ring imine N", (nb[0], nb[1]))
    return None


def _ring_acceptor(g: Graph, i: int) -> Site | None:
    """Ring N and O acceptors (ChimeraX ``chem_group``): an N2 (or a two-bonded Npl/N2+ with
    another N in its ring) in exactly one 5- or 6-membered ring, symmetric when its two ring
    neighbours and the next ring atoms on either side match by element; any O in a 5-ring."""
    t, nb, rings = g.types[i], g.nbrs[i], g.rings_of[i]
    ring = rings[0] if len(rings) == 1 else ()
    candidate = (
        t == "N2"
        and len(ring) in (5, 6)
        or t in ("Npl", "N2+")
        and len(ring) == 5
        and any(g.elements[k] == "N" for k in ring if k != i)
    )
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
        return (
            Site(i, "generic O-, planar neighbour", (nb[0], None), with_h=True)
            if g.geom(nb[0]) == PLANAR
            else Site(i, "generic O", ())
        )
    if t == "O2":
        if not nb:
            return None
        kind = g.geom(nb[0])
        if kind == PLANAR:
            return Site(i, "generic O2, planar neighbour", (nb[0], None), with_h=True)
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
            partners = tuple(nb[:2]) + (None,) * (2 - len(nb[:2]))
            return Site(i, "generic O3, two bonds", partners, with_h=True)
        return None
    if el == "O":
        return Site(i, "generic O", ())
    if t == "N2":
        partners = tuple(nb[:2]) + (None,) * (2 - len(nb[:2]))
        return Site(i, "generic N2", partners, with_h=True)
    if t == "N3":
        if n_heavy == 0:
            return Site(i, "generic N", ())
        if n_heavy == 1:
            return Site(
                i, "generic N3, one heavy neighbour", (nb[0] if g.n_bonds(i) == 1 else None,)
            )
        return Site(i, "generic N3", (None,))
    if t == "N1":
        return Site(i, "generic N1", (nb[0] if nb else None,))
    if t == "S2":
        return Site(i, "generic S2", (nb[0] if nb else None, None), with_h=True)
    if t in ("Sar", "S3-"):
        return Site(i, "generic S", ())
    return None
