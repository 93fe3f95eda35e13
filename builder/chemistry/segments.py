"""Chain segments of a PDB file: runs of records that repeat the residues of an earlier run with
the same chain id, kept apart instead of merged.

A homodimer pocket whose second chain carries the same chain id as the first (or where both are
blank, as in older PDBbind files) repeats every residue id: gemmi appends the second copy's atoms
to the first copy's residues, and dropping alternate conformations then drops them by name. So
before gemmi reads the text, each ATOM/HETATM record is given to a segment: a residue
(chain id, number, insertion code, name) that its chain's current segment already holds starts a
new segment; after a chain break (``TER`` or another chain id) a run goes back to the first
segment of its chain that lacks its first residue. A repeated residue whose record carries an
alternate-location letter is an alternate conformer listed apart, not a new segment. A later
segment is written with a chain character the file does not use, and :func:`split_segments`
says which label each such character stands for: the chain id followed by the segment number (``A2``; ``_2`` for a blank
chain id). A well-formed file (no residue repeated within a chain) comes back unchanged.
Only the first model is looked at (later models are not read).
"""

from __future__ import annotations

import string
from dataclasses import dataclass

#: Characters a later segment may be written with (those the file does not use already).
_FREE_CHARS = string.ascii_uppercase + string.ascii_lowercase + string.digits


@dataclass(frozen=True)
class Segments:
    """A PDB text with later segments moved to chain characters of their own.

    ``labels``: written chain character -> chain label (``A2``); ``notes``: one line per later
    segment (``"A -> A2: 44 residues"``); ``unsplit``: repeated residues left merged because the
    file uses every free chain character (the reader then refuses or counts them)."""

    text: str
    labels: dict[str, str]
    notes: tuple[str, ...] = ()
    unsplit: int = 0


def _chain_label(chain: str) -> str:
    return chain.strip() or "_"


def split_segments(text: str) -> Segments:
    """``text`` with every later segment of a chain id written with a chain character of its own."""
    lines = text.splitlines(keepends=True)
    records = ("ATOM  ", "HETATM")
    used = {ln[21] for ln in lines if ln.startswith(records) and len(ln) > 21}
    free = [c for c in _FREE_CHARS if c not in used]
    order: dict[str, list[str]] = {}  # chain id -> written characters of its segments, in order
    held: dict[str, set] = {}  # written character -> residue ids it holds
    sizes: dict[str, int] = {}
    labels: dict[str, str] = {}
    current: dict[str, str] = {}
    prev_chain = prev_key = None
    written = None
    unsplit = 0
    out = list(lines)
    changed = False
    for k, ln in enumerate(lines):
        if ln.startswith("ENDMDL"):
            break
        if ln.startswith("TER"):
            prev_chain = prev_key = None
            continue
        if ln.startswith("ANISOU") and written is not None and len(ln) > 21:
            if written != ln[21] and ln[21] == prev_chain:
                out[k] = ln[:21] + written + ln[22:]
            continue
        if not ln.startswith(records) or len(ln) < 27:
            continue
        chain, key = ln[21], (ln[22:27], ln[17:20])
        if (chain, key) != (prev_chain, prev_key):
            segs = order.setdefault(chain, [chain])
            held.setdefault(chain, set())
            if chain != prev_chain:  # a run starts: the first segment that lacks this residue
                current[chain] = next((c for c in segs if key not in held[c]), segs[-1])
            if key in held[current[chain]] and ln[16] != " ":
                pass  # an alternate location listed apart from its residue: not a new segment
            elif key in held[current[chain]]:
                if free:
                    new = free.pop(0)
                    segs.append(new)
                    held[new] = set()
                    labels[new] = f"{_chain_label(chain)}{len(segs)}"
                    current[chain] = new
                else:
                    unsplit += 1
            held[current[chain]].add(key)
            sizes[current[chain]] = sizes.get(current[chain], 0) + 1
            prev_chain, prev_key = chain, key
        written = current[chain]
        if written != chain:
            out[k] = ln[:21] + written + ln[22:]
            changed = True
    notes = tuple(
        f"{_chain_label(chain)} -> {labels[c]}: {sizes.get(c, 0)} residues"
        for chain, segs in order.items()
        for c in segs[1:]
    )
    return Segments("".join(out) if changed else text, labels, notes, unsplit)


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
