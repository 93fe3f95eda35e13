"""The README is the front door and the pages under docs/ hold the rest: the README stays short,
names every command, links every page, and no link of the README or of a page points nowhere."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from misi_bench.builder.cli.main import build_parser
from misi_bench.eval_plugins.cli import EVAL_COMMANDS

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
MAX_README_LINES = 200
#: [text](target) with a relative target (no scheme), optionally with an #anchor.
LINK_RE = re.compile(r"\]\((?![a-z]+://)([^)#\s]*)(#[^)\s]*)?\)")


def _anchors(path: Path) -> set[str]:
    """GitHub's anchors of a markdown file's headings (lower case, punctuation dropped, spaces to -)."""
    out = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.match(r"#{1,6} (.+)", line)
        if m:
            text = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower())
            out.add("#" + text.replace(" ", "-"))
    return out


def _links(path: Path) -> list[tuple[str, str | None]]:
    return LINK_RE.findall(path.read_text(encoding="utf-8"))


def test_readme_is_short():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_README_LINES, (
        f"README.md has {len(lines)} lines; move a topic to docs/"
    )


def test_every_relative_link_resolves():
    broken = []
    for page in [README, *sorted(DOCS.glob("*.md"))]:
        for target, anchor in _links(page):
            dest = (page.parent / target).resolve() if target else page
            if not dest.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
                broken.append(f"{page.relative_to(ROOT)}: {target}{anchor} (no such heading)")
    assert not broken, broken


def test_every_docs_page_is_linked_from_the_readme():
    linked = {(ROOT / t).resolve() for t, _ in _links(README) if t}
    missing = [p.name for p in sorted(DOCS.glob("*.md")) if p.resolve() not in linked]
    assert not missing, f"docs pages the README does not link: {missing}"


def test_command_table_names_every_command():
    parser = build_parser(EVAL_COMMANDS)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    text = README.read_text(encoding="utf-8")
    table = text[text.index("## Commands") : text.index("## Quick start")]
    named = set()
    for span in re.findall(r"`misi-bench ([^`]+)`", table):
        named |= set(span.split()[0].split("\\|"))  # `misi-bench a\|b ...` names a and b
    missing = sorted(set(sub.choices) - named)
    assert not missing, f"commands missing from the README's command table: {missing}"


#: Files whose text may cite the specification: code, data and docs of the repository.
_CITING = ("*.py", "*.md", "*.yaml", "*.yml", "*.toml", "*.txt", "*.j2", "*.html", "*.js")
#: A citation of a specification kept outside the repository ("SPEC section 5", "SPEC §5",
#: "SPEC.md"): the rule must live in docs/spec.md instead.
OUTSIDE_SPEC_RE = re.compile(r"\bSPEC(?:\.md\b|\s+(?:section|§)|§)")
#: A citation of docs/spec.md with its section number.
SPEC_CITE_RE = re.compile(r"spec\.md(?:\]\(spec\.md\))?,? section (\d+)")


def _repo_texts():
    for pattern in _CITING:
        for path in sorted(ROOT.rglob(pattern)):
            rel = path.relative_to(ROOT)
            if rel.parts[0].startswith(".") or "__pycache__" in rel.parts or not path.is_file():
                continue
            if path == Path(__file__).resolve():  # the planted citations below
                continue
            yield rel, path.read_text(encoding="utf-8", errors="replace")


def outside_spec_citations(text: str) -> list[str]:
    return [m.group(0) for m in OUTSIDE_SPEC_RE.finditer(text)]


def test_no_file_cites_a_spec_outside_the_repository():
    found = [
        f"{rel}: {hit!r}" for rel, text in _repo_texts() for hit in outside_spec_citations(text)
    ]
    assert not found, "cite docs/spec.md (with its section) instead:\n" + "\n".join(found)


def test_spec_citations_name_existing_sections():
    sections = set(re.findall(r"^## (\d+)\. ", (DOCS / "spec.md").read_text(), flags=re.M))
    assert {"1", "3", "4", "5", "7", "8"} <= sections
    bad = [
        f"{rel}: section {n}"
        for rel, text in _repo_texts()
        for n in SPEC_CITE_RE.findall(text)
        if n not in sections
    ]
    assert not bad, bad


def test_the_spec_scan_sees_planted_citations():
    planted = "x  # SPEC section 5\n(SPEC §7) see SPEC.md; TASK_SPECS; docs/spec.md section 3"
    assert outside_spec_citations(planted) == ["SPEC section", "SPEC §", "SPEC.md"]
    assert SPEC_CITE_RE.findall(planted) == ["3"]


#: A task count spelled out in words or digits ("all nine", "7 tasks"): public names and help
#: texts say "every task" / "all tasks" instead, so that a tenth task leaves them true.
COUNT_RE = re.compile(
    r"\b(?:all (?:nine|seven)|(?:nine|seven|[79]) tasks|(?:nine|seven)-task)\b", re.IGNORECASE
)


def _help_texts(parser: argparse.ArgumentParser, prog: str = "misi-bench"):
    yield prog, parser.format_help()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _help_texts(sub, f"{prog} {name}")


def test_help_texts_spell_out_no_task_count():
    found = [
        f"{prog}: {m.group(0)!r}"
        for prog, text in _help_texts(build_parser(EVAL_COMMANDS))
        for m in COUNT_RE.finditer(" ".join(text.split()))
    ]
    assert not found, found
    assert COUNT_RE.search("task configs (default: all nine)")
    assert COUNT_RE.search("avg all (9 tasks)") and not COUNT_RE.search("default: every task")
