"""Protein sequences of a complex (for the sequence-identity split) and the pairwise identity of
two sequences by a global alignment (the split's independent check).

Where a complex's sequences come from, first that exists: the protein file's SEQRES (its polymer
entities' full sequences; an mmCIF entry's ``entity_poly``), else the protein file's residues
(chain by chain, in file order), else the pocket file's residues (a PDBbind folder without a
protein file, such as the embedded samples: fragments of the chains, reported as ``pocket``).
One-letter codes; a residue that is not a tabulated amino acid is ``X``; chains shorter than
:data:`MIN_CHAIN` residues (peptides, tags) are left out unless nothing else is there; identical
chains are kept once.

Identity (:func:`pair_identity`): the global alignment of two sequences with BLOSUM62 and affine
gaps (open -10, extend -1, end gaps free), the number of aligned positions holding the same amino
acid divided by the length of the shorter sequence. A fraction in [0, 1].
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import InputError
from ..core.records import ComplexRef
from .protein import read_structure

log = logging.getLogger(__name__)

#: Chains with fewer amino acids than this are left out when longer ones exist.
MIN_CHAIN = 10
#: Gap penalties of :func:`pair_identity` (open, extend), in BLOSUM62 units.
GAP_PENALTY = (-10, -1)


@dataclass(frozen=True)
class ComplexSequences:
    """The protein chain sequences of one complex. ``origin``: ``seqres``, ``residues``,
    ``pocket`` or ``""`` (none readable; ``problem`` says why)."""

    pdb_id: str
    chains: tuple[str, ...]
    origin: str
    problem: str = ""


def _protein_files(ref: ComplexRef) -> tuple[Path | None, Path | None]:
    """(protein file, pocket file) of a complex; a raw entry's file is its protein file."""
    if ref.kind == "raw":
        return ref.path, None
    files = {p.name.lower(): p for p in ref.path.iterdir() if p.is_file()}

    def find(suffix: str) -> Path | None:
        return files.get(f"{ref.pdb_id}_{suffix}") or next(
            (p for name, p in sorted(files.items()) if name.endswith(f"_{suffix}")), None
        )

    return find("protein.pdb"), find("pocket.pdb")


def _one_letter(names: list[str]) -> str:
    import gemmi  # noqa: PLC0415 (heavy import kept out of import time)

    out = []
    for name in names:
        info = gemmi.find_tabulated_residue(name)
        out.append(info.one_letter_code.upper() if info and info.one_letter_code != " " else "X")
    return "".join(out)


def _is_amino_acid(name: str) -> bool:
    import gemmi  # noqa: PLC0415

    info = gemmi.find_tabulated_residue(name)
    return bool(info and info.is_amino_acid())


def _seqres(st) -> list[str]:
    """Full sequences of the structure's peptide entities (SEQRES / entity_poly)."""
    import gemmi  # noqa: PLC0415

    st.setup_entities()
    return [
        _one_letter(list(e.full_sequence))
        for e in st.entities
        if e.entity_type == gemmi.EntityType.Polymer
        and e.polymer_type in (gemmi.PolymerType.PeptideL, gemmi.PolymerType.PeptideD)
        and e.full_sequence
    ]


def _residues(st) -> list[str]:
    """The amino acids of each chain of the first model, in file order."""
    return [_one_letter([r.name for r in chain if _is_amino_acid(r.name)]) for chain in st[0]]


def _kept(chains: list[str]) -> tuple[str, ...]:
    """Non-empty chains, the short ones only when nothing longer exists, each once (sorted)."""
    chains = [c for c in chains if c]
    long = [c for c in chains if len(c) >= MIN_CHAIN]
    return tuple(sorted(set(long or chains)))


def read_sequences(ref: ComplexRef) -> ComplexSequences:
    """The chain sequences of ``ref`` (module docstring). Never raises for unreadable input: the
    result has no chains and a ``problem`` naming the file."""
    try:
        protein, pocket = _protein_files(ref)
        for path, origin in ((protein, "protein"), (pocket, "pocket")):
            if path is None or not path.exists():
                continue
            st = read_structure(path)
            if origin == "protein":
                chains = _kept(_seqres(st))
                if chains:
                    return ComplexSequences(ref.pdb_id, chains, "seqres")
                origin = "residues"
            chains = _kept(_residues(st))
            if chains:
                return ComplexSequences(ref.pdb_id, chains, origin)
        why = "no protein or pocket file with amino acids"
    except (InputError, OSError) as exc:
        why = str(exc)
    return ComplexSequences(ref.pdb_id, (), "", f"{ref.describe()}: {why}")


def pair_identity(a: str, b: str) -> float:
    """Identity of sequences ``a`` and ``b`` (module docstring): identical aligned positions of
    their optimal global alignment (BLOSUM62, gaps :data:`GAP_PENALTY`, free end gaps) over the
    length of the shorter one; an unknown residue (``X``, or a letter BLOSUM62 does not tabulate)
    is never identical. 0 when either is empty.

    The alignment is parasail's semi-global one (``sg``: end gaps free) with statistics, striped
    SIMD, 8-bit lanes widened on saturation: the same alignment as a plain dynamic programme
    (biotite's ``align_optimal`` gives the same identities within one position on the test
    sequences) at about 1/25 of its cost (docs/measurements.md), so that every test-train pair of
    a paper-size build can be aligned."""
    if not a or not b:
        return 0.0
    import parasail  # noqa: PLC0415

    # X in ``b`` becomes ``*``: BLOSUM62 scores both as unknown, and they never compare equal
    first = "".join(c if c in _TABULATED else "X" for c in a)
    second = "".join(c if c in _TABULATED else "*" for c in b)
    open_, extend = (-g for g in GAP_PENALTY)
    result = parasail.sg_stats_striped_16(first, second, open_, extend, parasail.blosum62)
    if result.saturated:  # a score past 16 bits (chains of thousands of residues): 32-bit lanes
        result = parasail.sg_stats_striped_32(first, second, open_, extend, parasail.blosum62)
    return result.matches / min(len(a), len(b))


#: The amino-acid letters BLOSUM62 tabulates (others, ``X`` included, are unknown residues).
_TABULATED = frozenset("ARNDCQEGHILKMFPSTWYV")
