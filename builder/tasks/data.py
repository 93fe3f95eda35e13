"""The one loader of the task data files: ``builder/tasks/<name>.yaml`` beside each task's module.

A task's data file holds, per build profile (``builder.core.profiles``), its prompt template,
sampling parameters and their versions, and (choice tasks) the settings of the ``balanced``
decoy mode. Nothing is shared between tasks, so that a change to one task's file moves only
that task's rows and its part of the config hash (:func:`config_fields`). Each file reads::

    explicit:                       # one section per profile, every profile required
      template_version: "1.4.0"     # bump when the prompt or a caption changes
      params_version: "1.0.0"       # bump when a parameter changes
      params: {...}                 # the generator's ``ctx.params``
      choice: {...}                 # optional: the generator's ``ctx.choice`` (T5, T6)
      six_views: [front, ...]       # optional: the order of the six views (default VIEW_NAMES)
      captions: {...}               # needed when the prompt uses {image_lines}
      hbond_rules: {plip: ..., ...} # needed when the prompt uses {hbond_rule}, one per mode
      names_note: "..."             # needed when the prompt uses {names_note}: the sentence on
                                    # disambiguated ligand atom names (``N:1.4``), filled in only
                                    # for a complex whose ligand has them (``TaskContext.prompt``)
      prompt: |-                    # the template; {placeholders} filled by the task's module
    paper: {...}
    decoys: {version: ..., ...}     # optional: the ``balanced`` decoy mode's settings
    card: {summary: ..., ...}       # the dataset card's words for the task (:class:`TaskCard`)
    expect: {...}                   # what the shared tests expect of the task (not hashed)
"""

from __future__ import annotations

import hashlib
import json
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from types import MappingProxyType

import yaml

from ..chemistry.hbonds import HBOND_MODES
from ..core.errors import MisiError
from ..core.profiles import PROFILE_NAMES, check_profile
from ..operations.transforms import VIEW_NAMES


@dataclass(frozen=True)
class ProfileData:
    """One profile's section of a task data file (see the module docstring)."""

    template_version: str
    params_version: str
    prompt: str
    params: Mapping
    choice: Mapping
    six_views: tuple[str, ...]
    captions: Mapping
    hbond_rules: Mapping
    names_note: str = ""

    @property
    def placeholders(self) -> frozenset[str]:
        """The ``{names}`` the prompt uses."""
        return frozenset(f for _, f, _, _ in string.Formatter().parse(self.prompt) if f)


@dataclass(frozen=True)
class TaskCard:
    """What the dataset card says of a task (``builder/dataset/card_tasks.py``), in the task's
    data file and not hashed (the card is written from it, the rows are not): ``summary`` (the
    task table's one-line description), ``answer`` (an example answer, markdown), ``asks`` (what
    the task asks, for the card's opening sentence), ``scoring`` (its rule, for the scoring
    paragraph; ``{steps}``, ``{steps_less}`` and ``{radius}`` are filled from its registry
    entry), ``readings`` (the other readings ``misi-bench score`` reports beside the headline),
    ``answer_labels`` (the labels its answer rests on, for the legibility paragraph) and
    ``underdetermined`` (why the profiles of its ``underdetermined_in`` do not fix the answer)
    and ``options_only`` (what the options-only blind rules read of its options).
    ``{task}`` in any of them is the task's number (``T4``)."""

    summary: str
    answer: str
    asks: str
    scoring: str
    readings: tuple[str, ...] = ()
    answer_labels: str = ""
    underdetermined: str = ""
    options_only: str = ""


_CARD_REQUIRED = ("summary", "answer", "asks", "scoring")
_CARD_OPTIONAL = ("answer_labels", "underdetermined", "options_only")


def parse_card(raw: object, where: str) -> TaskCard:
    """The ``card`` section of a task data file; :class:`MisiError` naming ``where`` and the
    field when one is missing or not text."""
    if not isinstance(raw, Mapping):
        raise MisiError(f"{where}: no card section (the dataset card's words for the task)")
    unknown = sorted(set(raw) - {*_CARD_REQUIRED, *_CARD_OPTIONAL, "readings"})
    if unknown:
        raise MisiError(f"{where}: card has unknown fields {', '.join(unknown)}")
    for key in _CARD_REQUIRED:
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise MisiError(f"{where}: card.{key} must be a non-empty string")
    for key in _CARD_OPTIONAL:
        if not isinstance(raw.get(key, ""), str):
            raise MisiError(f"{where}: card.{key} must be a string")
    readings = raw.get("readings") or []
    if not isinstance(readings, list) or not all(isinstance(r, str) for r in readings):
        raise MisiError(f"{where}: card.readings must be a list of strings")
    return TaskCard(
        *(raw[k] for k in _CARD_REQUIRED),
        readings=tuple(readings),
        **{k: raw.get(k, "") for k in _CARD_OPTIONAL},
    )


#: ``choice.options`` of a profile whose default (``--decoys paper``) options are drawn as the
#: ``balanced`` mode draws them (T5/T6 in the ``paper`` profile; docs/decoys.md).
EXCHANGEABLE = "exchangeable"


@dataclass(frozen=True)
class TaskData:
    """One task's data file: ``profiles`` (name -> :class:`ProfileData`) and ``decoys`` (the
    ``balanced`` decoy mode's settings with their ``version``; empty for other tasks),
    ``card`` (the dataset card's words for it) and ``expect`` (what the shared tests expect of
    the task); ``card`` and ``expect`` are neither used to build rows nor hashed."""

    task: str
    profiles: Mapping[str, ProfileData]
    decoys: Mapping
    raw: Mapping
    expect: Mapping
    card: TaskCard

    def profile(self, profile: str) -> ProfileData:
        return self.profiles[check_profile(profile)]

    def config_fields(self, profile: str, balanced: bool) -> dict:
        """What this task puts into a build's hashed configuration: its versions in ``profile``
        and a digest of that profile's section (and of the decoy settings, for ``balanced``
        builds and for profiles whose ``choice.options`` is ``exchangeable``), so that an edit
        moves the hash even before its version is bumped."""
        section = self.raw[check_profile(profile)]
        fields = {
            "template_version": self.profile(profile).template_version,
            "params_version": self.profile(profile).params_version,
            "digest": _digest(section),
        }
        uses_decoys = self.profile(profile).choice.get("options") == EXCHANGEABLE
        if (balanced or uses_decoys) and self.decoys:
            fields["decoys_version"] = str(self.decoys["version"])
            fields["decoys_digest"] = _digest(self.decoys)
        return fields


def _digest(data: object) -> str:
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _freeze(value: object) -> object:
    if isinstance(value, Mapping):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def parse_task_data(task: str, raw: Mapping, where: str = "") -> TaskData:
    """A :class:`TaskData` from a data file's parsed YAML; :class:`MisiError` (naming ``where``)
    when a profile is missing, a version is not a string or a prompt's placeholder has no data."""
    where = where or f"builder/tasks/{task}.yaml"
    if not isinstance(raw, Mapping):
        raise MisiError(f"{where}: expected a mapping of profiles")
    profiles = {}
    for name in PROFILE_NAMES:
        section = raw.get(name)
        if not isinstance(section, Mapping):
            raise MisiError(f"{where}: no {name!r} section (every profile needs one)")
        for key in ("template_version", "params_version", "prompt"):
            if not isinstance(section.get(key), str):
                raise MisiError(f"{where}: {name}.{key} must be a string")
        data = ProfileData(
            template_version=section["template_version"],
            params_version=section["params_version"],
            prompt=section["prompt"],
            params=_freeze(section.get("params") or {}),
            choice=_freeze(section.get("choice") or {}),
            six_views=tuple(section.get("six_views") or VIEW_NAMES),
            captions=_freeze(section.get("captions") or {}),
            hbond_rules=_freeze(section.get("hbond_rules") or {}),
            names_note=str(section.get("names_note") or ""),
        )
        if "names_note" in data.placeholders and not data.names_note:
            raise MisiError(f"{where}: {name}.prompt uses {{names_note}} but has no names_note")
        if "image_lines" in data.placeholders and not data.captions:
            raise MisiError(f"{where}: {name}.prompt uses {{image_lines}} but has no captions")
        if "hbond_rule" in data.placeholders and set(data.hbond_rules) != set(HBOND_MODES):
            raise MisiError(
                f"{where}: {name}.prompt uses {{hbond_rule}}: hbond_rules needs one sentence per "
                f"mode ({', '.join(HBOND_MODES)})"
            )
        if sorted(data.six_views) != sorted(VIEW_NAMES):
            raise MisiError(f"{where}: {name}.six_views must order {', '.join(VIEW_NAMES)}")
        profiles[name] = data
    decoys = raw.get("decoys") or {}
    if decoys and not isinstance(decoys.get("version"), str):
        raise MisiError(f"{where}: decoys.version must be a string")
    expect = _freeze(raw.get("expect") or {})
    card = parse_card(raw.get("card"), where)
    return TaskData(task, MappingProxyType(profiles), _freeze(decoys), raw, expect, card)


def data_file_text(task: str) -> str:
    """The text of ``builder/tasks/<task>.yaml``; :class:`MisiError` when there is none."""
    path = resources.files(__package__).joinpath(f"{task}.yaml")
    if not path.is_file():
        raise MisiError(f"task {task!r} has no data file builder/tasks/{task}.yaml")
    return path.read_text(encoding="utf-8")


@cache
def task_data(task: str) -> TaskData:
    """The data of ``task``, read once from its data file (:func:`data_file_text`)."""
    return parse_task_data(task, yaml.safe_load(data_file_text(task)))


def task_profile(task: str, profile: str) -> ProfileData:
    """The ``profile`` section of ``task``'s data file."""
    return task_data(task).profile(profile)


def versions_label(tasks: Sequence[str], profile: str, key: str = "template_version") -> str:
    """One label for the versions of ``tasks`` in ``profile``: the version when they share one,
    else ``task version`` pairs (for the card and ``--version``)."""
    found = {t: getattr(task_profile(t, profile), key) for t in tasks}
    if len(set(found.values())) <= 1:
        return next(iter(found.values()), "")
    return ", ".join(f"{t} {v}" for t, v in found.items())


def fill(data: ProfileData, image_lines: Sequence[str], fields: Mapping[str, object]) -> str:
    """The question text: ``data.prompt`` with ``fields`` and the numbered image lines filled
    in (a template need not use every field)."""
    lines = "\n".join(f"Image {k + 1}: {line}." for k, line in enumerate(image_lines))
    return data.prompt.format(image_lines=lines, **{k: str(v) for k, v in fields.items()})
