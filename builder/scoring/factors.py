"""Factors: properties of a question that a score is broken down by (``score --by-factor``,
``report``), declared as versioned data beside the tasks that own them.

Each task's data file (``builder/tasks/<name>.yaml``) may carry a top-level ``factors:`` block
(read here, never by the builder: it is not part of a profile section, so it moves neither the
rows nor the config hash); factors every task shares live once in ``factors.yaml`` beside this
module. A block reads::

    factors:
      version: "1.0.0"                  # bump when a factor or its bins change
      bond_count:                       # the factor's name (unique within the task)
        label: "H-bonds of the residue" # axis title of its panel
        count: hbonds                   # the value: one source key, see below
        categories: [0, 1, 2, 3]        # the bins: categories (with an optional `rest` label
        rest: "4+"                      # for every other value) or `edges` (numbers, see below)

Sources of a value (one per factor), all read from the row's ``metadata`` JSON except ``fact``:
``field: a.b`` (a metadata field, dotted into objects; booleans read ``yes``/``no``), ``count:
name`` (the length of a list field), ``operation: {index: I, part: axis|magnitude|verb}`` (a part
of the ``I``-th gold operation ``move x -2`` / ``roll z 45``; magnitude is the absolute value, in
Å or degrees), ``hbond_atom: residue|ligand`` (the element of the residue's or the ligand's atom
of the row's ``hbond`` ``RES NUM ATOM CHAIN, LIG_ATOM``: its leading letter, N, O or S) and
``fact: name`` (a per-complex fact of the build, the manifest's ``complex_facts``: ligand heavy
atoms, pocket residues, protein chains). ``edges: [e0, e1, ..., en]``: bin k holds
``e_k <= value < e_(k+1)``, the last bin also holds ``e_n``; a bin's label is ``e_k-e_(k+1)``
(``labels`` may name them). A value outside every bin, or a source the row lacks, has no bin:
the question is counted under ``no bin`` and left out of that factor's panel.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ..core.errors import MisiError
from ..core.registry import TASK_NAMES

__all__ = [
    "SHARED",
    "Factor",
    "FactorSet",
    "bin_of",
    "factor_sets",
    "factors_of",
    "parse_factors",
    "value_of",
]

#: The task name of the shared factors (they apply to every task's questions).
SHARED = "*"
SHARED_FILE = Path(__file__).with_name("factors.yaml")
TASKS_DIR = Path(__file__).resolve().parent.parent / "tasks"
SOURCES = ("field", "count", "operation", "hbond_atom", "fact")
OPERATION_PARTS = ("axis", "magnitude", "verb")


@dataclass(frozen=True)
class Factor:
    """One factor: ``task`` (its owner, :data:`SHARED` for every task), ``name``, ``label``,
    ``source`` (one of :data:`SOURCES`) and its ``argument``, and the bins: ``categories``
    (values as text, plus ``rest``: the label of every other value, "" for none) or ``edges``
    (numbers, ascending) with ``labels`` (one per bin)."""

    task: str
    name: str
    label: str
    source: str
    argument: object
    categories: tuple[str, ...] = ()
    rest: str = ""
    edges: tuple[float, ...] = ()
    labels: tuple[str, ...] = ()

    @property
    def bins(self) -> tuple[str, ...]:
        """The bin labels, in order."""
        if self.edges:
            return self.labels
        return self.categories + ((self.rest,) if self.rest else ())

    @property
    def key(self) -> str:
        """``task/name`` (``*/name`` for a shared factor)."""
        return f"{self.task}/{self.name}"


@dataclass(frozen=True)
class FactorSet:
    """The factors of one task's data file (or of the shared file) and their ``version``."""

    task: str
    version: str
    factors: tuple[Factor, ...]


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _edge_label(low: float, high: float) -> str:
    return f"{_text(float(low))}-{_text(float(high))}"


def _factor(task: str, name: str, raw: object, where: str) -> Factor:
    if not isinstance(raw, Mapping):
        raise MisiError(f"{where}: factors.{name} must be a mapping")
    sources = [s for s in SOURCES if s in raw]
    if len(sources) != 1:
        raise MisiError(f"{where}: factors.{name} needs exactly one of {', '.join(SOURCES)}")
    source, argument = sources[0], raw[sources[0]]
    if source == "operation" and (
        not isinstance(argument, Mapping)
        or argument.get("part") not in OPERATION_PARTS
        or not isinstance(argument.get("index"), int)
    ):
        raise MisiError(f"{where}: factors.{name}.operation needs index and part (axis, ...)")
    if source == "hbond_atom" and argument not in ("residue", "ligand"):
        raise MisiError(f"{where}: factors.{name}.hbond_atom must be residue or ligand")
    if source == "operation":
        argument = (int(argument["index"]), str(argument["part"]))
    label = str(raw.get("label") or name)
    if ("categories" in raw) == ("edges" in raw):
        raise MisiError(f"{where}: factors.{name} needs categories or edges (one of them)")
    if "categories" in raw:
        cats = raw["categories"]
        if not isinstance(cats, list) or not cats:
            raise MisiError(f"{where}: factors.{name}.categories must be a non-empty list")
        return Factor(
            task,
            name,
            label,
            source,
            argument,
            tuple(_text(c) for c in cats),
            str(raw.get("rest") or ""),
        )
    edges = raw["edges"]
    ok = isinstance(edges, list) and len(edges) >= 2
    ok = ok and all(isinstance(e, (int, float)) and not isinstance(e, bool) for e in edges)
    if not ok or any(b <= a for a, b in zip(edges, edges[1:])):
        raise MisiError(f"{where}: factors.{name}.edges must be two or more ascending numbers")
    labels = raw.get("labels") or [_edge_label(a, b) for a, b in zip(edges, edges[1:])]
    if len(labels) != len(edges) - 1:
        raise MisiError(f"{where}: factors.{name}.labels needs one label per bin")
    return Factor(
        task,
        name,
        label,
        source,
        argument,
        edges=tuple(float(e) for e in edges),
        labels=tuple(str(x) for x in labels),
    )


def parse_factors(task: str, raw: object, where: str) -> FactorSet:
    """The :class:`FactorSet` of a ``factors:`` block; :class:`MisiError` naming ``where`` and
    the factor when it does not fit (see the module docstring)."""
    if raw is None:
        return FactorSet(task, "", ())
    if not isinstance(raw, Mapping) or not isinstance(raw.get("version"), str):
        raise MisiError(f"{where}: factors needs a version (a string) and its factors")
    found = tuple(_factor(task, n, v, where) for n, v in raw.items() if n != "version")
    return FactorSet(task, raw["version"], found)


def _read_block(path: Path) -> object:
    import yaml  # noqa: PLC0415

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise MisiError(f"{path}: cannot read its factors ({exc})") from None
    return (data or {}).get("factors") if isinstance(data, Mapping) else None


@cache
def factor_sets() -> tuple[FactorSet, ...]:
    """The shared factors, then each task's (registry order), read once from the data files."""
    out = [parse_factors(SHARED, _read_block(SHARED_FILE), str(SHARED_FILE.name))]
    for task in TASK_NAMES:
        path = TASKS_DIR / f"{task}.yaml"
        out.append(parse_factors(task, _read_block(path), f"builder/tasks/{task}.yaml"))
    return tuple(out)


def factors_of(task: str) -> tuple[Factor, ...]:
    """The factors that apply to ``task``'s questions: its own, then the shared ones."""
    own = [f for s in factor_sets() if s.task == task for f in s.factors]
    return tuple(own) + tuple(f for s in factor_sets() if s.task == SHARED for f in s.factors)


def versions() -> dict[str, str]:
    """``{task or *: factors version}`` of every data file with factors."""
    return {s.task: s.version for s in factor_sets() if s.factors}


def _meta(meta: object) -> Mapping:
    if isinstance(meta, (str, bytes)):
        try:
            meta = json.loads(meta)
        except ValueError:
            return {}
    return meta if isinstance(meta, Mapping) else {}


def _field(meta: Mapping, path: str) -> object:
    value: object = meta
    for part in str(path).split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


def _operation(meta: Mapping, index: int, part: str) -> object:
    ops = meta.get("operations")
    if not isinstance(ops, list) or not -len(ops) <= index < len(ops):
        return None
    words = str(ops[index]).split()
    if len(words) != 3:
        return None
    if part == "verb":
        return words[0]
    if part == "axis":
        return words[1]
    try:
        return abs(float(words[2]))
    except ValueError:
        return None


def _hbond_atom(meta: Mapping, side: str) -> object:
    bond = meta.get("hbond")
    if not isinstance(bond, str) or "," not in bond:
        return None
    residue, _, ligand = bond.partition(",")
    words = residue.split()
    atom = (words[2] if len(words) >= 3 else "") if side == "residue" else ligand.strip()
    return atom[:1].upper() or None


def value_of(factor: Factor, metadata: object, facts: Mapping | None = None) -> object:
    """The value of ``factor`` for one question (its ``metadata``, JSON text or parsed; and the
    build's facts of its complex), None when the question does not give one."""
    meta = _meta(metadata)
    if factor.source == "field":
        return _field(meta, str(factor.argument))
    if factor.source == "count":
        value = meta.get(str(factor.argument))
        return len(value) if isinstance(value, list) else None
    if factor.source == "operation":
        index, part = factor.argument  # type: ignore[misc]
        return _operation(meta, index, part)
    if factor.source == "hbond_atom":
        return _hbond_atom(meta, str(factor.argument))
    return (facts or {}).get(str(factor.argument))


def bin_of(factor: Factor, value: object) -> str | None:
    """The bin label of ``value`` (None: no value, or outside every bin)."""
    if value is None:
        return None
    if not factor.edges:
        text = _text(value)
        return text if text in factor.categories else (factor.rest or None)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        return None
    edges = factor.edges
    for k in range(len(edges) - 1):
        if edges[k] <= value < edges[k + 1] or (k == len(edges) - 2 and value == edges[-1]):
            return factor.labels[k]
    return None


def bins_of_row(
    task: str, metadata: object, facts: Mapping | None, factors: Sequence[Factor] | None = None
) -> dict[str, str | None]:
    """``{factor key: bin}`` of one question of ``task``."""
    return {
        f.key: bin_of(f, value_of(f, metadata, facts))
        for f in (factors if factors is not None else factors_of(task))
    }
