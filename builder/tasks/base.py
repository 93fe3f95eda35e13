"""Shared machinery of the nine task generators.

A generator takes a ``TaskContext`` (one complex's annotation, the split, parameters, a
per-question random generator factory, and access to other complexes of the split for T5) and
returns ``TaskInstance`` values: operations, question text, options, answer, the image plan
(render requests in prompt order with view names) and the metadata that re-derives the answer.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType

import numpy as np

from ..core.profiles import check_profile, get_profile, question_id
from ..core.rows import metadata_from_dict
from ..operations.language import Operation
from ..operations.transforms import VIEW_NAMES, Pose
from ..scene.camera import Camera
from ..scene.requests import RenderRequest, Style
from .annotation import Annotation, annotate
from .data import ProfileData, fill, task_data, task_profile

LETTERS = ("A", "B", "C", "D")


@dataclass(frozen=True)
class ImageSpec:
    """One image of a question: its name in the prompt, which complex, and the render request."""

    view_name: str
    pdb_id: str
    request: RenderRequest


@dataclass(frozen=True)
class TaskInstance:
    """One generated question, before rendering."""

    task: str
    pdb_id: str
    index: int
    question: str
    options: tuple[str, ...]
    answer: str
    images: tuple[ImageSpec, ...]
    metadata_json: str
    #: The build profile the question was made for (``builder.core.profiles``).
    profile: str

    @property
    def qid(self) -> str:
        return question_id(self.task, self.pdb_id, self.index, self.profile)

    @property
    def metadata(self) -> dict:
        return json.loads(self.metadata_json)


@dataclass(frozen=True, eq=False)
class TaskContext:
    """Everything one task generator may use for one complex: the annotation, the split, the
    seed, the build ``profile`` and the task's data in that profile (``data``, from the task's
    data file: prompt, parameters, versions), the ``balanced`` decoy settings, and access to
    other complexes of the split (T5). Built by :meth:`for_task`."""

    ann: Annotation
    split: str
    seed: int
    #: The build profile (``builder.core.profiles``): which prompt and parameters are in force.
    profile: str
    data: ProfileData
    partners: Sequence[str] = ()
    load_partner: Callable[[str], Annotation] | None = None
    #: How the choice tasks draw their options: ``paper`` or ``balanced`` (see ``decoys``).
    decoys: str = "paper"
    #: The task's ``balanced`` decoy settings (its data file's ``decoys``; empty for others).
    decoy_settings: Mapping = field(default_factory=lambda: MappingProxyType({}))

    @classmethod
    def for_task(
        cls, task: str, ann: Annotation, split: str, seed: int, profile: str, **more: object
    ) -> TaskContext:
        """The context of ``task`` in ``profile``, its data read from the task's data file;
        ``more``: ``partners``, ``load_partner``, ``decoys``."""
        data = task_data(task)
        return cls(
            ann=ann,
            split=split,
            seed=seed,
            profile=check_profile(profile),
            data=data.profile(profile),
            decoy_settings=data.decoys,
            **more,
        )

    @property
    def params(self) -> Mapping:
        return self.data.params

    @property
    def choice(self) -> Mapping:
        return self.data.choice

    @property
    def template_version(self) -> str:
        return self.data.template_version

    @property
    def params_version(self) -> str:
        return self.data.params_version

    def rng(self, task: str, k: int) -> np.random.Generator:
        """The random generator of question ``k`` of ``task`` for this complex: depends only on
        (seed, task, pdb id, k), never on worker count or order."""
        return question_rng(self.seed, task, self.ann.pdb_id, k)

    def count(self, key: str = "counts") -> int:
        value = self.params[key]
        return (
            int(value.get(self.split, value.get("test", 0)))
            if isinstance(value, Mapping)
            else int(value)
        )

    def cap(self, key: str) -> int | None:
        """A per-split cap of the parameters; None when the value is null (no cap)."""
        value = self.params.get(key)
        if isinstance(value, Mapping):
            value = value.get(self.split, value.get("test"))
        return None if value is None else int(value)

    def prompt(self, image_lines: Sequence[str], **fields: object) -> str:
        """The question text in this context's profile (see :func:`.data.fill`). ``names_note``
        (the profile's sentence on disambiguated ligand atom names, after a space) is filled in
        when the complex's ligand has such names (:func:`disambiguated_names`), else empty."""
        if "names_note" in self.data.placeholders and "names_note" not in fields:
            fields["names_note"] = self.names_note(self.ann)
        return fill(self.data, image_lines, fields)

    def names_note(self, *shown: Annotation) -> str:
        """The ``{names_note}`` of a question whose pictures show the complexes of ``shown``: the
        profile's sentence (after a space) when a ligand among them has disambiguated atom
        names, else empty."""
        for ann in shown:
            cx = ann.complex
            if disambiguated_names(cx.atom_names[cx.is_ligand]):
                return f" {self.data.names_note}"
        return ""

    def caption(self, key: str, **fields: object) -> str:
        """The image caption ``key`` of this task in this context's profile ("" when the
        profile's prompt does not list its images)."""
        text = self.data.captions.get(key)
        if text is None and "image_lines" in self.data.placeholders:
            raise KeyError(f"no caption {key!r} in the {self.profile!r} data of this task")
        return "" if text is None else text.format(**fields)

    def instance(
        self,
        task: str,
        k: int,
        *,
        question: str,
        answer: str,
        images: tuple[ImageSpec, ...],
        metadata: str,
        options: tuple[str, ...] = (),
    ) -> TaskInstance:
        """Question ``k`` of ``task`` about this context's complex, in its profile: how every
        room makes its :class:`TaskInstance` (``options``: the option texts of a letter
        question, none for a fill-in answer; ``metadata``: the JSON of :func:`metadata`)."""
        return TaskInstance(
            task, self.ann.pdb_id, k, question, options, answer, images, metadata, self.profile
        )

    def hbond_rule(self) -> str:
        """The H-bond rule sentence for the annotation's ``--hbonds`` mode in this context's
        profile ("" when the profile's prompt states none)."""
        return self.data.hbond_rules.get(self.ann.hbond_mode, "")

    @property
    def six_views(self) -> tuple[str, ...]:
        """The order of the six views (T4, T8, T9) in this context's profile."""
        return self.data.six_views


#: A ligand atom name told apart from a repeat of its name in the input: ``N:2`` (the MOL2
#: substructure, or the atom's place in a raw entry's ligand), ``N:1.4`` (the 4th ``N`` of
#: substructure 1), as ``chemistry.ligand`` and ``chemistry.ccd`` write them.
_DISAMBIGUATED = re.compile(r".+:\d+(\.\d+)?")


def disambiguated_names(names: Sequence[str]) -> tuple[str, ...]:
    """The names among ``names`` (ligand atom names) that carry a disambiguating suffix."""
    return tuple(str(n) for n in names if _DISAMBIGUATED.fullmatch(str(n)))


def question_rng(seed: int, task: str, pdb_id: str, k: int) -> np.random.Generator:
    """A generator seeded from (seed, task, pdb id, k) with stable 32-bit hashes."""
    if seed is None:
        raise ValueError("a seed is required for reproducible generation")
    words = [int(seed) & 0xFFFFFFFF, zlib.crc32(task.encode()), zlib.crc32(pdb_id.encode()), int(k)]
    return np.random.default_rng(words)


# ---------------------------------------------------------------------------- data files


def view_order(task: str, profile: str) -> tuple[str, ...]:
    """The order of the six views of ``task`` in ``profile`` (its data file's ``six_views``)."""
    return task_profile(task, profile).six_views


def options_block(options: Sequence[str]) -> str:
    return "Options:\n" + "\n".join(f"{letter}. {text}" for letter, text in zip(LETTERS, options))


# ---------------------------------------------------------------------------- sampling helpers


def nonzero_int(rng: np.random.Generator, lo: int, hi: int, step: int = 1) -> int:
    """A uniformly drawn multiple of ``step`` in [lo, hi] other than zero."""
    values = [v for v in range(lo, hi + 1, step) if v != 0]
    return int(values[int(rng.integers(len(values)))])


def signed_magnitude(rng: np.random.Generator, spec: Mapping) -> int:
    """± a magnitude drawn from {min..max step}; ``spec`` keys min, max, optional step."""
    step = int(spec.get("step", 1))
    mags = list(range(int(spec["min"]), int(spec["max"]) + 1, step))
    return int(mags[int(rng.integers(len(mags)))]) * (1 if rng.random() < 0.5 else -1)


def other_magnitude(rng: np.random.Generator, value: int, spec: Mapping) -> int:
    """Same sign as ``value``, a different magnitude from the same range."""
    step = int(spec.get("step", 1))
    mags = [m for m in range(int(spec["min"]), int(spec["max"]) + 1, step) if m != abs(value)]
    return int(mags[int(rng.integers(len(mags)))]) * (1 if value > 0 else -1)


def letter_for(ctx: TaskContext, task: str, k: int) -> int:
    """Index of the correct letter of question k: each complex starts at a random letter and
    cycles through A-D, so letters are balanced within a complex and uniform over the dataset."""
    offset = int(question_rng(ctx.seed, task + ":letters", ctx.ann.pdb_id, 0).integers(4))
    return (offset + k) % 4


def request(
    ann: Annotation,
    view: str = "front",
    ops: Sequence[Operation] = (),
    atoms: Sequence[int] | None = None,
    groups: tuple | None = None,
    camera: Camera | None = None,
    label_mode: str = "standard",
    origin: Sequence[float] | None = None,
) -> RenderRequest:
    """A render request in the complex's screen frame (or, with ``origin``, in the frame centred
    on that model-frame point); the camera (default: the complex's) sets the image size."""
    atoms_t = tuple(int(a) for a in (ann.all_atoms if atoms is None else atoms))
    if groups is None:
        groups = ((atoms_t, tuple(ops)),) if ops else ()
    cam = camera or ann.camera
    return RenderRequest(
        atoms=atoms_t,
        groups=groups,
        view=view,
        camera=cam,
        style=Style(label_mode=label_mode),
        origin=None if origin is None else tuple(float(v) for v in origin),
    )


def six_views(ann: Annotation, order: Sequence[str] = VIEW_NAMES) -> tuple[ImageSpec, ...]:
    """The whole complex in the six views (T8, T9), in ``order``; the later five keep the first
    view's label offsets (:func:`keep_labels`)."""
    return keep_labels(tuple(ImageSpec(v, ann.pdb_id, request(ann, v)) for v in order))


def kept(reference: RenderRequest, req: RenderRequest) -> RenderRequest:
    """``req`` keeping the label offsets of ``reference``'s picture (``RenderRequest.reference``,
    RENDER_VERSION 9): labels stay with their atoms across a question's pictures. A request of
    another style or camera (another scale: T7's ligand close-ups), or the reference itself, is
    returned as it is."""
    if req == reference or req.style != reference.style or req.camera != reference.camera:
        return req
    return replace(req, reference=reference)


def keep_labels(images: Sequence[ImageSpec], first: int = 0) -> tuple[ImageSpec, ...]:
    """The images with every one after ``first`` (of the same complex) keeping the label
    offsets of image ``first`` (:func:`kept`): the question's reference picture."""
    images = tuple(images)
    ref = images[first]
    return tuple(
        img
        if k <= first or img.pdb_id != ref.pdb_id
        else ImageSpec(img.view_name, img.pdb_id, kept(ref.request, img.request))
        for k, img in enumerate(images)
    )


def metadata(ctx: TaskContext, task: str, k: int, **payload: object) -> str:
    """Canonical JSON metadata of one question (sorted keys, no whitespace variance): the fields
    every row carries and the room's ``payload``, typed by :mod:`builder.core.rows`."""
    base = {
        "task": task,
        "pdb_id": ctx.ann.pdb_id,
        "k": k,
        "seed": ctx.seed,
        "split": ctx.split,
        "template_version": ctx.template_version,
        "params_version": ctx.params_version,
        "camera": {
            "distance": round(ctx.ann.camera.distance, 4),
            "fov_deg": ctx.ann.camera.fov_deg,
            "size": ctx.ann.camera.size,
        },
    }
    if get_profile(ctx.profile).names_itself:  # else byte-identical to builds before profiles
        base["profile"] = ctx.profile
    base.update(payload)
    # typed by the task's answer kind (builder.core.rows): a field of the wrong type fails here
    return metadata_from_dict(base, task).to_json()


def projected_difference(
    ann: Annotation,
    a: Sequence[Operation],
    b: Sequence[Operation],
    camera: Camera | None = None,
    base: Sequence[Operation] = (),
) -> float:
    """Mean pixel distance between the projections of the whole model after ``base + a`` and
    after ``base + b`` (front view): the sampler's measure of how different two images are."""
    cam = camera or ann.camera
    centre = (ann.screen.min(axis=0) + ann.screen.max(axis=0)) / 2.0
    pa = cam.project(Pose.identity(centre).then_all([*base, *a]).apply(ann.screen))
    pb = cam.project(Pose.identity(centre).then_all([*base, *b]).apply(ann.screen))
    ok = np.isfinite(pa).all(axis=1) & np.isfinite(pb).all(axis=1)
    if not ok.any():
        return 0.0
    return float(np.linalg.norm(pa[ok] - pb[ok], axis=1).mean())


def visible_fraction(
    ann: Annotation, atoms: np.ndarray, ops: Sequence[Operation], camera: Camera | None = None
) -> float:
    """Share of ``atoms`` inside the image after moving the whole model by ``ops`` (front view)."""
    cam = camera or ann.camera
    centre = (ann.screen.min(axis=0) + ann.screen.max(axis=0)) / 2.0
    moved = Pose.identity(centre).then_all(ops).apply(ann.screen[atoms])
    return float(cam.visible(moved).mean())


__all__ = [
    "Annotation",
    "ImageSpec",
    "TaskContext",
    "TaskInstance",
    "LETTERS",
    "annotate",
    "view_order",
    "options_block",
    "question_rng",
]
