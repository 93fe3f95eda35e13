"""Split files (``--split-file``): which complexes a build puts in train and test.

Two forms (docs/inputs.md, docs/fidelity.md "The split"):

* a CSV of ``pdb_id,split`` rows (header optional, ``#`` comments), split ``train`` or ``test``;
  complexes it does not list go to train;
* the published form of a split such as ATOM3D's LBA 30%-sequence-identity split of PDBbind: one
  text file per split (``train.txt``, ``val.txt``, ``test.txt``) with one PDB id per line, given
  as the folder that holds them or as the files joined by commas
  (``--split-file a/train.txt,a/val.txt,a/test.txt``). Train and test are required; ``val`` and
  every complex no file lists are left out of the build (:data:`EXCLUDED`): the paper's 3,503 +
  490 complexes are ATOM3D's train (3,507, less 4 it could not draw) and test (490), without its
  466 validation complexes.

Reading is bounded (:data:`MAX_SPLIT_BYTES` per file, :data:`MAX_LINE_CHARS` per line) and every
bad line is an :class:`~..core.errors.InputError` naming the file, the line and the reason.
"""

from __future__ import annotations

import csv
import hashlib
import re
from pathlib import Path

from ..core.errors import InputError

__all__ = [
    "EXCLUDED",
    "LIST_SPLITS",
    "MAX_LINE_CHARS",
    "MAX_SPLIT_BYTES",
    "SPLITS",
    "read_split",
    "split_file_digest",
    "split_file_paths",
]

SPLITS = ("train", "test")
#: The split of a complex a list-form split file leaves out of the build (its val, the unlisted).
EXCLUDED = "excluded"
#: The files of the list form, by split name (``val`` complexes are left out).
LIST_SPLITS = ("train", "val", "test")
MAX_SPLIT_BYTES = 16 * 1024 * 1024
MAX_LINE_CHARS = 200
_PDB_ID_RE = re.compile(r"^[0-9][A-Za-z0-9]{3}$")


def _read_bytes(path: Path) -> bytes:
    try:
        size = path.stat().st_size
        if size > MAX_SPLIT_BYTES:
            raise InputError(
                path, f"split file is {size} bytes, over the {MAX_SPLIT_BYTES}-byte limit"
            )
        with path.open("rb") as handle:
            return handle.read(MAX_SPLIT_BYTES + 1)[: MAX_SPLIT_BYTES + 1]
    except OSError as exc:
        raise InputError(path, f"cannot read split file ({exc.strerror or exc})") from None


def _read_text(path: Path) -> str:
    raw = _read_bytes(path)
    if len(raw) > MAX_SPLIT_BYTES:
        raise InputError(path, f"split file is over the {MAX_SPLIT_BYTES}-byte limit")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(path, "split file is not UTF-8 text") from None


def _lines(path: Path, text: str):
    for number, line in enumerate(text.splitlines(), 1):
        if len(line) > MAX_LINE_CHARS:
            raise InputError(path, f"line {number} is over {MAX_LINE_CHARS} characters")
        yield number, line


def _pdb_id(path: Path, number: int, text: str) -> str:
    pdb_id = text.strip()
    if not _PDB_ID_RE.match(pdb_id):
        raise InputError(path, f"line {number}: {pdb_id!r} is not a 4-character PDB id")
    return pdb_id.lower()


def split_file_paths(path: str | Path) -> tuple[str, dict[str, Path]]:
    """The form of ``path`` and its files: ``("csv", {"csv": file})`` or ``("lists", {split:
    file})`` for a folder holding ``train.txt``/``test.txt`` (and optionally ``val.txt``) or
    such files joined by commas. Raises InputError when the files are missing or misnamed."""
    text = str(path)
    p = Path(text)
    if p.is_dir():
        found = {s: p / f"{s}.txt" for s in LIST_SPLITS if (p / f"{s}.txt").is_file()}
        missing = [f"{s}.txt" for s in SPLITS if s not in found]
        if missing:
            raise InputError(
                p,
                f"split folder lacks {', '.join(missing)} (expected train.txt and test.txt, "
                "optionally val.txt, one PDB id per line)",
            )
        return "lists", found
    if "," in text and not p.exists():
        files: dict[str, Path] = {}
        for part in (x.strip() for x in text.split(",") if x.strip()):
            name = Path(part).stem.lower()
            if name not in LIST_SPLITS or Path(part).suffix.lower() != ".txt":
                raise InputError(
                    part, "split list files must be named train.txt, val.txt or test.txt"
                )
            if name in files:
                raise InputError(part, f"a second {name}.txt in --split-file")
            files[name] = Path(part)
        missing = [f"{s}.txt" for s in SPLITS if s not in files]
        if missing:
            raise InputError(text, f"split file list lacks {', '.join(missing)}")
        return "lists", files
    if Path(text).stem.lower() in LIST_SPLITS and Path(text).suffix.lower() == ".txt":
        raise InputError(
            p,
            "one split list alone does not say where the other complexes go: pass the folder "
            "holding train.txt and test.txt, or the files joined by commas",
        )
    return "csv", {"csv": p}


def _read_csv(path: Path) -> dict[str, str]:
    """{pdb id: split} of a CSV split file; an id named on two rows is refused (naming both
    lines), whether or not the rows agree: which one was meant cannot be told."""
    out: dict[str, str] = {}
    line_of: dict[str, int] = {}
    for number, line in _lines(path, _read_text(path)):
        row = next(csv.reader([line]), [])
        if not row or row[0].strip().lower() in ("pdb_id", "pdbid", "") or row[0].startswith("#"):
            continue
        if len(row) < 2 or row[1].strip() not in SPLITS:
            raise InputError(
                path, f"line {number}: bad row {','.join(row)!r}: expected 'pdb_id,train|test'"
            )
        pdb_id = row[0].strip()
        if any(ch.isspace() for ch in pdb_id):
            raise InputError(path, f"line {number}: {pdb_id!r} is not one PDB id")
        key = pdb_id.lower()
        if key in line_of:
            raise InputError(
                path,
                f"line {number}: {key} is also on line {line_of[key]} (one row per complex; "
                f"here {row[1].strip()}, there {out[key]})",
            )
        line_of[key] = number
        out[key] = row[1].strip()
    return out


def _read_lists(files: dict[str, Path]) -> dict[str, str]:
    out: dict[str, str] = {}
    where: dict[str, str] = {}
    for split in LIST_SPLITS:
        path = files.get(split)
        if path is None:
            continue
        for number, line in _lines(path, _read_text(path)):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            pdb_id = _pdb_id(path, number, line)
            if pdb_id in where and where[pdb_id] != split:
                raise InputError(
                    path, f"line {number}: {pdb_id} is also in {where[pdb_id]}.txt (one split each)"
                )
            where[pdb_id] = split
            out[pdb_id] = split if split in SPLITS else EXCLUDED
    return out


def read_split(path: str | Path) -> tuple[dict[str, str], str]:
    """``({pdb_id: train|test|excluded}, default)``: the split file's assignment and the split
    of a complex it does not list (``train`` for the CSV form, :data:`EXCLUDED` for the lists)."""
    form, files = split_file_paths(path)
    if form == "csv":
        return _read_csv(files["csv"]), "train"
    return _read_lists(files), EXCLUDED


def split_file_digest(path: str | Path) -> str:
    """sha256 identifying a split file's content (for the build's config hash): of the file for
    the CSV form (as before list files existed), of ``split:sha256`` lines for the lists."""
    form, files = split_file_paths(path)
    if form == "csv":  # the file's bytes: the same hash as before list files existed
        return hashlib.sha256(_read_bytes(files["csv"])).hexdigest()
    lines = "".join(
        f"{s}:{hashlib.sha256(_read_bytes(files[s])).hexdigest()}\n"
        for s in LIST_SPLITS
        if s in files
    )
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()
