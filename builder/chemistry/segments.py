"""Chain segments of a PDB file: runs of records that repeat the residues of an earlier run with
the same chain id, kept apart instead of merged.

A pocket whose second chain carries the same chain id as the first (or where both are blank, as
in older PDBbind files) repeats residue numbers: gemmi appends the second copy's atoms to the
first copy's residues, and dropping alternate conformations then drops them by name (or drops a
whole residue of another name at the same number as microheterogeneity). So before gemmi reads
the text, the records are grouped into residue runs (consecutive records of one chain id, number,
insertion code and name) and each run is given to a segment. A run whose residue number and
insertion code (whatever its name) its chain's current segment already holds starts a new
segment, unless it is an alternate location of the residue held there (:func:`is_alternate`:
records with an alternate-location letter, an atom named like one of the held residue under
another letter within :data:`ALTLOC_REACH` Å of it, or more atoms of a conformer the held
residue has): a conformer listed apart, or microheterogeneity. So a second chain under a
repeated or blank id, residues whose insertion codes were stripped (Kabat 30, 30A, 30B all
written 30) and chains that carry an altloc letter each are all kept. After a chain break
(``TER`` or another chain id) a run goes back to the first segment of its chain where it fits.
A later segment is written with a chain character the file does not use, and
:func:`split_segments` says which label each such character stands for: the chain id followed
by the segment number (``A2``; ``_2`` for a blank chain id). A well-formed file (no residue
repeated within a chain) comes back unchanged. Only the first model is looked at (later models
are not read).
"""

from __future__ import annotations

import math
import string
from dataclasses import dataclass, field

#: Characters a later segment may be written with (those the file does not use already).
_FREE_CHARS = string.ascii_uppercase + string.ascii_lowercase + string.digits
#: Two records of one atom name under different alternate-location letters are two places of one
#: atom when this close (Å). Atoms of two chains are never this close (a heavy-atom contact is
#: >= 2.5 Å); alternates of one atom are (a residue's alternates share at least one such atom).
ALTLOC_REACH = 2.0
_RECORDS = ("ATOM  ", "HETATM")


@dataclass(frozen=True)
class Segments:
    """A PDB text with later segments moved to chain characters of their own.

    ``labels``: written chain character -> chain label (``A2``); ``notes``: one line per later
    segment (``"A -> A2: 44 residues"``); ``unsplit``: repeated residues left merged because the
    file uses every free chain character (the reader then counts what it cannot keep)."""

    text: str
    labels: dict[str, str]
    notes: tuple[str, ...] = ()
    unsplit: int = 0
    #: written chain character of a later segment -> the chain id the file gave it
    origin: dict[str, str] = field(default_factory=dict)


@dataclass
class _Run:
    """Consecutive records of one residue: line indices, chain character, residue id (number and
    insertion code, columns 23-27), name, and its atoms as (name, altloc, xyz or None)."""

    chain: str
    resid: str
    name: str
    lines: list[int] = field(default_factory=list)
    atoms: list[tuple[str, str, tuple | None]] = field(default_factory=list)


def _chain_label(chain: str) -> str:
    return chain.strip() or "_"


def _xyz(line: str) -> tuple | None:
    try:
        return (float(line[30:38]), float(line[38:46]), float(line[46:54]))
    except ValueError:
        return None


def _runs(lines: list[str]) -> list[_Run | None]:
    """The residue runs of the first model in order; ``None`` marks a chain break (``TER``)."""
    out: list[_Run | None] = []
    run = None
    for k, ln in enumerate(lines):
        if ln.startswith("ENDMDL"):
            break
        if ln.startswith("TER"):
            out.append(None)
            run = None
            continue
        if not ln.startswith(_RECORDS) or len(ln) < 27:
            continue
        chain, resid, name = ln[21], ln[22:27], ln[17:20]
        if run is None or (run.chain, run.resid, run.name) != (chain, resid, name):
            run = _Run(chain, resid, name)
            out.append(run)
        run.lines.append(k)
        run.atoms.append((ln[12:16].strip(), ln[16], _xyz(ln)))
    return out


def is_alternate(held: list[tuple[str, str, tuple | None]], run: _Run) -> bool:
    """Whether ``run`` is an alternate location of the residue whose atoms are ``held``: its
    records carry alternate-location letters, none repeats an atom of ``held`` under the same
    letter, and one of them either lies within :data:`ALTLOC_REACH` Å of the atom of its name
    under another letter, or continues a conformer ``held`` has (a letter it uses, for an atom
    name that conformer lacks: records of two conformers written in turn)."""
    places: dict[str, list[tuple[str, tuple]]] = {}
    pairs = {(name, alt) for name, alt, _ in held}
    letters = {alt for _, alt, _ in held if alt != " "}
    for name, alt, xyz in held:
        if xyz is not None:
            places.setdefault(name, []).append((alt, xyz))
    evidence = False
    for name, alt, xyz in run.atoms:
        if alt == " ":
            continue
        if (name, alt) in pairs:
            return False  # a second copy of an atom under the same letter: another residue
        if alt in letters:
            evidence = True
        elif xyz is not None and any(
            other_alt != alt and math.dist(xyz, other) <= ALTLOC_REACH
            for other_alt, other in places.get(name, ())
        ):
            evidence = True
    return evidence


def split_segments(text: str) -> Segments:
    """``text`` with every later segment of a chain id written with a chain character of its own."""
    lines = text.splitlines(keepends=True)
    used = {ln[21] for ln in lines if ln.startswith(_RECORDS) and len(ln) > 21}
    free = [c for c in _FREE_CHARS if c not in used]
    order: dict[str, list[str]] = {}  # chain id -> written characters of its segments, in order
    held: dict[str, dict[str, list]] = {}  # written character -> residue id -> its atoms
    sizes: dict[str, int] = {}
    labels: dict[str, str] = {}
    origin: dict[str, str] = {}
    written_of: dict[int, str] = {}  # line index -> written chain character
    current = None
    prev_chain = None
    unsplit = 0

    def fits(seg: str, run: _Run) -> bool:
        atoms = held[seg].get(run.resid)
        return atoms is None or is_alternate(atoms, run)

    for run in _runs(lines):
        if run is None:
            prev_chain = None
            continue
        segs = order.setdefault(run.chain, [run.chain])
        held.setdefault(run.chain, {})
        if run.chain != prev_chain:  # a run starts: the first segment where this residue fits
            current = next((c for c in segs if fits(c, run)), segs[-1])
        if not fits(current, run):
            if free:
                current = free.pop(0)
                segs.append(current)
                held[current] = {}
                labels[current] = f"{_chain_label(run.chain)}{len(segs)}"
                origin[current] = run.chain
            else:
                unsplit += 1
        if run.resid not in held[current]:
            sizes[current] = sizes.get(current, 0) + 1
        held[current].setdefault(run.resid, []).extend(run.atoms)
        for k in run.lines:
            written_of[k] = current
        prev_chain = run.chain
    return _rewrite(text, lines, written_of, order, (labels, origin), sizes, unsplit)


def _rewrite(text, lines, written_of, order, names, sizes, unsplit) -> Segments:
    """The :class:`Segments` of :func:`split_segments`: records (and the ``ANISOU`` lines that
    follow them) written with their segment's chain character."""
    labels, origin = names
    out = list(lines)
    changed = False
    written = None
    for k, ln in enumerate(lines):
        if k in written_of:
            written = written_of[k]
        elif not ln.startswith(("ANISOU", "SIGUIJ", "SIGATM")):
            written = None  # only the lines that belong to the record above follow it
            continue
        if written is not None and len(ln) > 21 and ln[21] != written:
            out[k] = ln[:21] + written + ln[22:]
            changed = True
    notes = tuple(
        f"{_chain_label(chain)} -> {labels[c]}: {sizes.get(c, 0)} residues"
        for chain, segs in order.items()
        for c in segs[1:]
    )
    return Segments("".join(out) if changed else text, labels, notes, unsplit, origin)


def split_cif_segments(block) -> tuple[str, ...]:
    """The mmCIF counterpart of :func:`split_segments`, done in place on a gemmi ``cif.Block``:
    the unit is a subchain (``label_asym_id``); a subchain that repeats a residue (author number,
    insertion code, name) already held under its author chain id (``auth_asym_id``) gets the
    next free label of that chain (``A2``, ``A3``: mmCIF chain ids may be longer than one
    character). Only the first model is looked at. Returns the notes (``"A -> A2: 107 residues"``)."""
    table = block.find(
        "_atom_site.",
        [
            "auth_asym_id",
            "label_asym_id",
            "auth_seq_id",
            "?pdbx_PDB_ins_code",
            "label_comp_id",
            "?pdbx_PDB_model_num",
        ],
    )
    if not len(table):
        return ()
    first_model = None
    parts: dict[tuple[str, str], list] = {}  # (auth, label_asym) -> rows, in order of appearance
    for row in table:
        model = row[5] if row.has(5) else "1"
        first_model = model if first_model is None else first_model
        if model != first_model:
            continue
        parts.setdefault((row[0], row[1]), []).append(row)
    taken = {auth for auth, _ in parts}
    held: dict[str, set] = {}
    labels_of: dict[str, list[str]] = {}
    notes = []
    for (auth, _), rows in parts.items():
        keys = {(r[2], r[3] if r.has(3) else "?", r[4]) for r in rows}
        labels = labels_of.setdefault(auth, [auth])
        label = next((c for c in labels if not keys & held.setdefault(c, set())), None)
        if label is None:
            n = len(labels) + 1
            while f"{auth}{n}" in taken:
                n += 1
            label = f"{auth}{n}"
            labels.append(label)
            taken.add(label)
            held[label] = set()
            notes.append(f"{_chain_label(auth)} -> {label}")
        if label != auth:
            for r in rows:
                r[0] = label
        held[label] |= keys
    counts = {}
    for label, keys in held.items():
        counts[label] = len({k for k in keys if k[2] not in ("HOH", "WAT", "DOD")})
    return tuple(f"{n}: {counts[n.split(' -> ')[1]]} residues" for n in notes)
