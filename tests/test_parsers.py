"""Every argument parser of the project takes no abbreviated option (issue 39: ``--api-key
sk-...`` was read as ``--api-key-env``): ``misi-bench``'s parsers are ``builder/cli/parser.Parser``
(subcommand parsers included, checked on the real parser), and every other
``argparse.ArgumentParser(...)`` call in the repository passes ``allow_abbrev=False`` (checked
on the source, so a new script cannot forget it)."""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

from misi_bench.builder.cli.parser import Parser

import misi_bench

ROOT = Path(misi_bench.__file__).resolve().parent
FOLDERS = ("builder", "eval_plugins", "scripts")


def _parsers(parser: argparse.ArgumentParser):
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _parsers(sub)


def test_every_misi_bench_parser_refuses_abbreviations():
    from misi_bench.builder.cli.main import build_parser
    from misi_bench.eval_plugins.cli import EVAL_COMMANDS

    parsers = list(_parsers(build_parser(EVAL_COMMANDS)))
    assert len(parsers) > 15  # the top parser and every command
    for parser in parsers:
        assert isinstance(parser, Parser) and parser.allow_abbrev is False, parser.prog


def test_every_other_argument_parser_passes_allow_abbrev_false():
    missing, seen = [], 0
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if not isinstance(node, ast.Call):
                    continue
                name = getattr(node.func, "attr", getattr(node.func, "id", ""))
                if name != "ArgumentParser":
                    continue
                seen += 1
                flags = {k.arg: k.value for k in node.keywords}
                value = flags.get("allow_abbrev")
                if not (isinstance(value, ast.Constant) and value.value is False):
                    missing.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert seen >= 15  # the scripts and tools were scanned
    assert not missing, f"argparse.ArgumentParser without allow_abbrev=False: {missing}"
