"""Batched rendering of answer-space candidates (``scene.batch``): on real questions of a real
build, every band of ``render_stack`` holds exactly the picture ``raster`` draws one by one, its
block means are those of the one-by-one picture, and the audit's margins do not change."""

from __future__ import annotations

import numpy as np
import pytest
from misi_bench.builder.checks import audit_margins
from misi_bench.builder.checks.audit import _Auditor, audit_dataset, select_rows
from misi_bench.builder.checks.audit_checks import (
    block_side,
    image_block_means,
    image_distance,
    sheet_block_means,
)
from misi_bench.builder.core.errors import RenderError
from misi_bench.builder.operations.language import Move
from misi_bench.builder.scene.batch import render_stack
from misi_bench.builder.scene.raster import render_image, render_rows
from misi_bench.builder.scene.requests import Style
from misi_bench.builder.store.manifest import read_manifest
from misi_bench.builder.tasks import replay


def _space(folder, task: str, k: int = 0):
    auditor = _Auditor(read_manifest(folder), None)
    row = list(select_rows(folder, task, "test", None, None))[k]
    space = replay.answer_space(row, replay.question_images(row, auditor.load), auditor.load)
    return auditor, auditor.load(row["pdb_id"]).complex, [space.gold, *space.others]


def _pictures(sheets, count: int, size: int) -> list[np.ndarray]:
    """The full pictures of a stack's bands."""
    out = [None] * count
    for sheet in sheets:
        pixels = np.asarray(sheet.image)
        for k, row, top, rows in sheet.bands:
            full = np.zeros((size, size, 3), dtype=np.uint8)
            band = pixels[row : row + rows][: size - top]
            full[top : top + len(band), sheet.left : sheet.left + pixels.shape[1]] = band
            out[k] = full
    return out


@pytest.mark.parametrize("task", ["docking", "zooming", "translation"])
def test_stack_pictures_and_means_equal_one_by_one(data_dir, task):
    """T7: 252 ligand poses (labels placed over all poses at once); T3: whole-pocket views
    (labels pose by pose, drawings that reach the picture's edges on sheets of their own);
    T3 and T1 candidates keep the front view's label offsets (RENDER_VERSION 9), T1's as its
    translated layout."""
    _, cx, cands = _space(data_dir, task)
    requests = [c.request for c in cands]
    size = int(requests[0].camera.size)
    sheets = render_stack(cx, requests, align=block_side(size))
    assert sorted(k for s in sheets for k, *_ in s.bands) == list(range(len(requests)))
    pictures = _pictures(sheets, len(requests), size)
    means, rows = sheet_block_means(sheets, len(requests), size)
    for k, request in enumerate(requests):
        assert np.array_equal(pictures[k], np.asarray(render_image(cx, request))), k
        want = image_block_means(*render_rows(cx, request), height=size)
        assert np.array_equal(means[k], want), k
        outside = np.ones(len(want), dtype=bool)
        outside[rows[k, 0] : rows[k, 1]] = False
        assert not want[outside].any()
    if task == "docking":
        assert len(requests) == 252 and len(sheets) < len(requests) / 2


def test_stack_falls_back_for_poses_it_cannot_batch(data_dir):
    """A pose with atoms behind the camera is drawn one by one and pasted into its band; debug
    pictures are all drawn one by one; requests of different scenes are refused."""
    _, cx, cands = _space(data_dir, "docking")
    request = cands[0].request
    (members, ops), *rest = request.groups
    behind = type(request)(
        request.atoms,
        request.camera,
        ((members, ops + (Move("z", 10_000),)), *rest),
        request.view,
        request.style,
        request.origin,
    )
    requests = [c.request for c in cands[:9]] + [behind]
    size = int(request.camera.size)
    pictures = _pictures(render_stack(cx, requests, align=8), len(requests), size)
    for k, req in enumerate(requests):
        assert np.array_equal(pictures[k], np.asarray(render_image(cx, req))), k
    debug = [
        type(r)(r.atoms, r.camera, r.groups, r.view, Style(debug_ids=True), r.origin)
        for r in requests[:3]
    ]
    pictures = _pictures(render_stack(cx, debug), 3, size)
    for k, req in enumerate(debug):
        assert np.array_equal(pictures[k], np.asarray(render_image(cx, req))), k
    with pytest.raises(RenderError, match="differ in more than their operations"):
        render_stack(cx, [request, debug[0]])


def test_margins_equal_one_by_one(data_dir, monkeypatch):
    """The audit's margins with batched candidates equal those of the one-by-one path (image
    distance to each candidate's own picture), question by question."""
    drawn = []
    monkeypatch.setattr(
        audit_margins, "render_stack", lambda *a, **k: drawn.append(1) or render_stack(*a, **k)
    )
    for task in ("docking", "rotation"):
        auditor, cx, cands = _space(data_dir, task)
        gold = auditor.render_means(cands[0].pdb_id, cands[0].request)
        want = min(
            image_distance(gold, auditor.render_means(c.pdb_id, c.request)) for c in cands[1:]
        )
        auditor.means.clear()
        drawn.clear()
        means, rows = auditor.candidate_means(cands)
        assert drawn, "the candidates were not batched"
        got = audit_margins.image_distances(means[0], means[1:], rows[1:])
        assert int(got.min()) == want
        assert np.array_equal(means[0], gold)


def test_audit_report_unchanged_by_batching(data_dir, monkeypatch):
    kwargs = dict(configs=["docking", "translation"], split="test", limit=2, workers=1)
    batched = audit_dataset(data_dir, **kwargs).summary()
    monkeypatch.setattr(audit_margins, "BATCH_MIN", 10**9)
    one_by_one = audit_dataset(data_dir, **kwargs).summary()
    batched.pop("seconds"), one_by_one.pop("seconds")
    assert batched == one_by_one
    assert batched["tasks"]["docking"]["checked_unique"] == 2


def test_fast_png_reader_gives_pillows_pixels(data_dir):
    """Our writer's PNGs (the build's images) read to Pillow's pixels; other PNGs (Pillow's own
    encoder, a damaged file) are left to Pillow."""
    import io

    from misi_bench.builder.scene.png_read import read_png
    from misi_bench.builder.store.parquet import iter_config_rows
    from PIL import Image

    row = next(iter_config_rows(data_dir, "docking", "test"))
    for img in row["images"]:
        with Image.open(io.BytesIO(img["bytes"])) as image:
            want = np.asarray(image.convert("RGB"))
        assert np.array_equal(read_png(img["bytes"]), want)
        buf = io.BytesIO()
        Image.fromarray(want).save(buf, format="PNG")
        assert read_png(buf.getvalue()) is None
    damaged = bytearray(row["images"][0]["bytes"])
    damaged[100] ^= 1
    assert read_png(bytes(damaged)) is None
