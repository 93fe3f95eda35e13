"""The limits of the ``chimerax`` H-bond mode: ChimeraX's relaxation (+0.4 Å, -20°), the
sulfur and metal rules, and the Mills & Dean (1996) donor and acceptor class tables as ChimeraX's
``hbonds`` bundle applies them (numbers from RBVI/ChimeraX ``src/bundles/hbonds/src/hbond.py``;
our own code). Data for ``hbond_classes`` and ``mills_dean``.
"""

from __future__ import annotations

DIST_SLOP = 0.4
ANGLE_SLOP = 20.0
SULFUR_COMP = 0.35
METAL_ACCEPTOR_RANGE = 4.0
METAL_MIN_ANGLE = 45.0
_SYMBOLS = (
    "H He Li Be B C N O F Ne Na Mg Al Si P S Cl Ar K Ca Sc Ti V Cr Mn Fe Co Ni Cu Zn Ga Ge As Se "
    "Br Kr Rb Sr Y Zr Nb Mo Tc Ru Rh Pd Ag Cd In Sn Sb Te I Xe Cs Ba La Ce Pr Nd Pm Sm Eu Gd Tb "
    "Dy Ho Er Tm Yb Lu Hf Ta W Re Os Ir Pt Au Hg Tl Pb Bi Po At Rn Fr Ra Ac Th Pa U Np Pu Am Cm "
    "Bk Cf Es Fm Md No Lr"
).split()
#: Elements ChimeraX counts as metals for its acceptor rule (``Element.is_metal``: atomic numbers
#: 3-4, 11-13, 19-32, 37-51, 55-84, 87-103), wider than the ``plip`` mode's ion list.
CHIMERAX_METALS = frozenset(
    sym
    for z, sym in enumerate(_SYMBOLS, start=1)
    if 3 <= z <= 4 or 11 <= z <= 13 or 19 <= z <= 32 or 37 <= z <= 51 or 55 <= z <= 84 or z >= 87
)
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
    # generic donors (ChimeraX's fallbacks for atoms of no class)
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
#: Limits every donor test applies to an acceptor of no known geometry (ChimeraX's generic
#: acceptor columns): theta_tau (H...A, theta); upsilon_tau (D...A, upsilon min, -upsilon max,
#: theta); generic (H...A, D...A, D-H...A min, neighbour-D...A min).
GENERIC_ACCEPTOR_LIMITS = {
    "theta_tau": (2.48, 132),
    "upsilon_tau": (3.42, 90, -161, 125),
    "generic": (2.48, 3.42, 130, 90),
}

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
