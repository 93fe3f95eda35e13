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
* metals: an acceptor within 4.0 Å of a metal of its own model (``find_pairs``' ``models``) is
  not bonded when the D...A...metal angle is below 45 degrees; a planar N acceptor/donor within
  4.0 Å of such a metal is no donor (both ChimeraX's rules); and as in the ``plip`` mode a pair
  whose two atoms both coordinate the same metal (within 3.0 Å) is not an H-bond
  (docs/spec.md section 3).

Atom classes come from IDATM-style types (``idatm``) and the neighbour patterns of ChimeraX's
tables (``donor_class`` / ``acceptor_class``); atoms matching no class are generic donors or
acceptors with ChimeraX's generic limits. Every class's limits are listed in docs/hbonds.md.
"""

from __future__ import annotations

import math

import numpy as np

from .hbond_classes import (
    acceptor_site,
    donor_class,
)
from .hbond_graph import XH_LENGTH, Graph, Site, bond_positions, find_rings
from .hbond_limits import (
    ACCEPTOR_CLASSES,
    ANGLE_SLOP,
    ANILINE_ACCEPTOR_TAU,
    DIST_SLOP,
    DONOR_CLASSES,
    GENERIC_ACCEPTOR_LIMITS,
    METAL_ACCEPTOR_RANGE,
    METAL_MIN_ANGLE,
    SEARCH_RADIUS,
    SULFUR_COMP,
    relax,
)
from .idatm import PLANAR, TETRAHEDRAL

__all__ = [
    "ACCEPTOR_CLASSES",
    "ANGLE_SLOP",
    "DIST_SLOP",
    "DONOR_CLASSES",
    "GENERIC_ACCEPTOR_LIMITS",
    "SEARCH_RADIUS",
    "SULFUR_COMP",
    "XH_LENGTH",
    "Graph",
    "Site",
    "acceptor_failure",
    "acceptor_ok",
    "acceptor_site",
    "bond_positions",
    "donor_class",
    "donor_failure",
    "donor_ok",
    "explain_pair",
    "find_pairs",
    "find_rings",
    "relax",
]

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


def _phi_angle(dp, ap, bp, plane) -> float | None:
    """The angle base-A-D, all projected into ``plane`` (three points), in degrees; None when
    there is no plane or it is degenerate (the phi test then passes)."""
    if plane is None:
        return None
    normal = np.cross(plane[1] - plane[0], plane[2] - plane[1])
    norm = np.linalg.norm(normal)
    if norm < 1e-9:
        return None
    normal = normal / norm
    off = float(np.dot(normal, plane[1]))

    def project(p):
        return p - normal * (float(np.dot(normal, p)) - off)

    return _angle(project(bp), project(ap), project(dp))


def _phi_failure(dp, ap, bp, plane, phi: float, what: str = "phi") -> str | None:
    """Why the phi test fails: the projected base-A-D angle under ``phi`` (None: it passes)."""
    angle = _phi_angle(dp, ap, bp, plane)
    if angle is None or angle >= phi:
        return None
    return f"{what} {angle:.0f}° under {phi:.0f}°"


def _neighbours_with_h(g: Graph, acc: int) -> list:
    """ChimeraX's ``atom.neighbors`` of ``acc``: its heavy neighbours (indices), then its explicit
    hydrogens (positions)."""
    return list(g.nbrs[acc]) + list(g.explicit_h[acc])


def _phi_plane(g: Graph, acc: int, b1, b2):
    """(plane, base point) of the phi test for an acceptor with principal bonded atoms (each an
    atom index or, for a hydrogen, a position)."""
    ap = g.coords[acc]

    def is_atom(b) -> bool:
        return isinstance(b, (int, np.integer))

    def pos(b):
        return g.coords[b] if is_atom(b) else np.asarray(b, dtype=np.float64)

    if b2 is not None:
        return [ap, pos(b1), pos(b2)], (pos(b1) + pos(b2)) / 2.0
    if b1 is not None and not is_atom(b1):
        return None, pos(b1)  # a hydrogen has no further bonded atoms
    if b1 is not None:
        # the bonded atom's other neighbours (its explicit hydrogens included, as ChimeraX)
        grand_pos = [g.coords[k] for k in g.nbrs[b1] if k != acc] + list(g.explicit_h[b1])
        if len(grand_pos) == 1:
            return [ap, g.coords[b1], grand_pos[0]], g.coords[b1]
        if len(grand_pos) == 2:
            return [ap, grand_pos[0], grand_pos[1]], g.coords[b1]
        if len(grand_pos) > 2:
            raise ValueError("too many neighbours for a phi plane")  # ChimeraX: ConnectivityError
        return None, g.coords[b1]
    return None, None


def _phi_partners(g: Graph, site: Site) -> tuple:
    """The two principal bonded atoms of a phi/psi acceptor: the class's, the empty slots of a
    generic acceptor filled by its explicit hydrogens (``Site.with_h``), or with none given the
    acceptor's neighbours, hydrogens included (ChimeraX's ``acc_phi_psi``)."""
    b1, b2 = (site.partners + (None, None))[:2]
    if b1 is None:
        nbs = _neighbours_with_h(g, site.atom)
        return (nbs + [None, None])[0], (nbs + [None, None])[1]
    if b2 is None and site.with_h and g.explicit_h[site.atom]:
        b2 = g.explicit_h[site.atom][0]
    return b1, b2


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
        subs = g.substituent_positions(heavy[0]) + [
            g.coords[k] for k in g.nbrs[heavy[0]] if k != da
        ]
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


def _over(what: str, value: float, limit: float) -> str:
    return f"{what} {value:.2f} Å over {limit:.2f} Å"


def _theta_failure(dp, hyds, ap, theta: float) -> str | None:
    """``_theta_ok`` as a reason: the best D-H...A angle under ``theta`` (None: it passes)."""
    if not hyds:
        return None
    best = max(_angle(ap, h, dp) for h in hyds)
    if best >= theta:
        return None
    shown = f"{best:.0f}" if round(best) < theta else f"{best:.1f}"  # never "125° under 125°"
    return f"D-H...A {shown}° under {theta:.0f}° (best of {len(hyds)} H)"


def acceptor_failure(g: Graph, site: Site, don: int) -> str | None:
    """Why the acceptor class's test rejects donor ``don`` (None: it passes). Distances in Å,
    angles in degrees, each against its relaxed limit."""
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
        side = "syn" if is_syn else "anti"
        if dist > r + comp:
            return _over(f"D...A ({side})", dist, r + comp)
        failure = _phi_failure(dp, ap, pp, [ap, pp, sp], phi, f"phi ({side})")
        return failure or _theta_failure(dp, hyds, ap, theta)
    if test == "phi_psi":
        r, phi, theta = lim
        b1, b2 = _phi_partners(g, site)
        if dist > r + comp:
            return _over("D...A", dist, r + comp)
        try:
            plane, base = _phi_plane(g, acc, b1, b2)
        except ValueError:
            return "bad connectivity at the acceptor (ChimeraX skips the pair)"
        failure = _phi_failure(dp, ap, base, plane, phi) if base is not None else None
        return failure or _theta_failure(dp, hyds, ap, theta)
    if test == "theta_tau":
        r, up_low, up_high, theta = lim
        if dist > r + comp:
            return _over("D...A", dist, r + comp)
        partner = site.partners[0] if site.partners else None
        up_high = -up_high
        candidates = [g.coords[partner]] if partner is not None else _lone_pair_bisectors(g, acc)
        tau, tau_sym = ANILINE_ACCEPTOR_TAU if site.name == "aniline N" else (None, None)
        if not candidates:
            return _theta_failure(dp, hyds, ap, theta)
        for pp in candidates:
            ups = _angle(pp, ap, dp)
            if (
                up_low <= ups <= up_high
                and _theta_ok(dp, hyds, ap, theta)
                and _tau_ok(g, tau, tau_sym or 0, acc, dp)
            ):
                return None
        return f"upsilon (outside {up_low:.0f}-{up_high:.0f}°), D-H...A or tau at the acceptor"
    r, min_angle = lim  # generic
    if dist > r + comp:
        return _over("D...A", dist, r + comp)
    # every bonded atom, hydrogens included (ChimeraX's acc_generic reads atom.neighbors)
    worst = min((_angle(p, ap, dp) for p in g.bonded_points(acc)), default=180.0)
    if worst < min_angle:
        return f"neighbour-A...D {worst:.0f}° under {min_angle:.0f}°"
    return None


def acceptor_ok(g: Graph, site: Site, don: int) -> bool:
    """The acceptor class's test for donor ``don``."""
    return acceptor_failure(g, site, don) is None


def donor_failure(g: Graph, don: int, name: str, acc: int) -> str | None:
    """Why the donor class's test rejects acceptor ``acc`` (None: it passes). Distances in Å,
    angles in degrees, each against its relaxed limit."""
    test, tau_sym, limits = DONOR_CLASSES[name]
    lim = relax(limits)
    gen = relax(GENERIC_ACCEPTOR_LIMITS[test]) if test in GENERIC_ACCEPTOR_LIMITS else ()
    if test == "theta_tau":
        return _theta_tau_failure(g, don, acc, lim, gen)
    if test == "upsilon_tau":
        return _upsilon_tau_failure(g, don, acc, lim, gen, tau_sym)
    return _generic_donor_failure(g, don, acc, lim, gen)


def _theta_tau_failure(g: Graph, don: int, acc: int, lim, gen) -> str | None:
    """The theta/tau test: H...A distance and D-H...A angle by acceptor kind (plus phi at an
    sp3 O with two bonds, the lone pairs at an sp3 N)."""
    dp, ap = g.coords[don], g.coords[acc]
    hyds = g.hydrogen_positions(don)
    kind = _acceptor_kind(g, acc)
    acc_s = g.elements[acc] == "S"
    if not hyds:
        return "no hydrogen position (the class needs one)"
    if kind == "sp2 O":
        rp, theta = lim[0], lim[1]
    elif kind == "sp3 O":
        rp, theta = lim[2], lim[3]
        # ChimeraX tests phi when the acceptor has two bonded atoms, hydrogens included
        bonded = _neighbours_with_h(g, acc)
        if g.n_bonds(acc) == 2 and len(bonded) == 2:
            plane, base = _phi_plane(g, acc, bonded[0], bonded[1])
            failure = _phi_failure(dp, ap, base, plane, lim[4], "phi at the acceptor")
            if failure:
                return failure
    elif kind == "sp3 N":
        rp, theta = lim[5], lim[6]
        bis = _lone_pair_bisectors(g, acc)
        if bis and not any(_angle(dp, ap, b) > lim[7] for b in bis):
            return f"D...A against the acceptor's lone pairs under {lim[7]:.0f}°"
    else:
        rp, theta = gen[0] + (SULFUR_COMP if acc_s else 0.0), gen[1]
    nearest = min(float(np.linalg.norm(h - ap)) for h in hyds)
    if nearest > rp:
        return _over("H...A", nearest, rp)
    return _theta_failure(dp, hyds, ap, theta)


def _upsilon_tau_failure(g: Graph, don: int, acc: int, lim, gen, tau_sym) -> str | None:
    """The upsilon/tau test: D...A distance, the angle at the donor from its one heavy
    neighbour (upsilon), D-H...A (theta) and the acceptor off the donor's plane (tau)."""
    dp, ap = g.coords[don], g.coords[acc]
    hyds = g.hydrogen_positions(don)
    kind = _acceptor_kind(g, acc)
    acc_s = g.elements[acc] == "S"
    if kind == "sp2 O":
        r, lo, hi, theta, tau = lim[0:5]
    elif kind == "sp3 O":
        r, lo, hi, theta, tau = lim[5:10]
    elif kind == "sp3 N":
        r, lo, hi, theta, tau = lim[11:16]
        if len(g.nbrs[acc]) + len(g.explicit_h[acc]) > 1:
            bis = _lone_pair_bisectors(g, acc)
            if bis and not any(_angle(b, ap, dp) >= lim[16] for b in bis):
                return f"D...A against the acceptor's lone pairs under {lim[16]:.0f}°"
    else:
        r, lo, hi, theta = gen
        r += SULFUR_COMP if acc_s else 0.0
        tau = None
    dist = float(np.linalg.norm(dp - ap))
    if dist > r:
        return _over("D...A", dist, r)
    heavy = g.nbrs[don]
    if len(heavy) != 1:
        return f"{len(heavy)} heavy neighbours (the test needs one)"
    ups = _angle(g.coords[heavy[0]], dp, ap)
    if ups < lo or ups > -hi:
        return f"upsilon {ups:.0f}° outside {lo:.0f}-{-hi:.0f}°"
    failure = _theta_failure(dp, hyds, ap, theta)
    if failure is None and not _tau_ok(g, tau, tau_sym, don, ap):
        failure = f"tau (limit {tau:.0f}°, the acceptor off the donor's plane)"
    return failure


def _generic_donor_failure(g: Graph, don: int, acc: int, lim, gen) -> str | None:
    """The generic donor test: D...A (no hydrogen) or H...A distance by acceptor kind, the
    smallest neighbour-D...A angle and D-H...A."""
    dp, ap = g.coords[don], g.coords[acc]
    hyds = g.hydrogen_positions(don)
    kind = _acceptor_kind(g, acc)
    acc_s = g.elements[acc] == "S"
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
        dist = float(np.linalg.norm(dp - ap))
        if dist > r:
            return _over("D...A", dist, r)
    else:
        nearest = min(float(np.linalg.norm(h - ap)) for h in hyds)
        if nearest >= rp:
            return _over("H...A", nearest, rp)
    worst = min((_angle(g.coords[k], dp, ap) for k in g.nbrs[don]), default=180.0)
    if worst < min_bonded:
        return f"neighbour-D...A {worst:.0f}° under {min_bonded:.0f}°"
    return _theta_failure(dp, hyds, ap, min_h_angle)


def donor_ok(g: Graph, don: int, name: str, acc: int) -> bool:
    """The donor class's test against acceptor ``acc``."""
    return donor_failure(g, don, name, acc) is None


def metal_partners(
    g: Graph, metals: list[int], atoms: list[int], cutoff: float, models=None
) -> dict[int, list[int]]:
    """For each of ``atoms``, the metal atoms within ``cutoff`` Å (of the atom's own model when
    ``models`` gives each atom's model: ChimeraX pairs a model's metals with its own acceptors)."""
    out: dict[int, list[int]] = {}
    for a in atoms:
        near = [
            m
            for m in metals
            if (models is None or models[m] == models[a])
            and np.linalg.norm(g.coords[a] - g.coords[m]) <= cutoff
        ]
        if near:
            out[a] = near
    return out


def find_pairs(
    g: Graph, donors: list[int], acceptors: list[int], metals: list[int] = (), models=None
) -> list[tuple[int, int]]:
    """(donor, acceptor) pairs among ``donors`` x ``acceptors`` that pass both class tests and
    ChimeraX's metal rules (``models``: each atom's model, see ``metal_partners``)."""
    sites = {a: acceptor_site(g, a) for a in acceptors}
    sites = {a: s for a, s in sites.items() if s is not None}
    classes = {d: donor_class(g, d) for d in donors}
    near_metal = metal_partners(
        g, list(metals), sorted(set(sites) | set(classes)), METAL_ACCEPTOR_RANGE, models
    )
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
            if any(
                _angle(g.coords[d], g.coords[a], g.coords[m]) < METAL_MIN_ANGLE
                for m in near_metal.get(a, ())
            ):
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
    failure = acceptor_failure(g, site, don)
    if failure is not None:
        return f"{site.name} acceptor test ({ACCEPTOR_CLASSES[site.name][0]}): {failure}"
    failure = donor_failure(g, don, name, acc)
    if failure is not None:
        test = DONOR_CLASSES[name][0]
        return f"{name} donor test ({test}) against a {_acceptor_kind(g, acc)} acceptor: {failure}"
    return f"{name} -> {site.name}"
