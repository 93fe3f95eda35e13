"""Per-class fixtures of the chimerax H-bond mode: for every Mills & Dean acceptor and donor class
(as ChimeraX's hbonds applies them, relaxed 0.4 Å / 20 degrees) a small geometric fixture just
inside and just outside each distance and angle limit, written from the published numbers (the
tables below are copied from the paper's numbers here, not read from the module under test)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from misi_bench.builder.chemistry import mills_dean as md

SLOP_D, SLOP_A = 0.4, 20.0
EPS_D, EPS_A = 0.02, 1.0

# acceptor class -> (test, published limits) (Mills & Dean 1996 via ChimeraX hbond.py)
ACCEPTORS = {
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
    "tertiary amine N": ("lone_pair", (3.17, 153, -180, 145)),
    "nitrile N": ("theta_tau", (3.30, 153, -180, 150)),
    "secondary amine N": ("lone_pair", (3.30, 153, -180, 150)),
    "phenol O": ("theta_tau", (3.17, 100, -153, 150)),
    "aniline N": ("theta_tau", (3.42, 90, -137, 140)),
    "non-ring ether O": ("phi_psi2", (3.42, 140, 140)),
    "non-ring imine N": ("phi_psi2", (3.42, 140, 140)),
    "symmetric 6-ring N": ("phi_psi2", (3.17, 150, 145)),
    "symmetric 5-ring N": ("phi_psi2", (3.30, 140, 155)),
    "asymmetric 6-ring N": ("phi_psi2", (3.30, 140, 140)),
    "asymmetric 5-ring N": ("phi_psi2", (3.30, 150, 135)),
    "5-ring O": ("phi_psi2", (3.42, 150, 135)),
    "generic O": ("generic", (3.53, 90)),
    "generic N": ("generic", (3.42, 90)),
    "generic S": ("generic", (3.83, 85)),
    "generic N2": ("phi_psi2", (3.42, 140, 135)),
    "generic O3, two bonds": ("phi_psi2", (3.42, 120, 135)),
    "generic O-, planar neighbour": ("phi_psi", (3.53, 90, 130)),
    "generic O2, planar neighbour": ("phi_psi", (3.30, 110, 130)),
    "generic O2, tetrahedral neighbour": ("theta_tau", (3.03, 100, -180, 145)),
    "generic O3, one bond": ("theta_tau", (3.17, 100, -161, 145)),
    "generic N3, one heavy neighbour": ("theta_tau", (3.13, 98, -180, 150)),
    "generic N3": ("lone_pair", (3.30, 153, -180, 145)),
    "generic N1": ("theta_tau", (3.40, 136, -180, 145)),
    "generic S2": ("phi_psi", (3.83, 85, 140)),
}


def _dir(deg: float) -> np.ndarray:
    """Unit vector in the xy plane at ``deg`` from +x."""
    return np.array([math.cos(math.radians(deg)), math.sin(math.radians(deg)), 0.0])


def _dir_z(deg: float) -> np.ndarray:
    """Unit vector in the xz plane at ``deg`` from +x."""
    return np.array([math.cos(math.radians(deg)), 0.0, math.sin(math.radians(deg))])


def acceptor_fixture(
    kind: str, acc_element: str, donor_pos, donor_h=None, donor_element: str = "O"
):
    """Acceptor A at the origin with its partners on the -x side in the xy plane; an isolated
    donor at ``donor_pos`` (optionally with one explicit hydrogen). Returns (graph, site)."""
    atoms = [(acc_element, "O2", (0.0, 0.0, 0.0))]  # 0 acceptor (type irrelevant to the tests)
    bonds = []
    if kind in ("syn_anti", "phi_psi", "theta_tau", "generic"):
        atoms.append(("C", "C2", (-1.3, 0.0, 0.0)))  # 1 plane/partner atom
        atoms.append(("N", "Npl", (-1.3 - 0.65, 1.1, 0.0)))  # 2 syn atom / grand-neighbour (+y)
        atoms.append(("C", "C3", (-1.3 - 0.65, -1.1, 0.0)))  # 3 grand-neighbour (-y)
        bonds = [(0, 1), (1, 2), (1, 3)]
        partners = {"syn_anti": (2, 1), "phi_psi": (1, None), "theta_tau": (1,), "generic": ()}[
            kind
        ]
    elif kind == "phi_psi2":
        atoms.append(("C", "C3", (-0.7, 1.1, 0.0)))
        atoms.append(("C", "C3", (-0.7, -1.1, 0.0)))
        bonds = [(0, 1), (0, 2)]
        partners = (1, 2)
    else:  # lone_pair: three tetrahedral neighbours, the lone pair along +x
        for phi in (0.0, 120.0, 240.0):
            s = math.sqrt(8.0) / 3.0
            atoms.append(
                (
                    "C",
                    "C3",
                    (
                        -1.47 / 3.0,
                        1.47 * s * math.cos(math.radians(phi)),
                        1.47 * s * math.sin(math.radians(phi)),
                    ),
                )
            )
        bonds = [(0, 1), (0, 2), (0, 3)]
        partners = (None,)
    don = len(atoms)
    atoms.append((donor_element, "O3", tuple(donor_pos)))
    h_coords = [donor_h] if donor_h is not None else []
    h_parent = [don] if donor_h is not None else []
    g = md.Graph(
        [a[2] for a in atoms],
        [a[0] for a in atoms],
        [a[1] for a in atoms],
        bonds,
        [0] * len(atoms),
        h_coords,
        h_parent,
    )
    return g, partners, don


def _acc(name: str, donor_pos, donor_h=None, donor_element="O", acc_element=None):
    kind = ACCEPTORS[name][0]
    el = acc_element or (
        "S" if name.endswith(" S") or "S2" in name else ("N" if " N" in name else "O")
    )
    g, partners, don = acceptor_fixture(kind, el, donor_pos, donor_h, donor_element)
    return md.acceptor_ok(g, md.Site(0, name, partners), don)


def _h_at_theta(donor: np.ndarray, acceptor: np.ndarray, theta: float) -> np.ndarray:
    """A hydrogen 1.0 Å from ``donor`` making the angle donor-H...acceptor equal ``theta``."""
    u = (acceptor - donor) / np.linalg.norm(acceptor - donor)
    v = np.cross(u, [0.0, 0.0, 1.0])
    v = v / np.linalg.norm(v)
    lo, hi = 0.0, math.pi  # angle between D->H and D->A: 0 gives theta 180, larger gives less
    for _ in range(60):
        mid = (lo + hi) / 2
        h = donor + math.cos(mid) * u + math.sin(mid) * v
        if md._angle(acceptor, h, donor) > theta:
            lo = mid
        else:
            hi = mid
    return donor + math.cos(lo) * u + math.sin(lo) * v


def relaxed(limits):
    out = []
    for v in limits:
        if 0 < v < 7.5:
            out.append(v + SLOP_D)
        elif v < 0:
            out.append(max(v - SLOP_A, -180.0))
        else:
            out.append(max(v - SLOP_A, 0.0))
    return out


def test_relaxation_follows_chimerax_convention():
    assert md.relax((3.30, 110, -153, None)) == pytest.approx((3.70, 90.0, -173.0, None))
    assert md.relax((3.03, 10, -170)) == (pytest.approx(3.43), 0.0, -180.0)
    assert md.DIST_SLOP == 0.4 and md.ANGLE_SLOP == 20.0
    for name, (_test, limits) in ACCEPTORS.items():
        assert md.ACCEPTOR_CLASSES[name][1] == limits, name


def _ahead(kind: str, lim) -> np.ndarray:
    """A donor direction that meets the class's angle limits: straight ahead, or for theta/tau
    classes the middle of the upsilon range (in the xz plane, off the partner's substituent
    plane)."""
    if kind in ("theta_tau", "lone_pair"):
        return _dir_z(180.0 - (lim[1] + min(-lim[2], 180.0)) / 2.0)
    return _dir(0.0)


@pytest.mark.parametrize("name", sorted(ACCEPTORS))
def test_acceptor_distance_limit(name):
    """Straight in front of the acceptor: bonded just inside the relaxed distance, not outside."""
    kind, limits = ACCEPTORS[name]
    lim = relaxed(limits)
    if kind == "syn_anti":
        for angle, r in ((3.0, lim[0]), (-3.0, lim[3])):  # syn side (+y) and anti side
            assert _acc(name, (r - EPS_D) * _dir(angle)), (name, angle)
            assert not _acc(name, (r + EPS_D) * _dir(angle)), (name, angle)
        return
    r = lim[0]
    ahead = _ahead(kind, lim)
    assert _acc(name, (r - EPS_D) * ahead), name
    assert not _acc(name, (r + EPS_D) * ahead), name


@pytest.mark.parametrize("name", sorted(n for n, (k, _) in ACCEPTORS.items() if k != "generic"))
def test_acceptor_theta_limit(name):
    """D-H...A (the donor's explicit hydrogen) just above and below the relaxed theta."""
    kind, limits = ACCEPTORS[name]
    lim = relaxed(limits)
    theta = {"syn_anti": lim[2], "phi_psi": lim[2], "phi_psi2": lim[2]}.get(
        kind, lim[3] if len(lim) > 3 else None
    )
    if kind == "syn_anti":
        theta = lim[5]  # anti side below
        pos = (lim[3] - 0.3) * _dir(-3.0)
    else:
        pos = (lim[0] - 0.3) * _ahead(kind, lim)
    ok = _h_at_theta(pos, np.zeros(3), theta + EPS_A)
    bad = _h_at_theta(pos, np.zeros(3), theta - EPS_A)
    assert _acc(name, pos, ok), name
    assert not _acc(name, pos, bad), name


@pytest.mark.parametrize(
    "name", sorted(n for n, (k, _) in ACCEPTORS.items() if k in ("syn_anti", "phi_psi", "phi_psi2"))
)
def test_acceptor_phi_limit(name):
    """The base-A...D angle in the acceptor's plane just above and below the relaxed phi (the
    base is the plane atom, the bonded atom or the midpoint of two bonded atoms)."""
    kind, limits = ACCEPTORS[name]
    lim = relaxed(limits)
    if kind == "syn_anti":
        cases = ((lim[1], 1.0), (lim[4], -1.0))  # syn (+y), anti (-y)
        r = min(lim[0], lim[3]) - 0.3
    else:
        cases = ((lim[1], 1.0),)
        r = lim[0] - 0.3
    for phi, side in cases:
        if phi <= 0:
            continue
        for delta, expect in ((EPS_A, True), (-EPS_A, False)):
            angle = side * (180.0 - (phi + delta))  # base on -x: angle base-A-D = 180 - |angle|
            assert _acc(name, r * _dir(angle)) is expect, (name, phi, delta)


@pytest.mark.parametrize(
    "name", sorted(n for n, (k, _) in ACCEPTORS.items() if k in ("theta_tau", "lone_pair"))
)
def test_acceptor_upsilon_limits(name):
    """The partner-A...D angle (or lone-pair bisector-A...D) just inside and outside the relaxed
    upsilon range."""
    kind, limits = ACCEPTORS[name]
    lo, hi = relaxed(limits)[1], -relaxed(limits)[2]
    r = relaxed(limits)[0] - 0.3
    # partner on -x (or lone pair on +x: bisector on -x): upsilon = 180 - angle from +x
    # (in the xz plane, across the plane of the partner's substituents: the aniline N's tau test
    # wants the donor off the ring plane)
    for ups, expect in ((lo + EPS_A, True), (lo - EPS_A, False)):
        assert _acc(name, r * _dir_z(180.0 - ups)) is expect, (name, ups)
    if hi < 180.0:
        assert _acc(name, r * _dir_z(180.0 - (hi - EPS_A))), name
        assert not _acc(name, r * _dir_z(180.0 - (hi + EPS_A))), name


@pytest.mark.parametrize("name", [n for n, (k, _) in ACCEPTORS.items() if k == "generic"])
def test_generic_acceptor_neighbour_angle(name):
    lim = relaxed(ACCEPTORS[name][1])
    r = lim[0] - 0.3
    # neighbour at -x: angle neighbour-A...D = 180 - angle
    assert _acc(name, r * _dir(180.0 - (lim[1] + EPS_A)))
    assert not _acc(name, r * _dir(180.0 - (lim[1] - EPS_A)))


def test_sulfur_donor_reaches_0_35_angstrom_further():
    lim = relaxed(ACCEPTORS["amide O"][1])
    pos = (lim[3] + 0.2) * _dir(-3.0)
    assert not _acc("amide O", pos)
    assert _acc("amide O", pos, donor_element="S")
    assert not _acc("amide O", (lim[3] + 0.35 + EPS_D) * _dir(-3.0), donor_element="S")


# ------------------------------------------------------------------------------------------
# donors

# donor class -> (test, tau symmetry, published limits)
DONORS = {
    "carboxylic acid OH": (
        "upsilon_tau",
        2,
        (2.87, 103, -128, 140, -30, 2.87, 103, -128, 155, -30, 150, 2.87, 103, -128, 140, -30, 150),
    ),
    "protonated C=N NH2": (
        "upsilon_tau",
        4,
        (
            3.17,
            90,
            -146,
            140,
            -30,
            3.17,
            90,
            -146,
            140,
            -22.5,
            150,
            3.17,
            113,
            -161,
            125,
            None,
            140,
        ),
    ),
    "protonated primary amine": (
        "upsilon_tau",
        6,
        (3.17, 90, -136, 140, 20, 3.17, 90, -132, 150, 25, 130, 3.17, 90, -124, 155, 15, 150),
    ),
    "hydroxyl": (
        "upsilon_tau",
        6,
        (
            3.17,
            90,
            -141,
            130,
            None,
            3.03,
            90,
            -141,
            135,
            None,
            140,
            3.03,
            100,
            -132,
            145,
            None,
            150,
        ),
    ),
    "amide NH2": (
        "upsilon_tau",
        4,
        (3.30, 103, -153, 135, -45, 3.30, 109, -141, 140, -30, 140, 3.30, 113, -161, 125, -30, 145),
    ),
    "aniline NH2": (
        "upsilon_tau",
        4,
        (
            3.30,
            100,
            -146,
            145,
            -37.5,
            3.30,
            103,
            -146,
            140,
            -37.5,
            130,
            3.42,
            90,
            161,
            125,
            None,
            140,
        ),
    ),
    "phenol OH": (
        "upsilon_tau",
        4,
        (
            3.03,
            103,
            -136,
            145,
            -37.5,
            3.03,
            103,
            -136,
            150,
            -45.0,
            140,
            2.87,
            109,
            -128,
            145,
            -52.5,
            150,
        ),
    ),
    "primary amine": (
        "upsilon_tau",
        6,
        (3.30, 90, -128, 150, 30, 3.42, 90, -124, 155, 25, 130, 3.42, 90, -132, 155, 20, 140),
    ),
    "planar charged NH": ("theta_tau", 4, (1.92, 146, 1.92, 153, 150, 2.48, 141, 145)),
    "secondary ammonium": ("theta_tau", 2, (2.09, 141, 2.09, 141, 155, 2.48, 141, 145)),
    "amide NH": ("theta_tau", 2, (2.23, 146, 2.23, 146, 140, 2.36, 141, 145)),
    "tertiary ammonium": ("theta_tau", 6, (1.92, 146, 2.09, 146, 140, 2.48, 141, 145)),
    "imine NH": ("theta_tau", 2, (2.23, 132, 2.36, 146, 140, 2.48, 141, 145)),
    "secondary amine": ("theta_tau", 2, (2.36, 141, 2.48, 146, 150, 2.48, 153, 155)),
    "5-ring NH": ("theta_tau", 4, (2.09, 146, 2.09, 141, 140, 2.48, 141, 145)),
    "aromatic 6-ring NH": ("theta_tau", 2, (2.23, 136, 2.23, 141, 150, 2.48, 141, 145)),
    "generic planar NH": ("theta_tau", 0, (2.23, 136, 2.23, 141, 140, 2.46, 136, 140)),
    "generic planar NH2": (
        "upsilon_tau",
        4,
        (3.30, 90, -153, 135, -45, 3.30, 90, -146, 140, -37.5, 130, 3.40, 108, -166, 125, -35, 140),
    ),
    "generic O": ("generic", 0, (2.41, 2.28, 2.28, 3.27, 3.14, 3.14)),
    "generic N": ("generic", 0, (2.36, 2.48, 2.48, 3.30, 3.42, 3.42)),
    "generic S": ("generic", 0, (2.42, 2.42, 2.42, 3.65, 3.65, 3.65)),
}
#: acceptor columns of the tables: (acceptor element, IDATM type)
COLUMNS = {"sp2 O": ("O", "O2"), "sp3 O": ("O", "O3"), "sp3 N": ("N", "N3")}


def donor_fixture(name: str, acc_pos, h_dirs=(), acc_column="sp2 O", donor_element=None):
    """Donor D at the origin bonded to X on -x; X's other substituents in the xy plane (planar X)
    so that tau tests of symmetry 4 see the acceptor in the plane; explicit hydrogens along
    ``h_dirs``; an isolated acceptor atom of the given column at ``acc_pos``."""
    el = donor_element or ("O" if "O" in name.split()[-1] or "hydroxyl" in name else "N")
    if name.startswith("generic "):
        el = name.split()[-1] if name.split()[-1] in ("O", "N", "S") else "N"
    sym = DONORS[name][1]
    atoms = [
        (el, "Npl" if "planar" in name else ("O3" if el == "O" else "N3"), (0.0, 0.0, 0.0)),
        ("C", "C2", (-1.4, 0.0, 0.0)),
    ]
    bonds = [(0, 1)]
    if sym == 2:  # one other substituent on X (e.g. the carboxylic acid's other O)
        atoms.append(("O", "O2", (-2.0, 1.1, 0.0)))
        bonds.append((1, 2))
    elif sym == 6:  # tetrahedral X: three other substituents, one anti to nothing in the xy plane
        atoms[1] = ("C", "C3", (-1.5, 0.0, 0.0))
        for phi in (60.0, 180.0, 300.0):
            s = math.sqrt(8.0) / 3.0
            atoms.append(
                (
                    "C",
                    "C3",
                    (
                        -1.5 - 1.5 / 3.0,
                        1.5 * s * math.cos(math.radians(phi)),
                        1.5 * s * math.sin(math.radians(phi)),
                    ),
                )
            )
            bonds.append((1, len(atoms) - 1))
    else:
        for y in (1.1, -1.1):
            atoms.append(("C", "C3", (-2.0, y, 0.0)))
            bonds.append((1, len(atoms) - 1))
    acc = len(atoms)
    a_el, a_type = COLUMNS.get(acc_column, ("S", "S3"))
    atoms.append((a_el, a_type, tuple(acc_pos)))
    h = [0.96 * np.asarray(d) / np.linalg.norm(d) for d in h_dirs]
    g = md.Graph(
        [a[2] for a in atoms],
        [a[0] for a in atoms],
        [a[1] for a in atoms],
        bonds,
        [len(h)] + [0] * (len(atoms) - 1),
        h,
        [0] * len(h),
        saturated=[True] * len(atoms),
    )
    return g, acc  # saturated: only the hydrogens given here (none inferred from the types)


def _don(name, acc_pos, h_dirs=(), column="sp2 O"):
    g, acc = donor_fixture(name, acc_pos, h_dirs, column)
    return md.donor_ok(g, 0, name, acc)


def _column_limits(name: str, column: str):
    test, _, limits = DONORS[name]
    lim = relaxed([v for v in limits if v is not None])  # None only stands for an absent tau
    raw = list(limits)
    if test == "theta_tau":
        rp = {
            "sp2 O": relaxed([raw[0]])[0],
            "sp3 O": relaxed([raw[2]])[0],
            "sp3 N": relaxed([raw[5]])[0],
        }
        th = {"sp2 O": raw[1], "sp3 O": raw[3], "sp3 N": raw[6]}
        return rp[column], th[column] - SLOP_A
    if test == "upsilon_tau":
        start = {"sp2 O": 0, "sp3 O": 5, "sp3 N": 11}[column]
        r, lo, hi, th = raw[start : start + 4]
        return r + SLOP_D, lo - SLOP_A, -max(hi - SLOP_A, -180.0), th - SLOP_A
    del lim
    col = {"sp2 O": 0, "sp3 O": 1, "sp3 N": 2}[column]
    return raw[col] + SLOP_D, raw[col + 3] + SLOP_D


UPSILON = sorted(n for n, (t, _, _) in DONORS.items() if t == "upsilon_tau")
THETA = sorted(n for n, (t, _, _) in DONORS.items() if t == "theta_tau")
GENERIC = sorted(n for n, (t, _, _) in DONORS.items() if t == "generic")


def test_donor_tables_match_the_published_numbers():
    for name, (test, sym, limits) in DONORS.items():
        assert md.DONOR_CLASSES[name] == (test, sym, limits), name


def _mid_upsilon(lo: float, hi: float) -> float:
    return (lo + min(hi, 180.0)) / 2.0


@pytest.mark.parametrize("name", [n for n in UPSILON if n != "carboxylic acid OH"])
@pytest.mark.parametrize("column", ["sp2 O", "sp3 O"])
def test_upsilon_tau_donor_distance_and_upsilon(name, column):
    """D...A just inside/outside the relaxed distance (no hydrogens, acceptor at a mid-range
    upsilon in the plane of X's substituents, so tau passes); the X-D...A angle just inside and
    outside the relaxed upsilon range."""
    r, lo, hi, _ = _column_limits(name, column)
    ahead = _dir(180.0 - _mid_upsilon(lo, hi))
    assert _don(name, (r - EPS_D) * ahead, column=column), name
    assert not _don(name, (r + EPS_D) * ahead, column=column), name
    d = r - 0.3
    assert _don(name, d * _dir(180.0 - (lo + EPS_A)), column=column), (name, lo)
    assert not _don(name, d * _dir(180.0 - (lo - EPS_A)), column=column), (name, lo)
    if hi < 180.0:
        assert _don(name, d * _dir(180.0 - (hi - EPS_A)), column=column), (name, hi)
        assert not _don(name, d * _dir(180.0 - (hi + EPS_A)), column=column), (name, hi)


@pytest.mark.parametrize("name", [n for n in UPSILON if n != "carboxylic acid OH"])
def test_upsilon_tau_donor_theta_with_explicit_hydrogen(name):
    """The donor's explicit hydrogen decides: D-H...A just above the relaxed theta bonds, just
    below does not (an NH2's second hydrogen points away from the acceptor)."""
    r, lo, hi, theta = _column_limits(name, "sp2 O")
    acc = (r - 0.4) * _dir(180.0 - _mid_upsilon(lo, hi))
    sym = DONORS[name][1]
    for target, expect in ((theta + EPS_A, True), (theta - EPS_A, False)):
        h = _h_at_theta(np.zeros(3), acc, target)
        dirs = [h, -h] if sym == 4 else [h]
        assert _don(name, acc, dirs) is expect, (name, target)


def test_carboxylic_acid_oh_fails_chimerax_tau_symmetry_check():
    """ChimeraX's tau test for the neutral carboxylic acid OH (symmetry 2) finds two substituents
    on the acid carbon and skips the pair (its AtomTypeError); we keep that behaviour: no bond to
    an O or N acceptor even at ideal geometry, while an S acceptor (generic column, no tau) can."""
    r, lo, hi, _ = _column_limits("carboxylic acid OH", "sp2 O")
    pos = (r - 0.3) * _dir(180.0 - _mid_upsilon(lo, hi))
    g, acc = donor_fixture("carboxylic acid OH", pos)
    assert not md.donor_ok(g, 0, "carboxylic acid OH", acc)
    assert _don("carboxylic acid OH", 3.0 * _dir(60.0), column="other S")


@pytest.mark.parametrize("name", THETA)
@pytest.mark.parametrize("column", ["sp2 O", "sp3 O", "sp3 N"])
def test_theta_tau_donor_h_distance_and_theta(name, column):
    """H...A just inside/outside the relaxed limit with the H pointing at A; D-H...A just
    above/below the relaxed theta; and no hydrogen at all: no bond (these classes need one)."""
    rp, theta = _column_limits(name, column)
    h = np.array([0.96, 0.0, 0.0])
    assert _don(name, h + (rp - EPS_D) * _dir(0.0), [h], column), name
    assert not _don(name, h + (rp + EPS_D) * _dir(0.0), [h], column), name
    assert not _don(name, h + 1.8 * _dir(0.0), [], column), name
    for target, expect in ((theta + EPS_A, True), (theta - EPS_A, False)):
        # acceptor 1.6 Å from the H, at D-H...A = target
        u = _dir(180.0 - target)
        acc = h + 1.6 * u
        assert abs(md._angle(np.zeros(3), h, acc) - target) < 1e-6
        assert _don(name, acc, [h], column) is expect, (name, column, target)


@pytest.mark.parametrize("name", GENERIC)
@pytest.mark.parametrize("column", ["sp2 O", "sp3 O", "sp3 N"])
def test_generic_donor_limits(name, column):
    """Without hydrogens: D...A just inside/outside the relaxed limit; with one: H...A."""
    rp, r = _column_limits(name, column)
    assert _don(name, (r - EPS_D) * _dir(0.0), (), column), name
    assert not _don(name, (r + EPS_D) * _dir(0.0), (), column), name
    h = np.array([0.96, 0.0, 0.0])
    assert _don(name, h + (rp - EPS_D) * _dir(0.0), [h], column), name
    assert not _don(name, h + (rp + EPS_D) * _dir(0.0), [h], column), name
    # the X-D...A angle: at least 90 - 20 degrees
    assert _don(name, 2.6 * _dir(180.0 - 71.0), (), column)
    assert not _don(name, 2.6 * _dir(180.0 - 69.0), (), column)


# ------------------------------------------------------------------------------------------
# explicit hydroxyl hydrogen: points away -> no bond; same group without H -> bond


def _hydroxyl_pair(with_h: bool, towards: bool):
    """A C-O(-H) donor and a ketone O 2.8 Å away along the tetrahedral direction (C-O...A 109.5
    degrees); the explicit H points at the acceptor or is turned 180 degrees about C-O."""
    u = _dir(180.0 - 109.5)
    v = np.cross(u, [0.0, 0.0, 1.0])
    a = 2.8 * u
    c2 = a + 1.23 * u
    atoms = [
        ("C", "C3", (-1.43, 0.0, 0.0)),
        ("O", "O3", (0.0, 0.0, 0.0)),
        ("O", "O2", tuple(a)),
        ("C", "C2", tuple(c2)),
        ("C", "C3", tuple(c2 + 0.65 * u + 1.1 * v)),
        ("C", "C3", tuple(c2 + 0.65 * u - 1.1 * v)),
    ]
    bonds = [(0, 1), (2, 3), (3, 4), (3, 5)]
    h = []
    if with_h:
        h = [0.96 * u if towards else 0.96 * np.array([u[0], -u[1], 0.0])]
    return md.Graph(
        [a[2] for a in atoms],
        [a[0] for a in atoms],
        [a[1] for a in atoms],
        bonds,
        [0, 1, 0, 0, 0, 0],
        h,
        [1] * len(h),
    )


def test_hydroxyl_with_explicit_h_pointing_away_does_not_bond():
    away = _hydroxyl_pair(with_h=True, towards=False)
    assert md._angle(away.coords[2], away.explicit_h[1][0], away.coords[1]) < 110.0
    assert md.donor_class(away, 1) == "hydroxyl"
    assert md.acceptor_site(away, 2).name == "ketone/aldehyde O"
    assert md.find_pairs(away, [1], [2]) == []
    toward = _hydroxyl_pair(with_h=True, towards=True)
    assert md.find_pairs(toward, [1], [2]) == [(1, 2)]
    bare = _hydroxyl_pair(with_h=False, towards=False)
    assert bare.hydrogen_positions(1) == []  # a rotor without input H: no position inferred
    assert md.donor_class(bare, 1) == "hydroxyl"
    assert md.find_pairs(bare, [1], [2]) == [(1, 2)]


def test_inferred_hydrogen_on_planar_nh():
    """A peptide N without input hydrogens gets its H on the outer bisector (ChimeraX hydpos)."""
    atoms = [
        ("N", "Npl", (0.0, 0.0, 0.0)),
        ("C", "C2", (-0.7, 1.2, 0.0)),
        ("C", "C3", (-0.7, -1.2, 0.0)),
    ]
    g = md.Graph(
        [a[2] for a in atoms],
        [a[0] for a in atoms],
        [a[1] for a in atoms],
        [(0, 1), (0, 2)],
        [1, 0, 0],
        [],
        [],
    )
    (h,) = g.hydrogen_positions(0)
    assert h[0] == pytest.approx(0.91) and abs(h[1]) < 1e-9  # ChimeraX: N + H covalent radii


def test_metal_coordination_blocks_an_acceptor_facing_the_metal():
    """ChimeraX: an acceptor within 4 Å of a metal is not H-bonded when D...A...metal < 45 degrees."""
    lim = relaxed(ACCEPTORS["generic O"][1])[0]
    for metal_angle, expect in ((40.0, []), (60.0, [(2, 0)])):
        atoms = [
            ("O", "O3", (0.0, 0.0, 0.0)),
            ("Zn", "Zn", tuple(2.1 * _dir(metal_angle))),
            ("O", "O3", tuple((lim - 0.5) * _dir(0.0))),
        ]
        g = md.Graph(
            [a[2] for a in atoms],
            [a[0] for a in atoms],
            [a[1] for a in atoms],
            np.zeros((0, 2)),
            [0, 0, 1],
            [],
            [],
        )
        assert md.find_pairs(g, [2], [0], metals=[1]) == expect, metal_angle
