"""Real render requests of a build, as data: what the renderer's benchmarks and its pixel
snapshot (``tests/snapshots/render_pixels.json``) use.

    python -m scripts.render_cases [--ids 1a28,1hvr,...] [--per-kind 6]
        --out tests/snapshots/render_pixels.json

:func:`build_requests` runs the build's own unit function (``dataset.units.generate_unit``,
every task, the samples' default seed) on some embedded samples and records every request it
renders instead of rendering it. :func:`select_cases` keeps a few requests of each kind (task,
label mode, moved groups or not, atoms shown), and adds a contact sheet tile and non-default
styles. A case is stored as JSON (:func:`request_to_json` / :func:`request_from_json`) with the
SHA-256 of its decoded pixels (:func:`pixel_digest`), so the snapshot does not depend on the task
generators or on the PNG encoder. Record it with the code whose pixels are the reference.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import sys
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from misi_bench.builder.dataset import units
from misi_bench.builder.dataset.build import plan
from misi_bench.builder.dataset.config import BuildConfig
from misi_bench.builder.operations.language import Move, Roll
from misi_bench.builder.scene.camera import Camera
from misi_bench.builder.scene.requests import RENDER_VERSION, RenderRequest, Style

#: Samples whose requests make the snapshot: two large pockets and a small one.
DEFAULT_IDS = ("1a28", "1hvr", "4cup")
#: The contact sheet of the snapshot.
SHEET_ID, SHEET_SIZE = "4cup", 256


@contextmanager
def _recording(found: list):
    """Make ``generate_unit`` record ``(pdb_id, task, request)`` instead of rendering."""

    class Recorder:
        misses = 0

        def __init__(self, *args, **kwargs):
            self.task = ""

        def get(self, complex_, request):
            found.append((complex_.pdb_id, request))
            return b""

    old = units.RenderCache
    units.RenderCache = Recorder
    try:
        yield
    finally:
        units.RenderCache = old


def build_requests(ids=None, cfg: BuildConfig | None = None):
    """``(records, annotations)``: the requests that the build's units of ``ids`` (default: all
    samples) render, as ``(unit pdb_id, task, complex pdb_id, request)`` in build order (a
    request repeated within a unit is rendered once there, and listed once), and the
    ``units.AnnotationCache`` that holds their complexes."""
    cfg = BuildConfig(source="samples") if cfg is None else cfg
    refs, splits = plan(cfg)
    ids = sorted(refs) if ids is None else list(ids)
    annotations = units.AnnotationCache(refs, cfg.pocket_cutoff, cfg.image_size, cfg.hbonds)
    records = []
    for pdb_id in ids:
        for task in cfg.tasks:
            found: list = []
            one = dataclasses.replace(cfg, tasks=(task,))
            with _recording(found):
                units.generate_unit(pdb_id, refs, splits, one)
            records += [(pdb_id, task, p, r) for p, r in dict.fromkeys(found)]
    return records, annotations


def kind(task: str, request: RenderRequest) -> str:
    shown = "ligand" if len(request.atoms) < 60 else "scene"
    moved = "moved" if request.groups else "still"
    kept = "/kept" if request.reference is not None else ""
    return f"{task}/{request.style.label_mode}/{moved}/{shown}{kept}"


def select_cases(records, per_kind: int) -> list[tuple[str, str, RenderRequest]]:
    """Up to ``per_kind`` requests of each :func:`kind`, spread over the records, plus copies of
    some with non-default styles (overlapping labels, 3 bands, supersampling 3, debug ids)."""
    by_kind: dict[str, list] = {}
    for _, task, pdb_id, request in records:
        by_kind.setdefault(kind(task, request), []).append((pdb_id, task, request))
    cases = []
    for name in sorted(by_kind):
        group = by_kind[name]
        step = max(1, len(group) // per_kind)
        cases += group[::step][:per_kind]
    extra = []
    styles = (
        Style(label_placement="overlap"),
        Style(stick_bands=3, supersample=3),
        Style(stick_bands=1, label_mode="none"),
        Style(debug_ids=True),
    )
    for style, (pdb_id, task, request) in zip(styles, cases[:: max(1, len(cases) // 4)]):
        extra.append((pdb_id, f"{task}+style", _with_style(request, style)))
    return cases + extra


def _with_style(request: RenderRequest, style: Style) -> RenderRequest:
    return dataclasses.replace(request, style=style)


def _runs(atoms) -> list[list[int]]:
    """Atom indices as ``[start, stop)`` runs of consecutive values."""
    runs: list[list[int]] = []
    for i in atoms:
        if runs and runs[-1][1] == i:
            runs[-1][1] += 1
        else:
            runs.append([i, i + 1])
    return runs


def _unruns(runs) -> tuple[int, ...]:
    return tuple(i for start, stop in runs for i in range(start, stop))


def request_to_json(request: RenderRequest) -> dict:
    return {
        "atoms": _runs(request.atoms),
        "camera": dict(request.camera.__dict__),
        "groups": [
            [
                _runs(subset),
                [
                    [op.verb, op.axis, op.distance if isinstance(op, Move) else op.angle]
                    for op in ops
                ],
            ]
            for subset, ops in request.groups
        ],
        "view": request.view,
        "style": dict(request.style.__dict__),
        "origin": None if request.origin is None else list(request.origin),
        **({} if request.reference is None else {"reference": request_to_json(request.reference)}),
    }


def request_from_json(data: dict) -> RenderRequest:
    verbs = {"move": Move, "roll": Roll}
    return RenderRequest(
        atoms=_unruns(data["atoms"]),
        camera=Camera(**data["camera"]),
        groups=tuple(
            (_unruns(subset), tuple(verbs[verb](axis, value) for verb, axis, value in ops))
            for subset, ops in data["groups"]
        ),
        view=data["view"],
        style=Style(**data["style"]),
        origin=None if data["origin"] is None else tuple(data["origin"]),
        reference=request_from_json(data["reference"]) if data.get("reference") else None,
    )


def pixel_digest(pixels) -> str:
    """SHA-256 of decoded pixels (an image or an array; its shape is part of the digest)."""
    array = np.ascontiguousarray(np.asarray(pixels), dtype=np.uint8)
    return hashlib.sha256(f"{array.shape}\n".encode() + array.tobytes()).hexdigest()


def snapshot(ids=DEFAULT_IDS, per_kind: int = 6) -> dict:
    """The pixel snapshot of the selected requests of ``ids``, rendered with this code."""
    from importlib.metadata import version

    from misi_bench.builder.scene.raster import render_image

    records, annotations = build_requests(ids)
    cases = []
    for pdb_id, task, request in select_cases(records, per_kind):
        image = render_image(annotations.get(pdb_id).complex, request)
        cases.append(
            {
                "pdb_id": pdb_id,
                "task": task,
                "request": request_to_json(request),
                "sha256": pixel_digest(image),
            }
        )
    sheet = _sheet_pixels(annotations.get(SHEET_ID).complex)
    return {
        "render_version": RENDER_VERSION,
        "pillow": version("pillow"),
        "cases": cases,
        "sheet": {"pdb_id": SHEET_ID, "size": SHEET_SIZE, "sha256": pixel_digest(sheet)},
    }


def _sheet_pixels(complex_) -> np.ndarray:
    """The decoded contact sheet of a complex's six views at :data:`SHEET_SIZE` px."""
    from misi_bench.builder.checks.audit_checks import decode
    from misi_bench.builder.scene.sheet import contact_sheet

    return decode(contact_sheet(complex_, size=SHEET_SIZE))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--ids", default=",".join(DEFAULT_IDS))
    parser.add_argument("--per-kind", type=int, default=6)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    data = snapshot(tuple(args.ids.split(",")), args.per_kind)
    Path(args.out).write_text(json.dumps(data, indent=1) + "\n")
    print(f"{len(data['cases'])} cases written to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
