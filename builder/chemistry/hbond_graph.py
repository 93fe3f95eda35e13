"""The molecular graph the ``chimerax`` H-bond tests read (``mills_dean``): heavy atoms with
IDATM-style types, hydrogen counts, explicit hydrogens and the positions ChimeraX's ``hydpos``
would infer (RBVI/ChimeraX ``src/bundles/hbonds/src/hydpos.py`` and ``bond_geom``; our own code).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .idatm import LINEAR, PLANAR, TETRAHEDRAL, geometry, substituents

#: X-H lengths (Å) of inferred hydrogens: ChimeraX's ``Element.bond_length(X, "H")``, the sum of
#: Meng & Lewis's (1991) covalent radii (H 0.23, C/N/O 0.68, S 1.02), not the longer
#: spectroscopic lengths (N-H 1.01, O-H 0.96, S-H 1.34), which make D-H...A ~2 degrees smaller.
XH_LENGTH = {"N": 0.91, "O": 0.91, "S": 1.25, "C": 0.91}


@dataclass(frozen=True)
class Site:
    """A donor or acceptor: its class and the atoms its test refers to (``partners``: for
    syn/anti the syn atom and the plane atom, for phi/psi the one or two bonded atoms, for
    theta/tau the upsilon partner or None for the lone-pair bisector). ``with_h``: the
    acceptor's explicit hydrogens fill the empty (None) partner slots, in order: ChimeraX's
    generic acceptors take ``atom.neighbors``, hydrogens included, as their bonded atoms."""

    atom: int
    name: str
    partners: tuple = ()
    with_h: bool = False


class Graph:
    """Heavy atoms with IDATM types, hydrogen counts and hydrogen positions (explicit or
    inferred). Built by ``hbonds`` from a ``Complex``; kept small so fixtures can build one."""

    def __init__(
        self,
        coords,
        elements,
        types,
        bonds,
        h_count,
        h_coords,
        h_parent,
        rings: list[tuple[int, ...]] | None = None,
        aromatic_rings: set | None = None,
        saturated=None,
    ):
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
        self.aromatic_rings = (
            aromatic_rings
            if aromatic_rings is not None
            else {r for r in self.rings if all(geometry(self.types[k]) == PLANAR for k in r)}
        )
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

    def bonded_points(self, i: int) -> list[np.ndarray]:
        """Positions of the atoms bonded to ``i`` that the input places: its heavy neighbours,
        then its explicit hydrogens (ChimeraX's ``atom.neighbors``)."""
        return [self.coords[k] for k in self.nbrs[i]] + list(self.explicit_h[i])

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
        if (
            not known
            or len(known) >= subs
            or (len(known) == 1 and geom == TETRAHEDRAL)
            or geom - subs > 0
        ):
            return []
        length = XH_LENGTH.get(self.elements[i], 1.0)
        return bond_positions(
            self.coords[i], geom, length, [self.coords[k] for k in known], self._coplanar(i)
        )[:wanted]

    def _coplanar(self, i: int) -> list[np.ndarray] | None:
        """ChimeraX's in-plane reference points for a planar atom: the other neighbours
        (explicit hydrogens included) of its planar heavy neighbours; None unless planar."""
        if self.geom(i) != PLANAR:
            return None
        out: list[np.ndarray] = []
        for k in self.nbrs[i]:
            if self.geom(k) == PLANAR:
                out += [self.coords[m] for m in self.nbrs[k] if m != i] + list(self.explicit_h[k])
        return out

    def substituent_positions(self, i: int) -> list[np.ndarray]:
        """Hydrogen and lone-pair positions of atom ``i`` (ChimeraX ``hyd_positions`` with lone
        pairs): explicit hydrogens, plus the free positions of its geometry where the frame fixes
        them."""
        explicit = list(self.explicit_h[i])
        geom = self.geom(i)
        known = [self.coords[k] for k in self.nbrs[i]] + explicit
        if not geom or len(known) >= geom or not known or (len(known) == 1 and geom == TETRAHEDRAL):
            return explicit
        return explicit + bond_positions(self.coords[i], geom, 1.0, known, self._coplanar(i))


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


def bond_positions(
    centre, geom: int, length: float, known: list, coplanar: list | None = None
) -> list[np.ndarray]:
    """Positions of the free substituents of an atom of geometry ``geom`` (4 tetrahedral,
    3 planar, 2 linear) given its known substituent positions, at ``length`` Å, by the
    construction of ChimeraX's ``bond_geom.bond_positions`` (our own code):

    * planar, one known: the first position at 120 degrees from the known bond, in the plane of
      the ``coplanar`` reference point (with two, the mean of the position toward the first and
      the one away from the second; with none, in an arbitrary but fixed frame), the second on
      the anti-bisector of the two; planar, two known: the anti-bisector;
    * tetrahedral, one known: the first at 109.5 degrees in a fixed frame (ChimeraX's
      ``z_align`` of the known bond: a lone pair has no other reference), then as for two known;
      two known: one raised 54.75 degrees from their plane on the anti-bisector, then as for
      three known; three known: the normal of the plane through the three unit-vector tips."""
    centre = np.asarray(centre, dtype=np.float64)
    units = []
    for p in known:
        v = np.asarray(p, dtype=np.float64) - centre
        norm = np.linalg.norm(v)
        if norm > 1e-6:
            units.append(v / norm)
    if not units or len(units) < len(known):
        return []
    if geom == LINEAR:
        return [centre - length * units[0]] if len(units) == 1 else []
    if geom == PLANAR:
        if len(units) > 2:
            return []
        out = []
        if len(units) == 1:
            first = _angle_position(units[0], 120.0, centre, coplanar)
            if first is None:
                return []
            units.append(first)
            out.append(centre + length * first)
        anti = -(units[0] + units[1])
        norm = np.linalg.norm(anti)
        return out + [centre + length * anti / norm] if norm > 1e-6 else []
    if geom != TETRAHEDRAL or len(units) > 3:
        return []
    out = []
    if len(units) == 1:
        first = _angle_position(units[0], 109.5, centre, None)
        units.append(first)
        out.append(centre + length * first)
    if len(units) == 2:
        v1, v2 = units
        anti = -(v1 + v2)
        cross = np.cross(v1, v2) if np.dot(v1, v1) > np.dot(v2, v2) else np.cross(v2, v1)
        if np.linalg.norm(anti) < 1e-6 or np.linalg.norm(cross) < 1e-6:
            return out
        anti, cross = anti / np.linalg.norm(anti), cross / np.linalg.norm(cross)
        third = _COS_5475 * anti + _SIN_5475 * cross
        units.append(third)
        out.append(centre + length * third)
    normal = np.cross(units[1] - units[0], units[2] - units[0])
    norm = np.linalg.norm(normal)
    if norm < 1e-9:
        return out
    normal = normal / norm
    if float(np.dot(normal, -units[0])) < 0.0:  # point away from the three known bonds
        normal = -normal
    return out + [centre + length * normal]


_COS_5475 = math.cos(math.radians(54.75))
_SIN_5475 = math.sin(math.radians(54.75))


def _z_align_axes(u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(y, z) axes of ChimeraX's ``z_align`` frame for the bond direction ``u`` (z along ``u``):
    the fixed frame a bond position is placed in when no reference point orients it."""
    a, b, c = (float(x) for x in u)
    lxz = math.sqrt(a * a + c * c)
    d = math.sqrt(lxz * lxz + b * b)
    if lxz < 1e-10:
        y = np.array([0.0, lxz / d, -b / d])
    else:
        y = np.array([-(a * b) / (lxz * d), lxz / d, -(b * c) / (lxz * d)])
    return y, np.array([a, b, c]) / d


def _angle_position(u: np.ndarray, degrees: float, centre, coplanar) -> np.ndarray | None:
    """Unit vector at ``degrees`` from the bond direction ``u``: toward the first ``coplanar``
    point (averaged with the direction away from a second one, as ChimeraX's ``angle_pos``),
    or in the ``z_align`` frame when there is no reference point."""
    rad = math.radians(degrees)
    if not coplanar:
        y, z = _z_align_axes(u)
        return math.sin(rad) * y + math.cos(rad) * z
    points = []
    for n, c in enumerate(list(coplanar)[:2]):
        up = np.asarray(c, dtype=np.float64) - centre
        if n:
            up = -up
        perp = up - np.dot(up, u) * u
        norm = np.linalg.norm(perp)
        if norm < 1e-9:
            return None
        points.append(math.sin(rad) * perp / norm + math.cos(rad) * u)
    mean = np.mean(points, axis=0)
    norm = np.linalg.norm(mean)
    return mean / norm if norm > 1e-9 else None
