"""Publishing a merged build into its folder in one switch, never damaging the previous release.

The merge writes the new release (config folders, ``manifest.json``, card, ``baselines.json``,
``examples/``) into ``<out>/.publish/<config hash>/`` beside the old one; the build validates and
audits it there. Only then :func:`switch` moves it in: a journal (``<out>/.publish/switch.json``)
is written first, then every entry of the old release (``manifest.json`` first) is renamed into
``<out>/.publish/old/``, then every new entry is renamed into ``out`` (``manifest.json`` last),
then the journal and the old release are removed. Renames within one file system need no space,
so a full disk can only stop the merge, before the switch, and the previous release is left
exactly as it was. A process killed during the switch leaves the journal; the next writer of the
folder (:func:`recover`, under the folder lock) rolls the switch forward. Config folders of the
old release that the new one lacks (a rebuild with fewer ``--configs``) go with the old release.

A journal is read back only after :func:`journal_problem` finds it names nothing but plain
release entries (config folders and :data:`RELEASE_FILES`) and a staged folder that is a plain
name inside ``.publish/``, with no symbolic link on the way: a crafted journal cannot make a
writer of the folder delete or move anything outside it.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
from pathlib import Path

from ..checks.blind import BASELINES_FILE
from ..core.errors import MisiError
from ..scoring.question_baselines import FILE as QUESTION_BASELINES
from ..tasks import TASKS

log = logging.getLogger(__name__)

PUBLISH_DIR = ".publish"
JOURNAL = "switch.json"
#: Top-level files and folders of a release besides its config folders.
RELEASE_FILES = ("manifest.json", "README.md", BASELINES_FILE, QUESTION_BASELINES, "examples")


def staging_dir(out: Path, config_hash: str) -> Path:
    """An empty folder beside ``out``'s release for a new release of ``config_hash``."""
    path = Path(out) / PUBLISH_DIR / config_hash
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def discard(path: Path) -> None:
    """Remove a staged release (after a failed merge: frees its space)."""
    shutil.rmtree(path, ignore_errors=True)


def release_entries(folder: Path) -> list[str]:
    """Top-level names of the release in ``folder``: config folders and release files."""
    folder = Path(folder)
    names = [t for t in TASKS if (folder / t).is_dir()]
    names += [n for n in RELEASE_FILES if (folder / n).exists()]
    return names


def _ordered(names: list[str]) -> list[str]:
    """``manifest.json`` first (readers see no release rather than a mixed one)."""
    return sorted(names, key=lambda n: (n != "manifest.json", n))


def switch(out: Path, staged: Path) -> None:
    """Replace the release of ``out`` by the complete, checked release in ``staged``."""
    out, staged = Path(out), Path(staged)
    new = sorted(p.name for p in staged.iterdir())
    old = set(release_entries(out)) | {n for n in new if (out / n).exists()}
    journal = {"staged": staged.name, "old": _ordered(sorted(old)), "new": _ordered(new)}
    path = out / PUBLISH_DIR / JOURNAL
    shutil.rmtree(path.parent / "old", ignore_errors=True)  # a cleanup a kill interrupted
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(journal, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    _apply(out, journal)


#: A staged release's folder name (a config hash, or the name a test gives it): one plain name.
_STAGED_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")


def journal_problem(out: Path, journal: object) -> str | None:
    """Why ``journal`` is not one :func:`switch` writes for ``out`` (None when it is): fields of
    the wrong type, a staged name that is not a plain folder name inside ``.publish/`` (``..``,
    a path, ``old``, a symbolic link), or an entry that is not a release entry."""
    if not isinstance(journal, dict) or set(journal) != {"staged", "old", "new"}:
        return "not an object with exactly the fields staged, old and new"
    staged = journal["staged"]
    if not isinstance(staged, str) or not _STAGED_NAME.fullmatch(staged) or staged == "old":
        return f"staged is {str(staged)[:80]!r}, not a plain folder name inside {PUBLISH_DIR}/"
    allowed = set(TASKS) | set(RELEASE_FILES)
    for field in ("old", "new"):
        names = journal[field]
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            return f"{field} is not a list of names"
        bad = [n for n in names if n not in allowed]
        if bad:
            return f"{field} names {bad[0][:80]!r}, not a release entry (config folder or release file)"
    publish = Path(out) / PUBLISH_DIR
    for path in (publish, publish / staged, publish / "old"):
        if path.is_symlink():
            return f"{path} is a symbolic link"
    return None


def _apply(out: Path, journal: dict) -> None:
    publish = out / PUBLISH_DIR
    staged, old = publish / journal["staged"], publish / "old"
    old.mkdir(exist_ok=True)
    for name in journal["old"]:
        if (out / name).exists() and not (old / name).exists():
            os.replace(out / name, old / name)
    for name in reversed(journal["new"]):  # manifest.json last
        if (staged / name).exists():
            os.replace(staged / name, out / name)
    (publish / JOURNAL).unlink()
    shutil.rmtree(old, ignore_errors=True)
    shutil.rmtree(staged, ignore_errors=True)


def recover(out: Path) -> bool:
    """Finish a switch that a killed process left half done (True if there was one). Call it
    holding the folder lock."""
    path = Path(out) / PUBLISH_DIR / JOURNAL
    if not path.exists():
        return False
    try:
        journal = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise MisiError(
            f"{path}: the journal of an interrupted publish is unreadable ({exc}); the folder "
            "holds a half-switched release: restore it from a copy, or rebuild it"
        ) from None
    problem = journal_problem(Path(out), journal)
    if problem is not None:
        raise MisiError(
            f"{path}: not a publish journal this tool wrote ({problem}); nothing was moved or "
            "deleted: check the folder, restore its release from a copy or rebuild it, then "
            "remove the journal"
        )
    staged = journal["staged"]
    log.warning("%s: finishing an interrupted publish of %s", out, staged)
    try:
        _apply(Path(out), journal)
    except OSError as exc:
        raise MisiError(
            f"{out}: cannot finish the interrupted publish of {staged} (journal {path}): the "
            f"folder cannot be written ({exc.strerror or type(exc).__name__}); make it writable "
            "and run the command again: it finishes the switch"
        ) from None
    return True
