"""The card's section on the build's checks: per config, each check's status.

One line per config, the checks in ``builder.checks.declared.CHECKS`` order, each
``<check>: ran``, ``failed``, ``not applicable (why)`` or ``not run (why)``: the manifest's
``checks`` block, as the build's summary prints it. The merge writes the card before the checks
run; :func:`update_card_checks` puts each step's statuses in as the build goes.
"""

from __future__ import annotations

from pathlib import Path

from ..checks.declared import status_lines

#: The heading of the section (``dataset_card/template.md``).
HEADING = "### Checks of this build\n\n"


def checks_text(manifest: dict) -> str:
    """The section's text for ``manifest``'s ``checks`` block (what it says before any)."""
    checks = manifest.get("checks")
    if not checks:
        return "No check has been recorded for this build."
    intro = (
        "What each check of `misi-bench validate` and `misi-bench audit` (docs/audit.md) did "
        "for each config of this build: ran, failed, not applicable (why) or not run (why). "
        "A check that did not run is not counted as passed.\n\n"
    )
    return intro + "\n".join(f"- {line}" for line in status_lines(checks, quote="`"))


def update_card_checks(out: Path, manifest: dict) -> None:
    """Put ``manifest``'s check statuses into the card of ``out`` (its section, whatever it said
    before); a folder without a card, or a card without the section, is left as it is."""
    card = Path(out) / "README.md"
    if not card.exists():
        return
    text = card.read_text(encoding="utf-8")
    start = text.find(HEADING)
    if start < 0:
        return
    body = start + len(HEADING)
    end = text.find("\n#", body)
    end = len(text) if end < 0 else end
    new = text[:body] + checks_text(manifest) + "\n" + text[end:]
    if new != text:
        card.write_text(new, encoding="utf-8")
