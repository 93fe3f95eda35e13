"""What the shared tests expect of a task, derived from its registry entry
(``builder/core/registry.py``) or read from its data file's ``expect`` section
(``builder/tasks/<name>.yaml``), never from its name: a new task is covered by adding its entry
and data file (issue 34)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hypothesis import strategies as st
from misi_bench.builder.core.registry import (
    LETTER,
    OPERATION_PAIR,
    POCKET_BONDS,
    RESIDUE_BONDS,
    SINGLE_OPERATION,
    TASK_BY_NAME,
    TaskSpec,
)
from misi_bench.builder.operations.language import Move, Roll, format_operations
from misi_bench.builder.tasks.data import task_data

COMMAND_KINDS = (SINGLE_OPERATION, OPERATION_PAIR)
BOND_KINDS = (RESIDUE_BONDS, POCKET_BONDS)
#: The empty answer and the prefix of a non-empty one, per bond answer kind.
BOND_FORMS = {RESIDUE_BONDS: ("No", "Yes: "), POCKET_BONDS: ("None", "")}


def spec(task: str) -> TaskSpec:
    return TASK_BY_NAME[task]


def expect(task: str) -> Mapping:
    """The ``expect`` section of the task's data file."""
    return task_data(task).expect


def command_problems(task: str, ops: Sequence) -> list[str]:
    """Why ``ops`` (parsed commands) is not an answer of ``task``'s registry ``commands``: the
    number of commands, each command's verb, axis and value (empty when it is one)."""
    commands = spec(task).commands
    if len(ops) != len(commands):
        return [f"{len(ops)} commands, expected {len(commands)}"]
    return [
        f"{op} is not {cr.verb} {'|'.join(cr.axes)} in {min(cr.values)}..{max(cr.values)}"
        for op, cr in zip(ops, commands)
        if op.verb != cr.verb or op.axis not in cr.axes or op.magnitude not in cr.values
    ]


def _command(cr) -> st.SearchStrategy:
    kind = Move if cr.verb == "move" else Roll
    return st.builds(kind, st.sampled_from(cr.axes), st.sampled_from(cr.values))


T4_RESIDUES = ["ALA", "ARG", "ASN", "ASP", "CYS", "GLN", "GLU", "GLY", "HIS", "LYS", "MET"]
T4_RESIDUES += ["SER", "THR", "TRP", "TYR"]
PROT_ATOMS = st.from_regex(r"[CNOS][A-Z]{0,2}[0-9]?", fullmatch=True)
LIG_ATOMS = st.from_regex(r"[A-Z]{1,2}[0-9]{0,2}[A-Z]?['*]{0,2}(:[0-9])?", fullmatch=True)
RESNUMS = st.from_regex(r"-?[1-9][0-9]{0,3}[A-Z]?", fullmatch=True)
CHAINS = st.from_regex(r"[A-Z0-9_]", fullmatch=True)
#: One bond as each bond answer kind writes it (T4: residue name and atom; T9: with number and
#: chain).
BOND_ITEMS = {
    RESIDUE_BONDS: st.tuples(st.sampled_from(T4_RESIDUES), PROT_ATOMS, LIG_ATOMS).map(
        lambda t: f"{t[0]} {t[1]}, {t[2]}"
    ),
    POCKET_BONDS: st.tuples(
        st.sampled_from(T4_RESIDUES), RESNUMS, PROT_ATOMS, CHAINS, LIG_ATOMS
    ).map(lambda t: f"{t[0]} {t[1]} {t[2]} {t[3]}, {t[4]}"),
}


def gold_answers(task: str) -> st.SearchStrategy:
    """Gold answers of ``task``, drawn from its registry entry: its commands' ranges, a letter,
    or a bond list in its answer kind's form."""
    kind = spec(task).answer_kind
    if kind in COMMAND_KINDS:
        return st.tuples(*map(_command, spec(task).commands)).map(format_operations)
    if kind == LETTER:
        return st.sampled_from("ABCD")
    empty, prefix = BOND_FORMS[kind]
    items = st.lists(BOND_ITEMS[kind], min_size=1, max_size=8, unique_by=str.upper)
    return st.one_of(st.just(empty), items.map(lambda b: prefix + "; ".join(sorted(b))))


def bond_items(task: str, gold: str) -> list[str] | None:
    """The bonds of a bond-list gold answer (None for other answer kinds or the empty answer)."""
    kind = spec(task).answer_kind
    if kind not in BOND_KINDS:
        return None
    empty, prefix = BOND_FORMS[kind]
    return None if gold == empty else gold[len(prefix) :].split("; ")


def canonical_text(task: str, gold: str) -> str:
    """The gold answer with its bonds in ``format_parsed``'s sorted order."""
    items = bond_items(task, gold)
    return (
        gold if items is None else BOND_FORMS[spec(task).answer_kind][1] + "; ".join(sorted(items))
    )
