"""Checks on the atoms a structure file gives, before anything is left out: coordinates that are
numbers, and atom names repeated within one residue.

* A coordinate that is not a finite number (``nan``, ``inf``) refuses the file, naming the atom.
* A record that repeats an atom name (and alternate location) of its residue is a
  ``NameRepeat``. At the same place (within ``SAME_PLACE`` Å) it is a duplicated record and is
  dropped (counted). Elsewhere it is a second atom under one name: a hydrogen is renamed
  (``H'2``) and kept, since hydrogens are matched by position, not name; a heavy atom is dropped
  when its residue is not in the pocket and refuses the complex when it is (answers name atoms,
  so two atoms under one name would make them ambiguous); see ``structure._assemble``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..core.errors import InputError
from .files import normalise_element

#: Two records of one atom name closer than this (Å) are one atom written twice.
SAME_PLACE = 0.01


@dataclass(frozen=True)
class NameRepeat:
    """A heavy atom whose name its residue already has, at another place."""

    chain: str
    res_name: str
    number: int
    ins_code: str
    atom: str
    distance: float

    def describe(self) -> str:
        return (
            f"residue {self.res_name} {self.number}{self.ins_code} chain {self.chain} has two "
            f"atoms named {self.atom} {self.distance:.2f} Å apart"
        )


def check_finite(model, path, label) -> None:
    """Refuse a model with a coordinate that is not a finite number (naming the first such atom).
    ``label`` maps a gemmi chain name to the chain label shown."""
    for chain in model:
        for res in chain:
            for atom in res:
                pos = (atom.pos.x, atom.pos.y, atom.pos.z)
                if not all(math.isfinite(v) for v in pos):
                    raise InputError(
                        path,
                        f"atom {atom.name} of {res.name} {res.seqid.num}{res.seqid.icode.strip()} "
                        f"chain {label(chain.name)} has a coordinate that is not a number "
                        f"({', '.join(f'{v:g}' for v in pos)})",
                    )


def repeated_names(model, label) -> tuple[int, list[NameRepeat]]:
    """Handle atom names repeated within a residue (same alternate location): hydrogens at other
    places are renamed so they are kept. Returns (records gemmi will drop when it removes
    alternate conformations, the heavy atoms among them at another place)."""
    dropped, repeats = 0, []
    for chain in model:
        for res in chain:
            first: dict[tuple[str, str], tuple[float, float, float]] = {}
            renamed = 0
            for atom in res:
                key = (atom.name, atom.altloc)
                pos = (atom.pos.x, atom.pos.y, atom.pos.z)
                if key not in first:
                    first[key] = pos
                    continue
                distance = math.dist(pos, first[key])
                if distance > SAME_PLACE and normalise_element(atom.element.name) in ("H", "D"):
                    renamed += 1
                    atom.name = f"{atom.name}'{renamed + 1}"
                    first[(atom.name, atom.altloc)] = pos
                    continue
                dropped += 1
                if distance > SAME_PLACE:
                    repeats.append(
                        NameRepeat(
                            label(chain.name),
                            res.name.strip().upper(),
                            int(res.seqid.num),
                            res.seqid.icode.strip(),
                            atom.name,
                            round(distance, 2),
                        )
                    )
    return dropped, repeats


def count_atoms(model) -> int:
    return sum(len(res) for chain in model for res in chain)


@dataclass(frozen=True)
class Drops:
    """What :func:`drop_alternates` did: ``altloc`` atoms left out (alternate locations other
    than the first of an atom, alternate residues of microheterogeneity, and the repeated records
    :func:`repeated_names` counted) and ``notes`` on chains it split (``"A -> A2: 12 residues"``)."""

    altloc: int = 0
    notes: tuple[str, ...] = ()


def _free_name(base: str, taken: set[str]) -> str:
    n = 2
    while f"{base}{n}" in taken:
        n += 1
    return f"{base}{n}"


def _split_repeats(model, label) -> tuple[int, list[str]]:
    """Drop alternate residues (a later residue of a chain's residue id whose every record has an
    alternate-location letter: microheterogeneity, or a conformer listed apart); a later residue
    of that id that is not one starts a chain of its own (it and the rest of its chain), named
    after its chain's label (``A2``), so that no residue is lost. Returns (atoms dropped, notes)."""
    import gemmi  # noqa: PLC0415 (heavy import kept out of import time)

    dropped, notes = 0, []
    taken = {c.name for c in model} | {label(c.name) for c in model}
    base_of: dict[str, str] = {}  # a chain made here -> the label it was split from
    i = 0
    while i < len(model):
        chain = model[i]
        seen: set[tuple[int, str]] = set()
        k = 0
        while k < len(chain):
            res = chain[k]
            key = (res.seqid.num, res.seqid.icode)
            if key not in seen:
                seen.add(key)
                k += 1
            elif len(res) and all(a.has_altloc() for a in res):
                dropped += len(res)
                del chain[k]
            else:
                base = base_of.get(chain.name, label(chain.name))
                name = _free_name(base, taken)
                taken.add(name)
                base_of[name] = base
                rest = gemmi.Chain(name)
                for moved in chain[k:]:
                    rest.add_residue(moved)
                notes.append(f"{base} -> {name}: {len(rest)} residues")
                del chain[k:]
                model.add_chain(rest, pos=i + 1)
                break
        i += 1
    return dropped, notes


def drop_alternates(model, label) -> Drops:
    """Keep one conformer, in place: the first residue of each residue id (number, insertion
    code) of a chain, a later one that is not an alternate residue being moved to a chain of its
    own (:func:`_split_repeats`; the text-level segments of :mod:`.segments` do this before gemmi
    reads a PDB file, this catches what they cannot, e.g. mmCIF residues whose insertion codes
    were stripped), and within a residue the first atom of each name (a later one of that name is
    an alternate location, or a repeated record :func:`repeated_names` counted). Alternate-
    location letters are cleared. ``label`` maps a gemmi chain name to the label shown."""
    dropped, notes = _split_repeats(model, label)
    for chain in model:
        for res in chain:
            names: set[str] = set()
            j = 0
            while j < len(res):
                atom = res[j]
                if atom.name in names:
                    dropped += 1
                    del res[j]
                    continue
                names.add(atom.name)
                atom.altloc = "\0"
                j += 1
    return Drops(dropped, tuple(notes))
