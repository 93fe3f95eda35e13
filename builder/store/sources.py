"""Which complexes a build reads, and which split each belongs to."""

from __future__ import annotations

import difflib
import hashlib
import logging
import os
from pathlib import Path

from ..chemistry.samples import sample_refs
from ..core.errors import InputError
from ..core.records import ComplexRef
from .id_list import id_list_refs, is_id_source
from .split_files import EXCLUDED, read_split

log = logging.getLogger(__name__)

SPLITS = ("train", "test")
__all__ = ["EXCLUDED", "SPLITS", "assign_splits", "discover", "file_checksums", "read_split_file"]
#: Share of complexes put in the test split when no split file is given (paper: 490 of 3,993).
DEFAULT_TEST_FRACTION = 0.123


def discover(source: str | Path, structures: str | Path | None = None) -> list[ComplexRef]:
    """Complex references of a build source: ``"samples"`` (the embedded set), ``"ids:LIST.csv"``
    (PDB ids and ligand codes; entries in the ``structures`` folder, see :mod:`.id_list`) or a
    PDBbind-style root folder holding ``<pdbid>/`` complex folders. Sorted by PDB id. A folder
    whose name is not UTF-8, or that differs from another only by case, gets a ``problem``: the
    build records it as a skipped complex with that reason."""
    if is_id_source(source):
        return id_list_refs(str(source), structures)
    if str(source) == "samples":
        return sorted(sample_refs(), key=lambda r: r.pdb_id)
    root = Path(source)
    if not root.is_dir():
        close = difflib.get_close_matches(str(source).lower(), ["samples"], n=1, cutoff=0.6)
        hint = "; did you mean samples?" if close else ""
        raise InputError(
            root,
            f"build source is not a folder (expected a PDBbind-style root, 'samples' or "
            f"'ids:LIST.csv'){hint}",
        )
    groups: dict[str, list[Path]] = {}
    for sub in sorted(root.iterdir()):
        if _is_complex_folder(sub):
            groups.setdefault(folder_id(sub.name), []).append(sub)
    if not groups:
        raise InputError(root, "no complex folders (<pdbid>/<pdbid>_ligand.sdf or .mol2) found")
    refs = [
        ComplexRef(pdb_id=pdb_id, path=subs[0], kind="pdbbind", problem=_folder_problem(subs))
        for pdb_id, subs in sorted(groups.items())
    ]
    for ref in refs:
        if ref.problem:
            log.warning("skipping %s", ref.problem)
    return refs


def _is_complex_folder(sub: Path) -> bool:
    """A folder holding a ``*_ligand.sdf`` or ``*_ligand.mol2`` (an unreadable one counts, so
    that its build unit records why it is skipped)."""
    try:
        return sub.is_dir() and any(
            p.name.lower().endswith(("_ligand.sdf", "_ligand.mol2")) for p in sub.iterdir()
        )
    except OSError:
        return sub.is_dir()


def shown_name(name: str) -> str:
    """A folder name as text that can be written anywhere: bytes that are not UTF-8 (which
    Python keeps as surrogates) become ``\\xNN`` escapes."""
    return os.fsencode(name).decode("utf-8", "backslashreplace")


def folder_id(name: str) -> str:
    """The complex id of a folder name: lower case (``4CUP`` and ``4cup`` are one complex), bytes
    that are not UTF-8 escaped (:func:`shown_name`)."""
    return shown_name(name).lower()


def _folder_problem(subs: list[Path]) -> str:
    """Why the folders ``subs`` (one complex id) cannot be built, or ``""``: a name that is not
    UTF-8, or several folders whose names differ only by case (which one is meant cannot be
    told, so none is used)."""
    names = [shown_name(p.name) for p in subs]
    where = shown_name(str(subs[0].parent))
    if len(subs) > 1:
        return (
            f"{where}: folders {', '.join(names)} differ only by case and name one complex: "
            "none is used (rename or remove all but one)"
        )
    if names[0] != subs[0].name:
        return f"{where}/{names[0]}: folder name is not UTF-8 text: not used (rename it)"
    return ""


def read_split_file(path: str | Path) -> dict[str, str]:
    """The assignment of a split file: a ``pdb_id,split`` CSV (header optional; splits train or
    test) or the per-split id lists of ATOM3D's form (a folder holding ``train.txt``,
    ``test.txt`` and optionally ``val.txt``, or those files joined by commas; ``val`` ids map to
    ``excluded``). See :mod:`.split_files`; errors name the file and the line."""
    return read_split(path)[0]


def _unit_hash(seed: int, pdb_id: str) -> float:
    digest = hashlib.sha256(f"misi-split:{seed}:{pdb_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def assign_splits(
    pdb_ids: list[str],
    seed: int,
    split_file: str | Path | None = None,
    test_fraction: float = DEFAULT_TEST_FRACTION,
    skipped: frozenset[str] = frozenset(),
) -> dict[str, str]:
    """Split by complex. With a split file its assignment wins (complexes a CSV does not list go
    to train; with ATOM3D-style lists, val complexes and those no list names are ``excluded``,
    which the build leaves out). Otherwise a complex is in test when a hash of (seed, pdb id) falls below
    ``test_fraction`` (stable when complexes are added); if that leaves fewer than two test
    complexes (T5 pairs complexes within a split), the lowest-hash ones are moved to test.
    ``skipped``: complexes the build could not read; they take no test slot of that minimum
    (the build draws again once it knows them, so that they cannot empty the test split)."""
    if split_file is not None:
        fixed, default = read_split(split_file)
        return {p: fixed.get(p, default) for p in pdb_ids}
    drawn = [p for p in pdb_ids if p not in skipped]
    ranked = sorted(drawn, key=lambda p: (_unit_hash(seed, p), p))
    test = {p for p in pdb_ids if _unit_hash(seed, p) < test_fraction}
    minimum = 2 if len(drawn) >= 4 else 0
    for p in ranked:
        if len(test.intersection(drawn)) >= minimum:
            break
        test.add(p)
    return {p: ("test" if p in test else "train") for p in pdb_ids}


def file_checksums(ref: ComplexRef) -> dict[str, str]:
    """sha256 of every input file of a complex (for the manifest)."""
    paths = sorted(ref.path.iterdir()) if ref.path.is_dir() else [ref.path]
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in paths if p.is_file()}
