"""Reading input files: size and gzip checks, element symbols, MOL2 records, distance bonds.

Shared by the protein and ligand readers and by the sample builder (``scripts.make_samples``),
so every reader applies the same limits, the same element spelling and the same covalent radii.
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

import numpy as np

from ..core.errors import InputError, InputTooLarge

#: Refuse structure files above this size (bytes), and gzip files that unpack to more: the
#: largest PDB entries are ~0.3 GB of mmCIF, a PDBbind pocket ~0.1 MB; a 5.8 MB gzip "pocket"
#: that unpacks to 6 GB is refused after reading this much, never held whole.
MAX_FILE_BYTES = 512 * 1024 * 1024
#: Bytes decompressed per read of a gzip stream (the memory a bomb costs before it is refused).
_CHUNK = 1 << 20

#: Covalent radii (Å) for distance-based bond perception (Cordero et al. 2008, rounded).
COVALENT_RADII = {
    "H": 0.31,
    "C": 0.76,
    "N": 0.71,
    "O": 0.66,
    "F": 0.57,
    "P": 1.07,
    "S": 1.05,
    "Cl": 1.02,
    "Br": 1.20,
    "I": 1.39,
    "B": 0.84,
    "Se": 1.20,
    "Si": 1.11,
}
#: Radius used for an element missing from ``COVALENT_RADII`` (Å).
DEFAULT_COVALENT_RADIUS = 0.77
#: Slack added to the sum of covalent radii when perceiving bonds from distances (Å).
BOND_SLACK = 0.45


def normalise_element(symbol: str) -> str:
    """'CL' -> 'Cl', ' c' -> 'C'; unknown or empty -> 'X'."""
    symbol = symbol.strip()
    if not symbol or not symbol.isalpha():
        return "X"
    return symbol[0].upper() + symbol[1:].lower()


def open_text(path: Path) -> str:
    """Text of ``path`` (gzip allowed), refusing empty and oversized files with an
    ``InputError`` (``InputTooLarge`` when the file, or what a gzip file unpacks to, is over
    :data:`MAX_FILE_BYTES`: a recorded skip of that complex, the build goes on)."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size == 0:
            raise InputError(path, "file is empty")
        if size > MAX_FILE_BYTES:
            raise InputTooLarge(
                path, f"file is {size:,} bytes, above the {MAX_FILE_BYTES:,}-byte limit"
            )
        with path.open("rb") as fh:
            gzipped = fh.read(2) == b"\x1f\x8b"
            fh.seek(0)
            raw = read_gunzipped(path, fh) if gzipped else fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise InputError(path, f"cannot read file ({exc.strerror or exc})") from None
    text = raw.decode("utf-8", errors="replace")
    if not text.strip():
        raise InputError(path, "file is empty")
    return text


def read_gunzipped(path: Path, fh) -> bytearray:
    """The unpacked bytes of the gzip file open as ``fh``, read in chunks and refused
    (``InputTooLarge``) as soon as they pass :data:`MAX_FILE_BYTES`."""
    out = bytearray()
    try:
        with gzip.GzipFile(fileobj=fh, mode="rb") as stream:
            while chunk := stream.read(_CHUNK):
                if len(out) + len(chunk) > MAX_FILE_BYTES:
                    raise InputTooLarge(
                        path,
                        f"gzip file of {path.stat().st_size:,} bytes unpacks to over "
                        f"{MAX_FILE_BYTES:,} bytes, the limit (a decompression bomb?)",
                    )
                out += chunk
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise InputError(path, f"broken gzip file ({exc})") from None
    return out


def distance_bonds(
    coords: np.ndarray, elements: list[str], slack: float = BOND_SLACK
) -> list[tuple[int, int]]:
    """Atom pairs (i < j, sorted) closer than the sum of their covalent radii + ``slack`` Å
    (and farther than 0.4 Å)."""
    coords = np.asarray(coords, dtype=np.float64).reshape(-1, 3)
    radius = np.array(
        [COVALENT_RADII.get(normalise_element(e), DEFAULT_COVALENT_RADIUS) for e in elements]
    )
    dist = np.linalg.norm(coords[:, None] - coords[None], axis=2)
    limit = radius[:, None] + radius[None, :] + slack
    i, j = np.nonzero(np.triu((dist <= limit) & (dist > 0.4), k=1))
    return [(int(a), int(b)) for a, b in zip(i, j)]


def parse_mol2(path: Path) -> tuple[list[dict], list[tuple[int, int, str]]]:
    """Atoms and bonds of the first molecule of a MOL2 file.

    Atoms: dicts with ``name``, ``xyz`` (Å), ``type`` (SYBYL), ``element``, ``subst_id``,
    ``subst_name`` and ``sub_type`` (the residue type the SUBSTRUCTURE record of its substructure
    gives, "" without one). Bonds: ``(i, j, type)`` with 0-based atom indices and the SYBYL bond
    type.
    """
    text = open_text(path)
    atoms: list[dict] = []
    bonds: list[tuple[int, int, str]] = []
    sub_types: dict[str, str] = {}
    section = None
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("@<TRIPOS>"):
            name = s[9:].strip().upper()
            if name == "MOLECULE" and atoms:
                break
            section = name
            continue
        if not s or s.startswith("#"):
            continue
        parts = s.split()
        if section == "ATOM":
            if len(parts) < 6:
                raise InputError(path, f"malformed MOL2 atom line: {s[:80]!r}")
            try:
                xyz = (float(parts[2]), float(parts[3]), float(parts[4]))
            except ValueError:
                raise InputError(path, f"malformed MOL2 coordinates: {s[:80]!r}") from None
            atoms.append(
                {
                    "name": parts[1],
                    "xyz": xyz,
                    "type": parts[5],
                    "element": normalise_element(parts[5].split(".")[0]),
                    "subst_id": parts[6] if len(parts) > 6 else "1",
                    "subst_name": parts[7] if len(parts) > 7 else "",
                }
            )
        elif section == "BOND":
            try:
                bonds.append((int(parts[1]) - 1, int(parts[2]) - 1, parts[3]))
            except (ValueError, IndexError):
                raise InputError(path, f"malformed MOL2 bond line: {s[:80]!r}") from None
        elif section == "SUBSTRUCTURE" and len(parts) > 6:
            # subst_id subst_name root_atom subst_type dict_type chain sub_type ...
            sub_types[parts[0]] = parts[6]
    if not atoms:
        raise InputError(path, "no @<TRIPOS>ATOM records")
    for atom in atoms:
        atom["sub_type"] = sub_types.get(atom["subst_id"], "")
    return atoms, bonds
