"""The ``leader`` label order reads the picture, never 3D distances or H-bonds (issue 53 item 1,
RENDER_VERSION 8), on the densest real sample (1HVR): giving the label code any other 3D
distances to the ligand changes no label of a ``leader`` picture, and does change the legacy
``avoid`` placement, which still orders by them."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from misi_bench.builder.chemistry.samples import sample_refs
from misi_bench.builder.chemistry.structure import load_complex
from misi_bench.builder.scene import labels, layout, raster
from misi_bench.builder.tasks.base import annotate, request


@pytest.fixture(scope="module")
def dense():
    ref = next(r for r in sample_refs() if r.pdb_id == "1hvr")
    cx = load_complex(ref)
    return cx, annotate(cx, hbonds="chimerax")


def _requests(cx, ann, placement):
    """Pocket pictures of three views and a T4-style close-up (one residue's atoms named)."""
    residue = int(cx.residue_index[ann.hbonds[0].protein_atom])
    close = tuple(sorted(cx.residue_atoms(residue).tolist() + cx.ligand_indices.tolist()))
    reqs = [request(ann, view) for view in ("front", "left", "top")]
    reqs.append(request(ann, "front", atoms=close, label_mode="residue_atoms"))
    return [
        dataclasses.replace(r, style=dataclasses.replace(r.style, label_placement=placement))
        for r in reqs
    ]


def _layouts(cx, reqs):
    raster._STATIC.clear()
    raster._LAYOUTS.clear()
    return [raster.label_layout(cx, r) for r in reqs]


def _scrambled(monkeypatch):
    """3D distances to the ligand replaced by a seeded random permutation of themselves."""
    real = labels._ligand_distance

    def scrambled(complex_, atoms, rows):
        d = real(complex_, atoms, rows)
        return np.random.default_rng(7).permutation(d)

    monkeypatch.setattr(labels, "_ligand_distance", scrambled)


def test_leader_order_ignores_3d_distances(dense, monkeypatch):
    cx, ann = dense
    reqs = _requests(cx, ann, "leader")
    before = _layouts(cx, reqs)
    _scrambled(monkeypatch)
    after = _layouts(cx, reqs)
    raster._STATIC.clear()
    raster._LAYOUTS.clear()
    assert before == after


def test_the_legacy_avoid_order_reads_them(dense, monkeypatch):
    cx, ann = dense
    reqs = _requests(cx, ann, "avoid")
    before = _layouts(cx, reqs)
    _scrambled(monkeypatch)
    after = _layouts(cx, reqs)
    raster._STATIC.clear()
    raster._LAYOUTS.clear()
    assert before != after


def test_the_reach_is_measured_in_the_picture(dense):
    """The reach in px is BOND_REACH in the picture's own scale: it grows with the drawn atoms."""
    cx, ann = dense
    req = request(ann, "front")
    f = raster._frame(cx, req)
    la = labels.label_atoms(cx, np.asarray(req.atoms))
    radius = raster._bonds_and_radii(cx, f, req.style)[1] / (4.0 * f.ss)
    u, v = f.u / f.ss, f.v / f.ss
    reach, distance = layout.picture_reach(la, u, v, f.alive, radius, req.style, f.size)
    reach2, _ = layout.picture_reach(la, u, v, f.alive, 2 * radius, req.style, f.size)
    assert reach > 0 and reach2 == pytest.approx(2 * reach)
    lig = np.flatnonzero(la.ligand & f.alive)
    assert np.allclose(distance(u[lig], v[lig]), 0.0)
