"""What docs/releasing.md forbids publishing, said before a push: the embedded sample set (a
smoke-test build) and a test split of fewer than :data:`MIN_RELEASE_TEST_COMPLEXES`
complexes. A dry run prints them as warnings; a tagged push refuses them unless asked twice
(``--allow-small``): a tag is never moved."""

from __future__ import annotations

from pathlib import Path

from ..core.errors import MisiError
from .card_text import SMALL_TEST_QUESTIONS

#: A release with fewer test complexes than this is warned about: T9 asks one question per
#: complex, so below it T9 has fewer test questions than the card's small-build caveat
#: (``card_text.SMALL_TEST_QUESTIONS``, a 95% interval wider than about ±10 points).
MIN_RELEASE_TEST_COMPLEXES = SMALL_TEST_QUESTIONS


def release_warnings(manifest: dict, tag: str | None) -> list[str]:
    """What a maintainer should know before publishing ``manifest``'s build: that it is the
    embedded sample set, or that it has fewer than :data:`MIN_RELEASE_TEST_COMPLEXES` test
    complexes (said louder for a tagged release)."""
    notes = []
    source = str(manifest.get("source") or manifest.get("config", {}).get("source", ""))
    what = f"release {tag}" if tag else "this push"
    counts = manifest.get("complexes") or {}
    n_test = int(counts.get("test", 0))
    if source == "samples":
        notes.append(
            f"{what} is the embedded sample set ({int(counts.get('train', 0)) + n_test} complexes), "
            "a smoke-test build, not the benchmark: build from PDBbind or an id list first "
            "(docs/releasing.md)"
        )
    if n_test < MIN_RELEASE_TEST_COMPLEXES:
        notes.append(
            f"{what} has {n_test} test complexes (fewer than {MIN_RELEASE_TEST_COMPLEXES}: T9 "
            f"then has fewer than {SMALL_TEST_QUESTIONS} test questions, a 95% interval wider "
            "than about ±10 points)"
        )
    return notes


def refuse_small(folder: Path, tag: str, notes: list[str]) -> None:
    """One line for a tagged push of what docs/releasing.md forbids publishing (``notes``:
    :func:`release_warnings`, each starting ``release <tag>``)."""
    if notes:
        why = "; and it ".join(n.split(" ", 2)[2] for n in notes)
        raise MisiError(
            f"{folder}: refusing to push release {tag}: it {why}. docs/releasing.md forbids "
            "publishing such a version and a tag is never moved; pass --allow-small to push "
            "it anyway"
        )
