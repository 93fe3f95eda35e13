"""The task registry: the one definition of the nine tasks (SPEC section 5).

Everything that needs the task list reads it here: names and order (T1..T9), answer format
(fill-in or multiple choice), membership of the headline averages, and the alias table of the
paper's names. Pure data plus :func:`canonical_task`; imports only the standard library.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

FILL_IN = "fill_in"
MULTIPLE_CHOICE = "multiple_choice"


@dataclass(frozen=True)
class TaskSpec:
    """One task: config ``name``, its paper number ``number`` (1..9), ``answer_format``,
    ``kind`` (``operation``, ``bonds`` or ``choice``) and ``in_headline`` (counted in the
    paper's headline average; T5 and T6 are left out because every model scores at chance)."""

    name: str
    number: int
    answer_format: str
    kind: str
    in_headline: bool = True

    @property
    def is_choice(self) -> bool:
        return self.answer_format == MULTIPLE_CHOICE


TASK_SPECS: tuple[TaskSpec, ...] = (
    TaskSpec("translation", 1, FILL_IN, "operation"),
    TaskSpec("rotation", 2, FILL_IN, "operation"),
    TaskSpec("zooming", 3, FILL_IN, "operation"),
    TaskSpec("residue_ligand", 4, FILL_IN, "bonds"),
    TaskSpec("translation_rotation", 5, MULTIPLE_CHOICE, "choice", in_headline=False),
    TaskSpec("rotation_rotation", 6, MULTIPLE_CHOICE, "choice", in_headline=False),
    TaskSpec("docking", 7, FILL_IN, "operation"),
    TaskSpec("interaction_location", 8, MULTIPLE_CHOICE, "choice"),
    TaskSpec("pocket_ligand", 9, FILL_IN, "bonds"),
)
TASK_BY_NAME: dict[str, TaskSpec] = {spec.name: spec for spec in TASK_SPECS}

#: The nine task configs in the paper's order (T1..T9).
TASK_NAMES: tuple[str, ...] = tuple(spec.name for spec in TASK_SPECS)
#: Left out of the headline average (the paper's convention: every model scores at chance).
HEADLINE_EXCLUDED: tuple[str, ...] = tuple(spec.name for spec in TASK_SPECS if not spec.in_headline)

CHOICE_TASKS = frozenset(spec.name for spec in TASK_SPECS if spec.kind == "choice")
OPERATION_TASKS = frozenset(spec.name for spec in TASK_SPECS if spec.kind == "operation")
BOND_TASKS = frozenset(spec.name for spec in TASK_SPECS if spec.kind == "bonds")


def answer_format(task: str) -> str:
    """``fill_in`` or ``multiple_choice`` for a task config name."""
    return TASK_BY_NAME[task].answer_format


# Alias table: the paper's names, short names and T-numbers. Keys are normalised with
# _alias_key (lower case, spaces and hyphens as underscores).
TASK_ALIASES: dict[str, str] = {
    **{name: name for name in TASK_NAMES},
    **{f"t{i + 1}": name for i, name in enumerate(TASK_NAMES)},
    "trans": "translation",
    "translate": "translation",
    "move": "translation",
    "rot": "rotation",
    "roll": "rotation",
    "zoom": "zooming",
    "zoom_in": "zooming",
    "scale": "zooming",
    "scaling": "zooming",
    "residue_ligand_interaction": "residue_ligand",
    "residue_ligand_hbond": "residue_ligand",
    "res_lig": "residue_ligand",
    "translation_and_rotation": "translation_rotation",
    "trans_rot": "translation_rotation",
    "rotation_and_rotation": "rotation_rotation",
    "rot_rot": "rotation_rotation",
    "double_rotation": "rotation_rotation",
    "ligand_docking": "docking",
    "dock": "docking",
    "interaction_localization": "interaction_location",
    "interaction_localisation": "interaction_location",
    "interaction_locating": "interaction_location",
    "hbond_location": "interaction_location",
    "pocket_ligand_interaction": "pocket_ligand",
    "pocket_ligand_hbond": "pocket_ligand",
    "pocket_lig": "pocket_ligand",
}

_ALIAS_PREFIXES = ("misi_bench_", "misibench_", "misi_")


def _alias_key(name: str) -> str:
    return re.sub(r"[\s\-/]+", "_", name.strip().lower())


def canonical_task(name: str) -> str:
    """The config name (one of :data:`TASK_NAMES`) of a task name or alias.

    Accepts the config names, the paper's names ("Pocket-Ligand Interaction", "scale"),
    ``T1``..``T9`` and a ``misi_bench_`` prefix. Raises ``ValueError`` for anything else.
    """
    if not isinstance(name, str):
        raise ValueError(f"task name must be a string, got {name!r}")  # noqa: TRY004 (one error type for callers)
    key = _alias_key(name)
    if key in TASK_ALIASES:
        return TASK_ALIASES[key]
    for prefix in _ALIAS_PREFIXES:
        if key.startswith(prefix) and key[len(prefix):] in TASK_ALIASES:
            return TASK_ALIASES[key[len(prefix):]]
    raise ValueError(f"unknown MiSI-Bench task {name!r}; expected one of {', '.join(TASK_NAMES)}")


