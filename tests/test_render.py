"""Tests of the renderer (builder/scene) on real complexes: the picture must show exactly the geometry."""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path

import numpy as np
import pytest
from misi_bench.builder.core.errors import RenderError
from misi_bench.builder.operations.language import Move, Roll
from misi_bench.builder.operations.transforms import VIEW_NAMES
from misi_bench.builder.scene import labels, projection, requests, shading
from misi_bench.builder.scene.cache import RenderCache, render_png
from misi_bench.builder.scene.camera import Camera, fit_camera
from misi_bench.builder.scene.requests import RenderRequest, Style
from misi_bench.builder.scene.sheet import contact_sheet
from PIL import Image


@pytest.fixture(scope="module")
def complexes():
    """Two real embedded complexes: 1A28 (progesterone receptor) and 1HVR (HIV-1 protease)."""
    from misi_bench.builder.chemistry.samples import sample_refs
    from misi_bench.builder.chemistry.structure import load_complex

    refs = {r.pdb_id: r for r in sample_refs()}
    return [load_complex(refs["1a28"]), load_complex(refs["1hvr"])]


@pytest.fixture(scope="module")
def cx(complexes):
    return complexes[0]


def test_origin_frames_a_sub_scene_centrally(cx):
    """A residue + ligand sub-scene with its own origin and camera lands in the image centre."""
    residue = np.flatnonzero(cx.residue_index == 0)
    atoms = tuple(sorted(residue.tolist() + cx.ligand_indices.tolist()))
    sub = cx.coords[list(atoms)]
    origin = (sub.min(0) + sub.max(0)) / 2
    camera = fit_camera(sub - origin)
    request = RenderRequest(atoms=atoms, camera=camera, origin=tuple(origin))
    uv, _, visible = projection.projected_atoms(cx, request)
    assert visible.all()
    lo, hi = uv.min(0), uv.max(0)
    np.testing.assert_allclose((lo + hi) / 2, [256, 256], atol=60)
    default = projection.projected_atoms(cx, RenderRequest(atoms=atoms, camera=camera))[0]
    assert not np.allclose(default, uv)
    with pytest.raises(RenderError):
        RenderRequest(atoms=atoms, camera=camera, origin=(0.0, float("nan"), 1.0))


def _request(c, **kw) -> RenderRequest:
    atoms = kw.pop("atoms", tuple(range(c.n_atoms)))
    camera = kw.pop("camera", fit_camera(c.screen_coords))
    return RenderRequest(atoms=tuple(atoms), camera=camera, **kw)


def _decode(png: bytes) -> np.ndarray:
    image = Image.open(io.BytesIO(png))
    assert image.format == "PNG"
    return np.asarray(image.convert("RGB"))


def _centroids(pixels: np.ndarray) -> dict[int, tuple[float, float, int]]:
    """Pixel centroid (u, v) of every id colour in a debug image, with its pixel count."""
    ids = shading.decode_id(pixels)
    rows, cols = np.nonzero(ids >= 0)
    found = ids[rows, cols]
    out = {}
    order = np.argsort(found, kind="stable")
    found, rows, cols = found[order], rows[order], cols[order]
    starts = np.flatnonzero(np.r_[True, found[1:] != found[:-1]])
    ends = np.r_[starts[1:], found.size]
    for s, e in zip(starts, ends):
        out[int(found[s])] = (
            float(cols[s:e].mean() + 0.5),
            float(rows[s:e].mean() + 0.5),
            int(e - s),
        )
    return out


def _full_disc_pixels(style: Style) -> int:
    sprite = shading.sphere_sprite(
        shading.id_colour(0), int(round(style.debug_radius_px * 4)), 0, 0.0, True
    )
    return int((np.asarray(sprite.image)[..., 3] > 0).sum())


# ------------------------------------------------------------------------------ the contract


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_picture_matches_geometry(complexes, seed):
    """Each unoccluded atom's disc in the debug render is centred on Camera.project of its scene
    coordinates (within 1 px), for random operations, groups and views."""
    rng = np.random.default_rng(seed)
    style = Style(debug_ids=True, label_mode="none")
    full = _full_disc_pixels(style)
    for c in complexes:
        ligand = tuple(int(i) for i in c.ligand_indices)
        pocket = tuple(int(i) for i in c.pocket_indices)
        ops_a = (
            Roll(str(rng.choice(list("xyz"))), int(rng.integers(-6, 7)) * 15 or 30),
            Move(str(rng.choice(list("xy"))), int(rng.integers(1, 5))),
        )
        ops_b = (Roll(str(rng.choice(list("xyz"))), 45), Move("x", -3))
        view = str(rng.choice(VIEW_NAMES))
        request = _request(c, groups=((ligand, ops_a), (pocket, ops_b)), view=view, style=style)
        coords = projection.scene_coordinates(c, request)
        expected = request.camera.project(coords)
        found = _centroids(_decode(render_png(c, request)))
        checked = 0
        for k, (u, v, count) in found.items():
            if count != full:
                continue  # partly hidden by a nearer atom, or cut by the image border
            assert abs(u - expected[k, 0]) <= 1.0 and abs(v - expected[k, 1]) <= 1.0, (
                c.pdb_id,
                k,
                (u, v),
                expected[k],
            )
            checked += 1
        assert checked >= 0.5 * c.n_atoms, (
            f"{c.pdb_id}: only {checked} of {c.n_atoms} atoms fully visible"
        )


def test_scene_coordinates_follow_pose_semantics(cx):
    """Groups move rigidly about their own bounding-box centre; the view rotates the scene."""
    ligand = tuple(int(i) for i in cx.ligand_indices)
    request = _request(cx, groups=((ligand, (Roll("z", 90),)),), view="front")
    coords = projection.scene_coordinates(cx, request)
    screen = cx.screen_coords
    centre = (screen[list(ligand)].min(0) + screen[list(ligand)].max(0)) / 2
    moved = coords[list(ligand)]
    rel = screen[list(ligand)] - centre
    np.testing.assert_allclose(
        moved - centre, np.stack([-rel[:, 1], rel[:, 0], rel[:, 2]], 1), atol=1e-9
    )
    pocket = cx.pocket_indices
    np.testing.assert_allclose(coords[pocket], screen[pocket])
    left = projection.scene_coordinates(cx, _request(cx, view="left"))
    # left = roll y +90: (x, y, z) -> (z, y, -x)
    np.testing.assert_allclose(
        left, np.stack([screen[:, 2], screen[:, 1], -screen[:, 0]], 1), atol=1e-9
    )


def test_move_z_enlarges_by_perspective_ratio(cx):
    style = Style(debug_ids=True, label_mode="none")
    ligand = tuple(int(i) for i in cx.ligand_indices)
    camera = fit_camera(cx.screen_coords)
    base = _request(cx, atoms=ligand, camera=camera, style=style)
    near = _request(
        cx, atoms=ligand, camera=camera, style=style, groups=((ligand, (Move("z", 30),)),)
    )
    spans = []
    for req in (base, near):
        found = _centroids(_decode(render_png(cx, req)))
        uv = np.array([[u, v] for u, v, _ in found.values()])
        spans.append(np.ptp(uv, axis=0).max())
    coords = cx.screen_coords[list(ligand)]
    z = (coords[:, 2].min() + coords[:, 2].max()) / 2
    predicted = (camera.distance - z) / (camera.distance - z - 30)
    assert predicted > 1.3
    assert spans[1] / spans[0] == pytest.approx(predicted, rel=0.05)


def test_clipped_atoms_do_not_crash(cx):
    camera = fit_camera(cx.screen_coords)
    everything = tuple(range(cx.n_atoms))
    # Whole scene behind the camera: a black picture, no error.
    behind = _request(
        cx, camera=camera, groups=((everything, (Move("z", int(camera.distance) + 40),)),)
    )
    pixels = _decode(render_png(cx, behind))
    assert pixels.max() == 0
    # Camera inside the scene: the part in front is drawn, the rest clipped.
    inside = _request(cx, camera=camera, groups=((everything, (Move("z", int(camera.distance)),)),))
    uv, depth, visible = projection.projected_atoms(cx, inside)
    assert (depth <= camera.near).any() and (depth > camera.near).any()
    assert np.isnan(uv[depth <= camera.near]).all()
    pixels = _decode(render_png(cx, inside))
    assert pixels.shape == (512, 512, 3)
    assert pixels.max() > 0


# ------------------------------------------------------------------------------ the picture


def test_png_size_and_black_corners(cx):
    pixels = _decode(render_png(cx, _request(cx)))
    assert pixels.shape == (512, 512, 3)
    for y, x in ((0, 0), (0, 511), (511, 0), (511, 511)):
        assert tuple(pixels[y, x]) == (0, 0, 0)
    assert (pixels.reshape(-1, 3).max(1) > 0).mean() > 0.05  # something is drawn


def test_camera_size_sets_image_size(cx):
    request = _request(cx, camera=fit_camera(cx.screen_coords, size=300))
    assert Image.open(io.BytesIO(render_png(cx, request))).size == (300, 300)


def _colour_ok(pixel: np.ndarray, reference: tuple[int, int, int]) -> bool:
    """Shading and fog scale a colour; the specular highlight adds a little white."""
    p = pixel.astype(float)
    r = np.asarray(reference, dtype=float)
    if p.max() < 20:
        return False
    return float(p @ r / (np.linalg.norm(p) * np.linalg.norm(r))) > 0.97


def _pixels_at_atoms(c, request, rows):
    pixels = _decode(render_png(c, request))
    uv = request.camera.project(projection.scene_coordinates(c, request))
    return [pixels[int(uv[k, 1]), int(uv[k, 0])] for k in rows]


@pytest.mark.parametrize("parity", [0, 1])
def test_pocket_carbons_alternate_purple_orange(cx, parity):
    residue = next(
        r for r in range(len(cx.residues)) if r % 2 == parity and len(cx.residue_atoms(r)) >= 5
    )
    atoms = tuple(int(i) for i in cx.residue_atoms(residue))
    request = _request(cx, atoms=atoms, style=Style(label_mode="none"))
    carbons = [k for k, i in enumerate(atoms) if cx.elements[i] == "C"]
    oxygens = [k for k, i in enumerate(atoms) if cx.elements[i] == "O"]
    expected = requests.POCKET_CARBONS[parity]
    hits = [_colour_ok(p, expected) for p in _pixels_at_atoms(cx, request, carbons)]
    assert sum(hits) >= 0.7 * len(hits)
    assert oxygens
    hits = [
        _colour_ok(p, requests.ELEMENT_COLOURS["O"]) for p in _pixels_at_atoms(cx, request, oxygens)
    ]
    assert sum(hits) >= 0.7 * len(hits)


def test_ligand_carbons_grey(cx):
    atoms = tuple(int(i) for i in cx.ligand_indices)
    request = _request(cx, atoms=atoms, style=Style(label_mode="none"))
    carbons = [k for k, i in enumerate(atoms) if cx.elements[i] == "C"]
    pixels = _pixels_at_atoms(cx, request, carbons)
    grey = [p.max() > 40 and int(p.max()) - int(p.min()) <= 12 for p in pixels]
    assert sum(grey) >= 0.7 * len(grey)


def test_labels_are_drawn(cx):
    plain = _decode(render_png(cx, _request(cx, style=Style(label_mode="none"))))
    labelled = _decode(render_png(cx, _request(cx, style=Style(label_mode="standard"))))
    residue = _decode(render_png(cx, _request(cx, style=Style(label_mode="residue_atoms"))))
    assert (plain != labelled).any(axis=2).mean() > 0.01
    assert (labelled != residue).any(axis=2).mean() > 0.005
    # Labels are white-ish text: the labelled picture has near-white pixels the plain one lacks.
    assert (labelled.min(axis=2) > 200).sum() > (plain.min(axis=2) > 200).sum() + 200


def test_deterministic_bytes(complexes):
    for c in complexes:
        request = _request(
            c,
            groups=((tuple(int(i) for i in c.ligand_indices), (Roll("x", 30), Move("y", 2))),),
            view="top",
        )
        first = render_png(c, request)
        shading.sphere_sprite.cache_clear()
        labels._label_images.cache_clear()
        second = render_png(c, dataclasses.replace(request))
        assert first == second
    assert render_png(complexes[0], _request(complexes[0])) != render_png(
        complexes[0], _request(complexes[0], view="back")
    )


def test_request_is_hashable_and_normalised(cx):
    a = _request(cx, atoms=np.arange(10))
    b = _request(cx, atoms=list(range(10)))
    assert a == b and hash(a) == hash(b)
    assert all(type(i) is int for i in a.atoms)


def test_cache_renders_once(cx):
    cache = RenderCache()
    request = _request(cx, view="left")
    first = cache.get(cx, request)
    second = cache.get(cx, _request(cx, view="left"))
    assert first is second
    assert (cache.hits, cache.misses) == (1, 1)
    cache.get(cx, _request(cx, view="right"))
    assert (cache.hits, cache.misses) == (1, 2) and len(cache) == 2


def test_cache_is_bounded(cx):
    cache = RenderCache(max_bytes=1)
    cache.get(cx, _request(cx, view="left"))
    cache.get(cx, _request(cx, view="right"))
    assert len(cache) == 1


def test_contact_sheet(cx):
    png = contact_sheet(cx, size=128)
    image = Image.open(io.BytesIO(png))
    assert image.format == "PNG"
    caption = max(14, 128 // 16)
    assert image.size == (3 * 128, 2 * (128 + caption))
    pixels = np.asarray(image.convert("RGB"))
    # Every tile shows something, and each caption strip carries text.
    for n in range(6):
        x, y = (n % 3) * 128, (n // 3) * (128 + caption)
        tile = pixels[y + caption + 2 : y + caption + 126, x + 2 : x + 126]
        assert tile.max() > 0
        assert pixels[y : y + caption, x : x + 128].max() > 200


# ------------------------------------------------------------------------------ edge cases


def test_empty_selection_raises(cx):
    with pytest.raises(RenderError, match="empty"):
        render_png(cx, _request(cx, atoms=()))


@pytest.mark.parametrize("size", [0, 8, 100000, -5])
def test_absurd_sizes_raise(cx, size):
    """The camera carries the image size and checks its range once (core.check_image_size)."""
    with pytest.raises(RenderError, match="size"):
        Camera(distance=50.0, size=size)
    with pytest.raises(RenderError, match="size"):
        fit_camera(cx.screen_coords, size=size)
    assert not hasattr(Style(), "size")


def test_bad_requests_raise(cx):
    with pytest.raises(RenderError, match="out of range"):
        render_png(cx, _request(cx, atoms=(0, cx.n_atoms)))
    with pytest.raises(RenderError, match="repeat"):
        render_png(cx, _request(cx, atoms=(0, 0)))
    with pytest.raises(RenderError, match="view"):
        _request(cx, view="sideways")
    with pytest.raises(RenderError, match="more than one group"):
        render_png(cx, _request(cx, groups=(((0, 1), (Move("x", 1),)), ((1, 2), (Move("y", 1),)))))
    with pytest.raises(RenderError, match="label_mode"):
        render_png(cx, _request(cx, style=Style(label_mode="fancy")))


def test_unknown_element_uses_fallback_colour(cx):
    ligand = cx.ligand_indices
    elements = cx.elements.astype(object).copy()
    elements[ligand] = "Xx"
    odd = dataclasses.replace(cx, elements=np.array(elements.tolist()))
    atoms = tuple(int(i) for i in ligand)
    request = _request(odd, atoms=atoms, style=Style(label_mode="none"))
    pixels = _pixels_at_atoms(odd, request, range(len(atoms)))
    hits = [_colour_ok(p, requests.UNKNOWN_COLOUR) for p in pixels]
    assert sum(hits) >= 0.7 * len(hits)


def test_single_atom_scene(cx):
    i = int(cx.ligand_indices[0])
    camera = fit_camera(cx.screen_coords[[i]])
    request = RenderRequest(atoms=(i,), camera=camera)
    pixels = _decode(render_png(cx, request))
    u, v = request.camera.project(projection.scene_coordinates(cx, request))[0]
    assert pixels[int(v), int(u)].max() > 0
    assert pixels[0, 0].max() == 0


@pytest.mark.parametrize(
    "module",
    [
        "misi_bench.builder.tasks.base",
        "misi_bench.builder.scene.requests",
        "misi_bench.builder.scene.projection",
    ],
)
def test_request_types_load_without_pillow(module):
    """Task generators need only the request types: importing them must not load Pillow (a fresh
    interpreter, so nothing imported by other tests counts)."""
    import subprocess
    import sys

    code = (
        f"import sys, importlib; importlib.import_module({module!r}); print('PIL' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    # the rasteriser, by contrast, does load it (so the check above can fail)
    code = "import sys; import misi_bench.builder.scene.raster; print('PIL' in sys.modules)"
    assert (
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout.strip()
        == "True"
    )


def test_drawing_only_the_rows_in_use_gives_the_whole_canvas_pixels(complexes, monkeypatch):
    """``render_rows`` draws only the rows that hold primitives and labels; forcing it to draw
    the whole canvas (the plain painter's algorithm) gives the same pixels, for ligand-only
    views moved to the top and bottom edges (labels clipped there), a residue close-up and a
    whole pocket."""
    from misi_bench.builder.scene import raster

    cases = []
    for c in complexes:
        ligand = tuple(c.ligand_indices.tolist())
        camera = fit_camera(c.screen_coords)
        for ops in (
            (Move("y", 9), Roll("z", 30)),
            (Move("y", -12), Roll("x", -45)),
            (Roll("y", 60),),
        ):
            cases.append((c, _request(c, atoms=ligand, camera=camera, groups=((ligand, ops),))))
        cases.append((c, _request(c, view="top")))
        residue = np.flatnonzero(c.residue_index == 1)
        atoms = tuple(sorted(residue.tolist() + list(ligand)))
        sub = c.coords[list(atoms)]
        origin = (sub.min(0) + sub.max(0)) / 2
        cases.append(
            (
                c,
                RenderRequest(
                    atoms=atoms,
                    camera=fit_camera(sub - origin),
                    origin=tuple(origin),
                    style=Style(label_mode="residue_atoms"),
                ),
            )
        )
    rows = [np.asarray(raster.render_image(c, r)) for c, r in cases]
    parts = [raster.render_rows(c, r) for c, r in cases]
    monkeypatch.setattr(raster, "content_rows", lambda ys, sprites, polys, limit, ss: (0, limit))
    whole = [np.asarray(raster.render_image(c, r)) for c, r in cases]
    for (_, r), a, b, (part, top) in zip(cases, rows, whole, parts):
        assert np.array_equal(a, b), r.view
        assert np.array_equal(np.asarray(part), a[top : top + part.size[1]])
        assert not a[:top].any() and not a[top + part.size[1] :].any()
    assert any(part.size[1] < 256 for part, _ in parts)  # the ligand-only views use few rows


def test_repeated_selections_share_their_static_part(cx):
    """Requests that differ only in operations (answer-space candidates) reuse the atoms,
    colours and bonds of their selection, and still draw their own pose."""
    from misi_bench.builder.scene import raster

    ligand = tuple(cx.ligand_indices.tolist())
    camera = fit_camera(cx.screen_coords)
    a = _request(cx, atoms=ligand, camera=camera, groups=((ligand, (Roll("z", 15),)),))
    b = _request(cx, atoms=ligand, camera=camera, groups=((ligand, (Roll("z", 30),)),))
    assert raster._static(cx, a) is raster._static(cx, b)
    raster._STATIC.clear()
    first = np.asarray(raster.render_image(cx, b))
    raster.render_image(cx, a)
    assert np.array_equal(np.asarray(raster.render_image(cx, b)), first)
    assert not np.array_equal(np.asarray(raster.render_image(cx, a)), first)


PIXEL_SNAPSHOT = Path(__file__).parent / "snapshots" / "render_pixels.json"


def test_real_requests_keep_their_pixels():
    """The decoded pixels of 100 real requests of a samples build (every task's kinds of
    picture: whole pockets, ligand-only and docking views with moved groups, T4 residue
    close-ups, non-default styles) and of a contact sheet equal the snapshot recorded with the
    renderer before its speed-ups (``scripts/render_cases.py``; re-record it when
    RENDER_VERSION changes, or when a Pillow upgrade changes glyphs or polygon filling)."""
    from misi_bench.builder.chemistry.samples import sample_refs
    from misi_bench.builder.chemistry.structure import load_complex
    from misi_bench.builder.scene.raster import render_image

    from scripts.render_cases import (
        _sheet_pixels,
        pixel_digest,
        request_from_json,
    )

    data = json.loads(PIXEL_SNAPSHOT.read_text())
    assert data["render_version"] == requests.RENDER_VERSION, "re-record the pixel snapshot"
    refs = {r.pdb_id: r for r in sample_refs()}
    loaded = {p: load_complex(refs[p]) for p in {c["pdb_id"] for c in data["cases"]}}
    differ = [
        (n, case["task"])
        for n, case in enumerate(data["cases"])
        if pixel_digest(render_image(loaded[case["pdb_id"]], request_from_json(case["request"])))
        != case["sha256"]
    ]
    assert not differ, f"pictures changed (Pillow {data['pillow']} recorded them): {differ}"
    sheet = data["sheet"]
    assert pixel_digest(_sheet_pixels(loaded[sheet["pdb_id"]])) == sheet["sha256"]


def test_premultiplied_sprites_blend_as_straight_ones_within_one_level():
    """``shading.make_sprite`` stores a sprite premultiplied (RENDER_VERSION 7): pasted with
    itself as the mask it gives exactly the straight-alpha blend on black and where it is opaque,
    and at most one level from it over anything else; every alpha and colour value occurs."""
    rng = np.random.default_rng(7)
    rgba = rng.integers(0, 256, size=(64, 64, 4), dtype=np.uint8)
    rgba[0, :, 3], rgba[1, :, 3] = 255, 0
    rgba[2:6, :, 3] = np.arange(256, dtype=np.uint8).reshape(4, 64)
    sprite = shading.make_sprite(rgba, 32.0)
    straight = Image.fromarray(rgba, "RGBA")
    for below in (np.zeros((64, 64, 3), np.uint8), rng.integers(0, 256, (64, 64, 3), np.uint8)):
        ours, theirs = Image.fromarray(below, "RGB"), Image.fromarray(below, "RGB")
        ours.paste(sprite.image, (0, 0), sprite.image)
        theirs.paste(straight, (0, 0), straight)
        diff = np.abs(np.asarray(ours, np.int16) - np.asarray(theirs, np.int16))
        assert diff.max() <= (0 if not below.any() else 1)
        assert not diff[rgba[..., 3] == 255].any() and not diff[rgba[..., 3] == 0].any()
    assert sprite.image.mode == "RGBa" and (sprite.width, sprite.height) == (64, 64)
