"""The molecular graph the ``chimerax`` H-bond tests read (``mills_dean``): heavy atoms with
IDATM-style types, hydrogen counts, explicit hydrogens and the positions ChimeraX's ``hydpos``
would infer (RBVI/ChimeraX ``src/bundles/hbonds/src/hydpos.py`` and ``bond_geom``; our own code).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .idatm import LINEAR, PLANAR, TETRAHEDRAL, geometry, substituents

#: Covalent X-H lengths (Å) for inferred hydrogens.
XH_LENGTH = {"N": 1.01, "O": 0.96, "S": 1.34, "C": 1.09}


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
        coplanar = None
        if geom == PLANAR and len(known) == 1:
            coplanar = (
                [self.coords[k] for k in self.nbrs[known[0]] if k != i]
                if self.geom(known[0]) == PLANAR
                else []
            )
        length = XH_LENGTH.get(self.elements[i], 1.0)
        return bond_positions(
            self.coords[i], geom, length, [self.coords[k] for k in known], coplanar
        )[:wanted]

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
            coplanar = (
                [self.coords[k] for k in self.nbrs[self.nbrs[i][0]] if k != i]
                if self.nbrs[i]
                else []
            )
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


def bond_positions(
    centre, geom: int, length: float, known: list, coplanar: list | None = None
) -> list[np.ndarray]:
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
        return [
            centre + length * (math.cos(half) * bis + s * math.sin(half) * perp)
            for s in (1.0, -1.0)
        ]
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
