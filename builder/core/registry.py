"""The task registry: the one definition of the nine tasks (docs/spec.md section 5).

Everything that needs the task list reads it here: names and order (T1..T9), answer kind (the
one field that says what an answer is: it selects the scorer's parser, metric and chance
baseline, and the answer format and the human app's answer form follow from it), membership of
the headline averages, report labels, the human app's answer hint and the alias table of the
paper's names. Shared code dispatches on these fields, never on a task's
name. Pure data plus :func:`canonical_task`; imports only the standard library. A task's
generator, prompt, audit replay and validator check live in its own module ``builder/tasks/<name>.py``
(see ``docs/extending.md``).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

#: The ``answer_format`` column: ``multiple_choice`` exactly when the task's answer kind carries
#: options (``AnswerKind.answer_format``), ``fill_in`` otherwise.
FILL_IN = "fill_in"
MULTIPLE_CHOICE = "multiple_choice"

# Answer kinds: each selects the scorer's parser, gold reader, metric and chance baseline.
#: One ``move``/``roll`` command (T1-T3); weighted by ``score_radius`` (exact only when None).
SINGLE_OPERATION = "single_operation"
#: A ``roll, move x`` pair (T7): half rotation part (``score_radius`` degrees), half move part.
OPERATION_PAIR = "operation_pair"
#: One option letter (T5, T6, T8).
LETTER = "letter"
#: ``No`` or ``Yes: RES ATOM, LIG_ATOM; ...`` (T4): bonds of one named residue.
RESIDUE_BONDS = "residue_bonds"
#: ``None`` or ``RES NUMBER ATOM CHAIN, LIG_ATOM; ...`` (T9): every bond of the pocket.
POCKET_BONDS = "pocket_bonds"

# Human-app answer forms: a text box with the task's ``form_hint`` under it, or option buttons
# (``AnswerKind.form``: option buttons exactly when the kind carries options).
TEXT_FORM = "text"
CHOICE_FORM = "choice"


@dataclass(frozen=True)
class CommandRange:
    """One command of a task's answer: ``verb`` along or about one of ``axes``, magnitude one of
    ``values`` (the range the random baseline draws from). The random baseline draws the axis
    (when there are several) and then the value, or the value first when ``magnitude_first``
    (the order fixes the random stream, and so the card's chance figures)."""

    verb: str
    axes: tuple[str, ...]
    values: tuple[int, ...]
    magnitude_first: bool = False


def _nonzero(lo: int, hi: int, step: int = 1) -> tuple[int, ...]:
    return tuple(v for v in range(lo, hi + 1, step) if v != 0)


@dataclass(frozen=True)
class TaskSpec:
    """One task and everything shared code needs to know about it, as data.

    ``name`` (config name), ``number`` (paper number 1..9), ``answer_kind`` (the module of
    ``builder/scoring/kinds/`` that says what an answer is: parser, metric and chance baseline,
    and from whether it carries options the answer format and the human app's form; the one
    field that says what an answer is), ``in_headline`` (counted in the paper's headline
    average; False unless set, so a new task joins the headline only when asked; T5 and T6 are
    left out because every model scores at chance), ``score_radius`` (the weighted-score
    radius: Å or degrees, the ``explicit`` headline's normaliser; ``paper`` rows count steps of ``commands[0]``
    instead; None scores exact answers only), ``commands`` (the commands of a command answer,
    in order, with their ranges: what the random baseline draws and the pixel solver reads),
    ``constant_answer`` (the constant baseline's answer), ``halves`` (a 0/1 metric that splits
    the paper's column in two: T4's positive and negative questions), ``label`` and
    ``short_label`` (report titles), ``form_hint`` (the human app's hint under a text answer: what
    form an answer takes, never a unit or range, which only some profiles' prompts state),
    ``aliases`` (other names a user may type; the paper's names among them), ``readings`` (other
    readings of a rule the paper leaves open, shown beside the main metric: (``""`` for the task
    or ``"positive"`` for its positive half, the other reading's metric, the main metric)),
    ``underdetermined_in`` (profiles whose prompt does not fix the answer from the pictures, a
    card limitation) and ``decoy_leak_in`` (profiles whose ``--decoys paper`` options let the
    options alone point at the answer, a card limitation). The generator,
    prompt, audit replay and validator check of a task live in ``builder/tasks/<name>.py``."""

    name: str
    number: int
    answer_kind: str
    label: str
    short_label: str
    in_headline: bool = False
    score_radius: float | None = None
    commands: tuple[CommandRange, ...] = ()
    constant_answer: str = ""
    halves: str | None = None
    form_hint: str = ""
    aliases: tuple[str, ...] = ()
    readings: tuple[tuple[str, str, str], ...] = ()
    underdetermined_in: tuple[str, ...] = ()
    decoy_leak_in: tuple[str, ...] = ()

    @property
    def config(self) -> str:
        """The harness task name (``misi_<name>``)."""
        return f"misi_{self.name}"

    def half_names(self) -> tuple[str, str]:
        """Report subset names of the two halves (``<name>_positive``, ``<name>_negative``)."""
        return (f"{self.name}_positive", f"{self.name}_negative")


_ANGLES = _nonzero(-90, 90, 15)

TASK_SPECS: tuple[TaskSpec, ...] = (
    TaskSpec(
        "translation",
        1,
        SINGLE_OPERATION,
        "translation",
        "translation",
        in_headline=True,
        score_radius=8.0,
        commands=(CommandRange("move", ("x", "y"), _nonzero(-4, 4), magnitude_first=True),),
        form_hint="one command: move x D or move y D (e.g. move x -3)",
        aliases=("trans", "translate", "move"),
        readings=(("", "score_steps", "score"), ("", "score_radius", "score")),
    ),
    TaskSpec(
        "rotation",
        2,
        SINGLE_OPERATION,
        "rotation",
        "rotation",
        in_headline=True,
        score_radius=180.0,
        commands=(CommandRange("roll", ("x", "y", "z"), _ANGLES),),
        form_hint="one command: roll x A, roll y A or roll z A (e.g. roll z 45)",
        aliases=("rot", "roll"),
        readings=(("", "score_steps", "score"), ("", "score_radius", "score")),
    ),
    TaskSpec(
        "zooming",
        3,
        SINGLE_OPERATION,
        "zooming",
        "zooming",
        in_headline=True,
        commands=(CommandRange("move", ("z",), tuple(range(40, 61))),),
        form_hint="one command: move z D (e.g. move z 50)",
        aliases=("zoom", "zoom_in", "scale", "scaling"),
        underdetermined_in=("paper",),
    ),
    TaskSpec(
        "residue_ligand",
        4,
        RESIDUE_BONDS,
        "residue-ligand",
        "res.-lig.",
        in_headline=True,
        constant_answer="No",
        halves="polarity",
        form_hint="No, or Yes: RESIDUE ATOM, LIGAND_ATOM with bonds separated by ; (e.g. Yes: ASN OD1, O1B)",
        aliases=("residue_ligand_interaction", "residue_ligand_hbond", "res_lig"),
        readings=(("positive", "score_precision", "score"), ("positive", "score_f1", "score")),
    ),
    TaskSpec(
        "translation_rotation",
        5,
        LETTER,
        "transl.+rot.",
        "transl.+rot.",
        in_headline=False,
        constant_answer="A",
        aliases=("translation_and_rotation", "trans_rot"),
    ),
    TaskSpec(
        "rotation_rotation",
        6,
        LETTER,
        "rot.+rot.",
        "rot.+rot.",
        in_headline=False,
        constant_answer="A",
        aliases=("rotation_and_rotation", "rot_rot", "double_rotation"),
    ),
    TaskSpec(
        "docking",
        7,
        OPERATION_PAIR,
        "docking",
        "docking",
        in_headline=True,
        score_radius=180.0,
        commands=(
            CommandRange("roll", ("x", "y", "z"), _ANGLES),
            CommandRange("move", ("x",), _nonzero(-30, 30)),
        ),
        form_hint="two commands, the roll first: roll AXIS A, move x D (e.g. roll y -60, move x 14)",
        aliases=("ligand_docking", "dock"),
        readings=(
            ("", "score_move_fixed", "score"),
            ("", "move_part_fixed", "move_part"),
            ("", "score_rotation_radius", "score"),
            ("", "score_rotation_steps", "score"),
        ),
    ),
    TaskSpec(
        "interaction_location",
        8,
        LETTER,
        "interaction loc.",
        "interaction loc.",
        in_headline=True,
        constant_answer="A",
        aliases=(
            "interaction_localization",
            "interaction_localisation",
            "interaction_locating",
            "hbond_location",
        ),
        decoy_leak_in=("explicit",),
    ),
    TaskSpec(
        "pocket_ligand",
        9,
        POCKET_BONDS,
        "pocket-ligand",
        "pocket-ligand",
        in_headline=True,
        constant_answer="None",
        form_hint="None, or RESIDUE NUMBER ATOM CHAIN, LIGAND_ATOM with bonds separated by ; "
        "(e.g. ASN 460 OD1 A, O1B; ARG 766 NH2 A, O3)",
        aliases=("pocket_ligand_interaction", "pocket_ligand_hbond", "pocket_lig"),
        readings=(
            ("", "score_precision", "score"),
            ("", "score_f1", "score"),
            ("", "exact_bonds_present", "exact"),
        ),
    ),
)
TASK_BY_NAME: dict[str, TaskSpec] = {spec.name: spec for spec in TASK_SPECS}

#: The nine task configs in the paper's order (T1..T9).
TASK_NAMES: tuple[str, ...] = tuple(spec.name for spec in TASK_SPECS)
#: Left out of the headline average (the paper's convention: every model scores at chance).
HEADLINE_EXCLUDED: tuple[str, ...] = tuple(spec.name for spec in TASK_SPECS if not spec.in_headline)

#: The answer kinds the tasks name, in the order of their first task: each is the module
#: ``builder/scoring/kinds/<kind>.py`` (found by this name, as a task's room is by its name).
ANSWER_KINDS: tuple[str, ...] = tuple(dict.fromkeys(spec.answer_kind for spec in TASK_SPECS))


# Alias table: config names, T-numbers and each spec's aliases. Keys are normalised with
# _alias_key (lower case, spaces and hyphens as underscores).
TASK_ALIASES: dict[str, str] = {
    **{name: name for name in TASK_NAMES},
    **{f"t{spec.number}": spec.name for spec in TASK_SPECS},
    **{alias: spec.name for spec in TASK_SPECS for alias in spec.aliases},
}

_ALIAS_PREFIXES = ("misi_bench_", "misibench_", "misi_")


def _alias_key(name: str) -> str:
    return re.sub(r"[\s\-/]+", "_", name.strip().lower())


def canonical_configs(names) -> list[str]:
    """Task names or aliases as config names (:func:`canonical_task`), in the given order, once
    each; ``ValueError`` (with a did-you-mean) for an unknown name.

    >>> canonical_configs(["T2", "rotation", "scale"])
    ['rotation', 'zooming']
    """
    out: list[str] = []
    for name in names:
        config = canonical_task(name)
        if config not in out:
            out.append(config)
    return out


def canonical_task(name: str) -> str:
    """The config name (one of :data:`TASK_NAMES`) of a task name or alias.

    Accepts the config names, the paper's names ("Pocket-Ligand Interaction", "scale"),
    ``T1``..``T9`` and a ``misi_bench_`` prefix. Raises ``ValueError`` for anything else.

    >>> canonical_task("T2"), canonical_task("Pocket-Ligand Interaction"), canonical_task("scale")
    ('rotation', 'pocket_ligand', 'zooming')
    """
    if (
        isinstance(name, str) and name in TASK_BY_NAME
    ):  # the config name itself (what every row carries): no regex
        return name
    if not isinstance(name, str):
        raise ValueError(f"task name must be a string, got {name!r}")  # noqa: TRY004 (one error type for callers)
    key = _alias_key(name)
    if key in TASK_ALIASES:
        return TASK_ALIASES[key]
    for prefix in _ALIAS_PREFIXES:
        if key.startswith(prefix) and key[len(prefix) :] in TASK_ALIASES:
            return TASK_ALIASES[key[len(prefix) :]]
    close = difflib.get_close_matches(key, [*TASK_NAMES, *TASK_ALIASES], n=1, cutoff=0.6)
    hint = f"did you mean {TASK_ALIASES.get(close[0], close[0])}? " if close else ""
    raise ValueError(
        f"unknown MiSI-Bench task {name!r}; {hint}expected one of {', '.join(TASK_NAMES)}"
    )
