"""Writing a result file whole or not at all, with one clear line when the disk is full.

Every file a command writes for the user or for a later run (``score --json-out`` and
``--per-item``, a build's unit files and status files) is written to a temporary name beside it
and renamed over it only once complete: a full disk, a quota or a read-only folder leaves the
previous file (or none) and no torn one, and the error names the file and what the system said
(:class:`WriteError`, a :class:`~.errors.MisiError`: the CLI prints it as one line).
Standard library only.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path

from .errors import MisiError


class WriteError(MisiError):
    """A file that could not be written (full disk, quota, read-only folder): names it."""


def os_reason(exc: OSError) -> str:
    """What the system said, in one short line (``No space left on device``)."""
    text = exc.strerror or (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return text[:200]


def write_error(path: Path, exc: OSError, hint: str = "") -> WriteError:
    """The one-line error for ``exc`` while writing ``path`` (``hint``: what to do, what is
    kept)."""
    tail = f"; {hint}" if hint else "; nothing was written there (free space and run it again)"
    return WriteError(f"{path}: cannot write ({os_reason(exc)}){tail}")


def write_atomic(path: str | Path, write: Callable[[Path], object], hint: str = "") -> None:
    """Call ``write(tmp)`` for a temporary file beside ``path``, then rename it to ``path``; on an
    ``OSError`` the temporary file is removed and :class:`WriteError` names ``path``."""
    path = Path(path)
    tmp = path.with_name(f"{path.name}.tmp{os.getpid()}")
    try:
        write(tmp)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise write_error(path, exc, hint) from None


def write_text_atomic(path: str | Path, text: str, hint: str = "") -> None:
    """:func:`write_atomic` of UTF-8 ``text``."""
    write_atomic(path, lambda tmp: tmp.write_text(text, encoding="utf-8"), hint)
