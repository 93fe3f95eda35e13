"""The ``leader`` label layout (RENDER_VERSION 5, 6) on real complexes: no label over another or
over the ligand, answer-bearing labels legible by the audit's rule, chains named where a picture
shows two chains and in a caption where it shows one, T7's ligand close-ups; and the free-space
search against brute force."""

from __future__ import annotations

import numpy as np
import pytest
from misi_bench.builder.checks.audit_checks import clear_boxes, legible_keys
from misi_bench.builder.chemistry.samples import sample_refs
from misi_bench.builder.chemistry.structure import load_complex
from misi_bench.builder.dataset.card_examples import tile_caption
from misi_bench.builder.operations.language import Roll
from misi_bench.builder.scene.free_space import CELL, FreeSpace
from misi_bench.builder.scene.labels import PlacedLabel
from misi_bench.builder.scene.layout import leader_end, leader_xy
from misi_bench.builder.scene.projection import projected_atoms
from misi_bench.builder.scene.raster import label_layout, ligand_mask, render_image
from misi_bench.builder.store.sources import discover
from misi_bench.builder.tasks import docking, interaction_location, pocket_ligand
from misi_bench.builder.tasks.base import annotate, request, six_views
from misi_bench.builder.tasks.residue_ligand import residue_images

from scripts.fixtures import fixture_root


def _interior(lb):
    return (lb.x + 1, lb.y + 1, lb.x + lb.width - 1, lb.y + lb.height - 1)


def _meets(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _load(pdb_id: str):
    refs = {r.pdb_id: r for r in sample_refs()}
    cx = load_complex(refs[pdb_id])
    return cx, annotate(cx)


@pytest.fixture(scope="module")
def dense():
    """1HVR (HIV protease, two chains, and its inhibitor): the densest pocket of the samples."""
    return _load("1hvr")


def test_no_label_over_another_or_over_the_ligand(dense):
    cx, ann = dense
    req = request(ann, "front")
    placed = label_layout(cx, req)
    mask = ligand_mask(cx, req)
    assert mask is not None and mask.sum() > 200
    assert all(lb.free for lb in placed) and len(placed) > 100
    boxes = [_interior(lb) for lb in placed]
    for k, a in enumerate(boxes):
        assert not any(_meets(a, b) for b in boxes[k + 1 :])
        x0, y0, x1, y1 = a
        assert not mask[max(y0, 0) : y1, max(x0, 0) : x1].any()
    moved = [lb for lb in placed if lb.anchor is not None]
    assert moved  # a dense pocket: labels moved into free space, each with a leader line
    for lb in moved:
        line = leader_xy(lb.leader)
        # from its atom to the box pixel nearest to it, passing under the ligand (not drawn there)
        assert line[-1] == leader_end(lb.x, lb.y, lb.width, lb.height, *lb.anchor)
        assert (
            len(line) <= max(abs(line[-1][0] - lb.anchor[0]), abs(line[-1][1] - lb.anchor[1])) + 1
        )
        assert not any(mask[y, x] for x, y in line)
        assert all(0 <= x < req.camera.size and 0 <= y < req.camera.size for x, y in line)
    picture = np.asarray(render_image(cx, req))
    assert set(legible_keys(picture, placed, mask)) == {lb.key for lb in placed}


def test_two_chain_pictures_name_the_chain(dense):
    cx, ann = dense
    texts = [lb.text for lb in label_layout(cx, request(ann, "front")) if lb.key[0] == "residue"]
    assert texts and all(t.split()[-1] in ("A", "B") for t in texts)
    assert {t.split()[-1] for t in texts} == {"A", "B"}
    single, ann1 = _load("1a28")
    assert len({r.chain for r in single.residues}) == 1
    texts1 = [
        lb.text for lb in label_layout(single, request(ann1, "front")) if lb.key[0] == "residue"
    ]
    assert texts1 and all(len(t.split()) == 2 for t in texts1)
    # ... and the one chain is named once, in a caption clear of every label and of the ligand
    req1 = request(ann1, "front")
    placed1 = label_layout(single, req1)
    captions = [lb for lb in placed1 if lb.key[0] == "chain"]
    assert [lb.text for lb in captions] == [f"chain {single.residues[0].chain}"]
    assert not any(lb.key[0] == "chain" for lb in label_layout(cx, request(ann, "front")))
    box = _interior(captions[0])
    assert not any(_meets(box, _interior(lb)) for lb in placed1 if lb is not captions[0])
    picture = np.asarray(render_image(single, req1))
    assert ("chain", -1) in legible_keys(picture, placed1, ligand_mask(single, req1))


def test_every_t9_gold_chain_is_shown_in_every_pocket_picture():
    """A T9 item names its residue's chain: every pocket picture of every sample shows the chains
    of the bonded residues it draws (per residue label, or one caption in a one-chain picture)."""
    checked = 0
    for ref in sample_refs():
        cx = load_complex(ref)
        ann = annotate(cx)
        gold = {int(cx.residue_index[b.protein_atom]) for b in ann.hbonds}
        for spec in six_views(ann)[:2]:
            placed = label_layout(cx, spec.request)
            named = {lb.text.split()[-1] for lb in placed if lb.key[0] == "chain"}
            for lb in placed:
                if lb.key[0] == "residue" and lb.key[1] in gold:
                    chain = cx.residues[lb.key[1]].chain.strip()
                    assert chain in named or lb.text.endswith(f" {chain}"), (ref.pdb_id, lb.text)
                    checked += 1
    assert checked > 50


def _answer_labels_legible(cx, ann) -> tuple[int, int]:
    """(legible in some view, needed) over T9's labels, T8's per bond, and T4's atom names."""
    legible = needed = 0
    seen: set = set()
    for spec in six_views(ann):
        req = spec.request
        seen |= legible_keys(
            np.asarray(render_image(cx, req)), label_layout(cx, req), ligand_mask(cx, req)
        )
    want = pocket_ligand.needed_labels(None, None, ann)
    legible, needed = len(want & seen), len(want)
    for residue in sorted({int(cx.residue_index[b.protein_atom]) for b in ann.hbonds}):
        bonds = [b for b in ann.hbonds if cx.residue_index[b.protein_atom] == residue]
        want4 = {("atom", int(b.protein_atom)) for b in bonds} | {
            ("atom", int(b.ligand_atom)) for b in bonds
        }
        seen4: set = set()
        for spec in residue_images(ann, residue):
            req = spec.request
            seen4 |= legible_keys(
                np.asarray(render_image(cx, req)), label_layout(cx, req), ligand_mask(cx, req)
            )
        legible += len(want4 & seen4)
        needed += len(want4)
    return legible, needed


def test_every_answer_label_legible_in_some_view():
    """T4, T8 and T9 answer labels on dense samples and on held-out complexes (not tuned on)."""
    refs = {r.pdb_id: r for r in sample_refs()}
    chosen = [refs[p] for p in ("1hvr", "1qbs", "1a28")] + discover(str(fixture_root("heldout")))[
        :3
    ]
    legible = needed = 0
    for ref in chosen:
        cx = load_complex(ref)
        got, want = _answer_labels_legible(cx, annotate(cx))
        legible, needed = legible + got, needed + want
    assert needed > 40 and legible == needed


def test_t8_needs_its_bond_labels(dense):
    cx, ann = dense
    bond = ann.hbonds[0]

    class Meta:
        hbond = bond.pocket_text()

    assert interaction_location.needed_labels({}, Meta, ann) == {
        ("residue", int(cx.residue_index[bond.protein_atom])),
        ("atom", int(bond.ligand_atom)),
    }


def test_free_space_finds_the_nearest_free_box():
    """``FreeSpace.nearest`` against a brute-force search over every line and column, with
    boxes taken between the searches (the free columns it keeps between searches must follow
    every take)."""
    rng = np.random.default_rng(0)
    size, line = 96, 10
    space = FreeSpace(size, line)
    for _ in range(25):
        x, y = (int(v) for v in rng.integers(0, size, 2))
        space.take(x, y, int(rng.integers(4, 30)), int(rng.integers(4, 16)))
    for query in range(90):
        if query % 3 == 2:  # a box taken between two searches (labels placed one by one)
            x, y = (int(v) for v in rng.integers(0, size, 2))
            space.take(x, y, int(rng.integers(4, 12)), int(rng.integers(4, 12)))
        taken = np.array(
            [[(row >> i) & 1 for i in range(space.n_cols)] for row in space.rows], dtype=bool
        )
        w, h = int(rng.integers(5, 40)), int(rng.integers(5, 25))
        ax, ay = (float(v) for v in rng.uniform(0, size, 2))
        k = -(-h // line)
        best = None
        for n in range(space.n_lines - k + 1):
            for i in range((size - w) // CELL + 1):
                if taken[n : n + k, i : -(-(i * CELL + w) // CELL)].any():
                    continue
                d = (i * CELL + w / 2 - ax) ** 2 + (n * line + k * line / 2 - ay) ** 2
                if best is None or (d, n, i) < best[0]:
                    best = ((d, n, i), (i * CELL, n * line + (k * line - h) // 2))
        assert space.nearest(w, h, ax, ay) == (None if best is None else best[1])


def test_clear_boxes_flags_overlaps_and_the_ligand():
    def label(x, y, key):
        return PlacedLabel(("atom", key), "N1", (255, 255, 255), 13, x, y, 20, 12, True)

    labels = [label(0, 0, 0), label(10, 5, 1), label(50, 50, 2), label(80, 0, 3)]
    ligand = np.zeros((100, 100), dtype=bool)
    ligand[55, 55] = True
    assert clear_boxes(labels, ligand) == [False, False, False, True]
    assert clear_boxes(labels) == [False, False, True, True]


def test_t7_ligand_views_are_close_ups():
    cx, ann = _load("1a28")
    ops, camera = docking.displacement(ann, 1, 1, Roll("y", 45))
    images = docking.question_images(ann, ops, camera)
    ligand = [s for s in images if s.view_name.startswith("ligand")]
    both = images[-1]
    assert both.request.camera == camera and both.request.origin is None
    span = {}
    for spec in ligand:
        uv, _, visible = projected_atoms(cx, spec.request)
        assert visible.all()
        span[spec.view_name] = float(np.ptp(uv, axis=0).max())
        wide = docking.request(
            ann,
            spec.request.view,
            atoms=spec.request.atoms,
            groups=spec.request.groups,
            camera=camera,
        )
        uv_wide, _, _ = projected_atoms(cx, wide)
        assert span[spec.view_name] > 1.5 * float(np.ptp(uv_wide, axis=0).max())
        # the close-up is centred on the ligand
        centre = (uv.min(axis=0) + uv.max(axis=0)) / 2
        assert np.abs(centre - camera.size / 2).max() < 0.15 * camera.size


def test_example_tiles_are_named():
    assert tile_caption(0, "reference front") == "image 1 · reference front"
    assert tile_caption(6, "B") == "image 7 · option B"
    assert tile_caption(2, "top") == "image 3 · top"


def test_card_reports_the_audit_legibility_shares(tmp_path):
    from misi_bench.builder.dataset.card_examples import legibility_text, update_card_legibility

    audit = {
        "tasks": {
            "pocket_ligand": {
                "answer_labels": 11,
                "answer_labels_legible": 10,
                "answer_label_share": 0.9091,
            },
            "rotation": {"questions": 4},
        }
    }
    (tmp_path / "README.md").write_text("# card\n\n" + legibility_text({}) + "\n\n## Counts\n")
    update_card_legibility(tmp_path, {"audit": audit})
    card = (tmp_path / "README.md").read_text()
    assert "| `pocket_ligand` | 10 / 11 | 90.9% |" in card and "rotation" not in card
    assert card.endswith("## Counts\n")
