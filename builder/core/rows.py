"""The one dataset row: its Parquet columns and its metadata, typed per answer kind.

A built question is one :class:`Row`. Its columns (:data:`COLUMNS`: name and value type, in
shard order) are declared here once; ``builder.store.parquet`` turns them into the shards'
Arrow schema, the build writes rows with :meth:`Row.to_row` and every reader of a stored row (the
validator, the audit, the scorer's readers) parses it with :meth:`Row.from_row` or
:func:`parse_metadata`. A malformed row is refused with :class:`RowError`, whose message names
the column or metadata field.

The ``metadata`` column is canonical JSON (sorted keys, no whitespace). Its fields are typed by
the task's answer kind (registry ``answer_kind``): :class:`OperationMeta` (single operation,
operation pair), :class:`ChoiceMeta` (letter) and :class:`BondsMeta` (H-bond lists), each with the
fields every row carries (:class:`QuestionMeta`). A field no type declares is kept, untouched, in
``extra`` (read only by the room that wrote it), so ``to_json(from_json(text)) == text``; the
build accepts such a field only when the room lists it in its ``metadata_fields`` and refuses
any other (docs/extending.md, contract ``metadata-fields``).
Room hooks (replay, check, answer space, needed labels, H-bond scope) get the typed metadata.

The scorer is the exception by design: it scores rows that harnesses hand back (their documents
may carry partial metadata), so it never refuses metadata and reads only ``profile`` (written by
the shared generator base, through ``core.profiles.profile_of_metadata``) and a harness's
``options``; the columns it reads are :data:`SCORE_COLUMNS`.

>>> meta = parse_metadata('{"applies_to":"ligand","camera":{"distance":90.1,"fov_deg":30.0,'
...     '"size":512},"k":0,"operations":["move x 2"],"params_version":"1","pdb_id":"1a28",'
...     '"seed":0,"split":"test","task":"translation","template_version":"1"}')
>>> meta.operations, meta.build_profile
(('move x 2',), 'explicit')
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from .errors import MisiError
from .profiles import LEGACY_PROFILE
from .registry import (
    LETTER,
    OPERATION_PAIR,
    POCKET_BONDS,
    RESIDUE_BONDS,
    SINGLE_OPERATION,
    TASK_BY_NAME,
)


class RowError(MisiError, ValueError):
    """A stored row (or its metadata) that does not fit the record; the message names the field."""


#: The Parquet columns of every config, in order: (name, value type). Value types: ``string``,
#: ``strings`` (a list of strings) and ``images`` (a list of ``{"bytes", "path"}`` PNG images).
COLUMNS: tuple[tuple[str, str], ...] = (
    ("id", "string"),
    ("task", "string"),
    ("split", "string"),
    ("pdb_id", "string"),
    ("images", "images"),
    ("image_views", "strings"),
    ("question", "string"),
    ("options", "strings"),
    ("answer", "string"),
    ("answer_format", "string"),
    ("metadata", "string"),
)
COLUMN_NAMES: tuple[str, ...] = tuple(name for name, _ in COLUMNS)
#: The columns the scorer reads of a row (``score_prediction`` and the score reports).
SCORE_COLUMNS: tuple[str, ...] = ("id", "task", "answer", "metadata", "options")


# --------------------------------------------------------------------------------------------
# Metadata
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CameraMeta:
    """The front camera of the question's complex (distance in Å, field of view, image size)."""

    distance: float
    fov_deg: float
    size: int


@dataclass(frozen=True)
class ResidueMeta:
    """A pocket residue as the residue task names it."""

    chain: str
    name: str
    number: int
    ins_code: str


@dataclass(frozen=True, kw_only=True)
class QuestionMeta:
    """Fields of every row's metadata: what the question was made from. ``profile`` is absent
    (None) in ``explicit`` builds, so their rows stay as they were before profiles."""

    task: str
    pdb_id: str
    k: int
    seed: int
    split: str
    template_version: str
    params_version: str
    camera: CameraMeta
    profile: str | None = None
    #: the stratum the tiny split draws evenly from (the paper's T4: positive/negative)
    tiny_stratum: str | None = None
    #: fields a room wrote that no type declares, as parsed (only that room reads them)
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def build_profile(self) -> str:
        """The build profile of the row (``explicit`` when the metadata names none)."""
        return self.profile or LEGACY_PROFILE

    def to_dict(self) -> dict:
        """The metadata as JSON values (absent optional fields left out, ``extra`` merged)."""
        out = dict(self.extra)
        for f in fields(self):
            if f.name != "extra" and getattr(self, f.name) is not None:
                out[f.name] = _encode(getattr(self, f.name))
        return out

    def to_json(self) -> str:
        """The ``metadata`` column's text: canonical JSON."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True, kw_only=True)
class OperationMeta(QuestionMeta):
    """Single-operation and operation-pair answers (T1-T3, T7): the gold ``operations``, what
    they move (``applies_to``) and, for docking, the ``displacement`` that made the scene and the
    scene camera's distance."""

    operations: tuple[str, ...]
    applies_to: str
    displacement: tuple[str, ...] | None = None
    scene_camera_distance: float | None = None

    def gold_commands(self, answer: str) -> tuple[str, ...]:
        """The command texts of the gold answer: the answer itself."""
        return (answer,)


@dataclass(frozen=True, kw_only=True)
class ChoiceMeta(QuestionMeta):
    """Letter answers (T4-T6): the true ``operations``, each option's operations in letter order,
    the ``correct`` letter, and what each task adds (decoy schemes, the H-bond, the two complexes
    of T5 and its target camera distance)."""

    operations: tuple[str, ...]
    option_operations: tuple[tuple[str, ...], ...]
    correct: str
    option_schemes: tuple[str, ...] | None = None
    hbond: str | None = None
    reference: str | None = None
    target: str | None = None
    target_camera_distance: float | None = None

    def gold_commands(self, answer: str) -> tuple[str, ...]:
        """The command texts of the gold answer: those of the option its letter names."""
        return self.option_of(answer)

    def option_of(self, letter: str) -> tuple[str, ...]:
        """The operations of option ``letter`` (A-D)."""
        index = ord(letter) - ord("A") if isinstance(letter, str) and len(letter) == 1 else -1
        if not 0 <= index < len(self.option_operations):
            raise RowError(f"metadata.option_operations: no option {letter!r}")
        return self.option_operations[index]


@dataclass(frozen=True, kw_only=True)
class BondsMeta(QuestionMeta):
    """H-bond list answers (T8, T9): the bonds (as their answer text), and for the residue task
    the residue asked about, whether it bonds, how it was selected and the scene origin."""

    hbonds: tuple[str, ...]
    residue: ResidueMeta | None = None
    positive: bool | None = None
    selection: str | None = None
    origin: tuple[float, ...] | None = None


#: The metadata type of each answer kind that has fields of its own (core reads rows, so the table
#: lives here; the kind objects of ``builder/scoring/kinds`` give it as their ``metadata``). A kind
#: not listed (a new kind whose rooms keep their fields in ``metadata_fields``) has the fields every
#: row carries, :class:`QuestionMeta`.
METADATA_TYPES: dict[str, type[QuestionMeta]] = {
    SINGLE_OPERATION: OperationMeta,
    OPERATION_PAIR: OperationMeta,
    LETTER: ChoiceMeta,
    POCKET_BONDS: BondsMeta,
    RESIDUE_BONDS: BondsMeta,
}


def metadata_type(task: str) -> type[QuestionMeta]:
    """The metadata type of ``task``'s rows (by its registry answer kind; :class:`QuestionMeta`
    for a kind :data:`METADATA_TYPES` does not list)."""
    spec = TASK_BY_NAME.get(task)
    if spec is None:
        raise RowError(f"task {task!r} is not in the registry")
    return METADATA_TYPES.get(spec.answer_kind, QuestionMeta)


def metadata_from_dict(value: object, task: str | None = None) -> QuestionMeta:
    """The typed metadata of a parsed ``metadata`` value, for ``task`` (default: its own
    ``task`` field); :class:`RowError` naming the field when it does not fit."""
    if not isinstance(value, Mapping):
        raise RowError(f"metadata: expected a JSON object, got {type(value).__name__}")
    own = value.get("task")
    if task is not None and own != task:
        raise RowError(f"metadata.task: {own!r} is not the row's task {task!r}")
    if not isinstance(own, str):
        raise RowError(f"metadata.task: expected the task's name, got {own!r}")
    try:
        cls = metadata_type(own)
    except RowError as exc:
        raise RowError(f"metadata.task: {exc}") from None
    known = {f.name: f for f in fields(cls) if f.name != "extra"}
    kwargs: dict[str, Any] = {}
    for name, f in known.items():
        if name not in value:
            if f.default is None:
                continue
            raise RowError(f"metadata.{name}: missing ({cls.__name__})")
        kwargs[name] = _decode(f.type, value[name], f"metadata.{name}")
    extra = {k: v for k, v in value.items() if k not in known}
    return cls(**kwargs, extra=extra)


def parse_metadata(text: object, task: str | None = None) -> QuestionMeta:
    """The typed metadata of a row's ``metadata`` column (JSON text)."""
    if not isinstance(text, (str, bytes)):
        raise RowError(f"metadata: expected JSON text, got {type(text).__name__}")
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise RowError(f"metadata: not JSON ({exc})") from None
    return metadata_from_dict(value, task)


def _decode(kind: str, value: object, where: str) -> Any:
    """``value`` as the annotation ``kind`` (the dataclass field's type text) asks."""
    kind = kind.removesuffix(" | None")
    if kind == "str":
        ok = isinstance(value, str)
    elif kind == "int":
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif kind == "bool":
        ok = isinstance(value, bool)
    elif kind == "float":  # kept as parsed (int or float), so the JSON text round-trips
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif kind.startswith("tuple[") and kind.endswith(", ...]"):
        if not isinstance(value, list):
            raise RowError(f"{where}: expected a list, got {type(value).__name__}")
        inner = kind[len("tuple[") : -len(", ...]")]
        return tuple(_decode(inner, v, f"{where}[{i}]") for i, v in enumerate(value))
    elif kind in _RECORDS:
        cls = _RECORDS[kind]
        if not isinstance(value, Mapping):
            raise RowError(f"{where}: expected an object, got {type(value).__name__}")
        names = [f.name for f in fields(cls)]
        for key in value:
            if key not in names:
                raise RowError(f"{where}.{key}: not a field of {cls.__name__}")
        for name in names:
            if name not in value:
                raise RowError(f"{where}.{name}: missing")
        return cls(
            **{f.name: _decode(f.type, value[f.name], f"{where}.{f.name}") for f in fields(cls)}
        )
    else:  # pragma: no cover - a field type this module does not know
        raise RowError(f"{where}: unknown field type {kind}")
    if not ok:
        raise RowError(f"{where}: expected {kind}, got {value!r}")
    return value


_RECORDS = {"CameraMeta": CameraMeta, "ResidueMeta": ResidueMeta}


def _encode(value: object) -> Any:
    if isinstance(value, tuple):
        return [_encode(v) for v in value]
    if isinstance(value, (CameraMeta, ResidueMeta)):
        return {f.name: _encode(getattr(value, f.name)) for f in fields(value)}
    return value


# --------------------------------------------------------------------------------------------
# Row
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    """One question as stored: the columns of :data:`COLUMNS`, ``images`` as PNG bytes and
    ``metadata`` typed."""

    id: str
    task: str
    split: str
    pdb_id: str
    images: tuple[bytes, ...]
    image_views: tuple[str, ...]
    question: str
    options: tuple[str, ...]
    answer: str
    answer_format: str
    metadata: QuestionMeta

    def to_row(self) -> dict:
        """The row as the shards store it (a dict of :data:`COLUMNS`)."""
        return {
            "id": self.id,
            "task": self.task,
            "split": self.split,
            "pdb_id": self.pdb_id,
            "images": [{"bytes": b, "path": None} for b in self.images],
            "image_views": list(self.image_views),
            "question": self.question,
            "options": list(self.options),
            "answer": self.answer,
            "answer_format": self.answer_format,
            "metadata": self.metadata.to_json(),
        }

    @classmethod
    def from_row(cls, row: Mapping) -> Row:
        """The record of a stored row (all of :data:`COLUMNS`); :class:`RowError` naming the
        column or metadata field that does not fit."""
        if not isinstance(row, Mapping):
            raise RowError(f"row: expected a mapping, got {type(row).__name__}")
        for name in COLUMN_NAMES:
            if name not in row:
                raise RowError(f"row {row.get('id')!r}: column {name}: missing")
        extra = sorted(set(row) - set(COLUMN_NAMES))
        if extra:
            raise RowError(f"row {row.get('id')!r}: column {extra[0]}: not a column of the dataset")
        where = f"row {row.get('id')!r}: column"
        text = {
            n: _decode("str", row[n], f"{where} {n}") for n, kind in COLUMNS if kind == "string"
        }
        try:
            meta = parse_metadata(text["metadata"], text["task"])
        except RowError as exc:
            raise RowError(f"row {text['id']!r}: {exc}") from None
        return cls(
            id=text["id"],
            task=text["task"],
            split=text["split"],
            pdb_id=text["pdb_id"],
            images=_images(row["images"], f"{where} images"),
            image_views=_decode("tuple[str, ...]", row["image_views"], f"{where} image_views"),
            question=text["question"],
            options=_decode("tuple[str, ...]", row["options"], f"{where} options"),
            answer=text["answer"],
            answer_format=text["answer_format"],
            metadata=meta,
        )


def _images(value: object, where: str) -> tuple[bytes, ...]:
    if not isinstance(value, list):
        raise RowError(f"{where}: expected a list, got {type(value).__name__}")
    out = []
    for i, img in enumerate(value):
        if not isinstance(img, Mapping) or set(img) != {"bytes", "path"}:
            raise RowError(f"{where}[{i}]: expected {{'bytes', 'path'}}, got {img!r:.60}")
        if not isinstance(img["bytes"], bytes) or img["path"] is not None:
            raise RowError(f"{where}[{i}]: expected PNG bytes and no path")
        out.append(img["bytes"])
    return tuple(out)
