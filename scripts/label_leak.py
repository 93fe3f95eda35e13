"""Does a label's geometry tell more than the drawn positions (issue 53 item 1)?

    python -m scripts.label_leak [--sources samples tests/data/heldout tests/data/copies]
        [--views front left top back right bottom] [--boot 2000]

For every complex of the sources (its ``chimerax`` H-bonds) and each of the six pocket views,
every residue label of the picture as the renderer places it (``raster.label_layout``; since
RENDER_VERSION 9 the later views keep the front view's label offsets, as T8 and T9 draw them) is
one row: bonded (the residue has an H-bond to the ligand) or not. Two logistic models predict
"bonded", each scored by its out-of-fold AUC (five folds by complex, so no complex is both
fitted and scored):

* **drawn positions**: what the picture shows of the residue, in Å of the picture's own scale
  (the drawn atom radius over ``Style.atom_radius``): the px distance of its label's anchor (CA) to the nearest drawn
  ligand atom, and of its nearest drawn atom to the nearest drawn ligand atom;
* **+ label geometry**: those and the label's placement: a leader line or not, its box centre's
  distance from the anchor (same scale), its rank in the placement order (0-1), free or stuck.

It prints both AUCs, their difference with a 95% bootstrap interval over complexes (``--boot``
resamples), and the share of labels without a leader line for bonded and other residues. Run
it on two checkouts (before and after a layout change) to compare.
"""

from __future__ import annotations

import argparse
import logging

import numpy as np
from misi_bench.builder.chemistry.structure import load_complex
from misi_bench.builder.scene import labels, raster
from misi_bench.builder.scene.requests import RENDER_VERSION
from misi_bench.builder.store.sources import discover
from misi_bench.builder.tasks.annotation import annotate
from misi_bench.builder.tasks.base import kept, request

log = logging.getLogger(__name__)
VIEWS = ("front", "left", "top", "back", "right", "bottom")
DEFAULT_SOURCES = ("samples", "tests/data/heldout", "tests/data/copies")


def picture_rows(cx, ann, view: str) -> list[tuple]:
    """(bonded, base features, label features) of each residue label of one pocket picture."""
    req = kept(request(ann, VIEWS[0]), request(ann, view))  # as T8/T9 draw them
    placed = raster.label_layout(cx, req)
    f = raster._frame(cx, req)
    ss = f.ss
    u, v = f.u / ss, f.v / ss
    radius = raster._bonds_and_radii(cx, f, req.style)[1] / (4.0 * ss)
    la = labels.label_atoms(cx, f.atoms)
    scale, distance = _picture_scale(la, u, v, f.alive, radius, req.style, f.size)
    bonded = {int(cx.residue_index[b.protein_atom]) for b in ann.hbonds}
    res_rows = ~la.ligand & (la.res_idx >= 0) & f.alive
    near_atom = distance(u[res_rows], v[res_rows]) / scale
    by_res: dict[int, float] = {}
    for r, d in zip(la.res_idx[res_rows].tolist(), near_atom.tolist()):
        by_res[r] = min(d, by_res.get(r, np.inf))
    n = max(len(placed), 1)
    out = []
    for lb in placed:
        if lb.key[0] != "residue":
            continue
        r = lb.key[1]
        rows = np.flatnonzero(res_rows & (la.res_idx == r) & la.is_ca)
        k = rows[0] if rows.size else np.flatnonzero(res_rows & (la.res_idx == r))[0]
        au, av = float(u[k]), float(v[k])
        anchor_d = float(distance(np.array([au]), np.array([av]))[0]) / scale
        cx_box, cy_box = lb.x + lb.width / 2.0, lb.y + lb.height / 2.0
        offset = float(np.hypot(cx_box - au, cy_box - av)) / scale
        base = [anchor_d, by_res.get(r, anchor_d)]
        geometry = [float(lb.anchor is not None), offset, lb.rank / n, float(lb.free)]
        out.append((r in bonded, base, base + geometry, lb.anchor is None))
    return out


def _picture_scale(la, u, v, alive, radius_px, style, size):
    """(px per Å of the picture, px distance to the nearest drawn ligand atom): what
    ``layout.picture_reach`` measures, written here so that the script also runs on checkouts
    before it existed."""
    rows = np.flatnonzero(la.ligand & alive & (u >= 0) & (u < size) & (v >= 0) & (v < size))
    lu, lv = u[rows], v[rows]
    scale = float(np.median(radius_px[rows])) / style.atom_radius if rows.size else 1.0

    def distance(pu, pv):
        if not rows.size:
            return np.full(np.shape(pu), np.inf)
        d2 = (np.asarray(pu)[:, None] - lu[None, :]) ** 2 + (
            np.asarray(pv)[:, None] - lv[None, :]
        ) ** 2
        return np.sqrt(d2.min(axis=1))

    return scale, distance


def _fit(x: np.ndarray, y: np.ndarray, l2: float = 1e-3, steps: int = 50) -> np.ndarray:
    """Logistic regression weights (intercept last) by Newton's method, a little L2."""
    xb = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(xb.shape[1])
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-np.clip(xb @ w, -30, 30)))
        grad = xb.T @ (p - y) + l2 * w
        hess = (xb * (p * (1 - p))[:, None]).T @ xb + l2 * np.eye(len(w))
        w -= np.linalg.solve(hess, grad)
    return w


def _predict(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    return np.hstack([x, np.ones((len(x), 1))]) @ w


def auc(score: np.ndarray, y: np.ndarray) -> float:
    """Area under the ROC curve (ties count half)."""
    pos, neg = score[y == 1], score[y == 0]
    if not pos.size or not neg.size:
        return float("nan")
    order = np.argsort(np.concatenate([pos, neg]), kind="stable")
    ranks = np.empty(order.size)
    values = np.concatenate([pos, neg])[order]
    i = 0
    while i < values.size:  # mid-ranks of ties
        j = i
        while j + 1 < values.size and values[j + 1] == values[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2.0 + 1.0
        i = j + 1
    return float((ranks[: pos.size].sum() - pos.size * (pos.size + 1) / 2) / (pos.size * neg.size))


def out_of_fold(x: np.ndarray, y: np.ndarray, group: np.ndarray, folds: int = 5) -> np.ndarray:
    """Out-of-fold scores, folds by complex (``group``), features standardised per fit."""
    score = np.zeros(len(y))
    ids = np.unique(group)
    fold_of = {g: k % folds for k, g in enumerate(ids)}
    fold = np.array([fold_of[g] for g in group])
    for k in range(folds):
        train, test = fold != k, fold == k
        mu, sd = x[train].mean(axis=0), x[train].std(axis=0) + 1e-9
        w = _fit((x[train] - mu) / sd, y[train])
        score[test] = _predict(w, (x[test] - mu) / sd)
    return score


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--sources", nargs="*", default=list(DEFAULT_SOURCES))
    parser.add_argument("--views", nargs="*", default=list(VIEWS))
    parser.add_argument("--boot", type=int, default=2000)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    rows, groups = [], []
    for source in args.sources:
        for ref in discover(source):
            try:
                cx = load_complex(ref)
            except Exception as exc:  # noqa: BLE001 (a skipped complex is reported, not fatal)
                log.warning("%s: %s", ref.pdb_id, exc)
                continue
            ann = annotate(cx, hbonds="chimerax")
            for view in args.views:
                for row in picture_rows(cx, ann, view):
                    rows.append(row)
                    groups.append(f"{source}/{ref.pdb_id}")
    y = np.array([r[0] for r in rows], dtype=float)
    base = np.array([r[1] for r in rows])
    full = np.array([r[2] for r in rows])
    group = np.array(groups)
    s_base, s_full = out_of_fold(base, y, group), out_of_fold(full, y, group)
    a_base, a_full = auc(s_base, y), auc(s_full, y)
    rng = np.random.default_rng(0)
    ids = np.unique(group)
    members = {g: np.flatnonzero(group == g) for g in ids}
    diffs = []
    for _ in range(args.boot):
        pick = np.concatenate([members[g] for g in rng.choice(ids, size=ids.size)])
        diffs.append(auc(s_full[pick], y[pick]) - auc(s_base[pick], y[pick]))
    low, high = np.nanpercentile(diffs, [2.5, 97.5])
    at_atom = np.array([r[3] for r in rows])
    print(f"render version {RENDER_VERSION}: {len(rows)} residue labels, {int(y.sum())} bonded,")
    print(f"  {ids.size} complexes, views {', '.join(args.views)}")
    print(f"AUC drawn positions: {a_base:.3f}")
    print(f"AUC + label geometry: {a_full:.3f}")
    print(
        f"difference: {a_full - a_base:+.3f} (95% bootstrap over complexes {low:+.3f} .. {high:+.3f})"
    )
    print(
        f"labels at their atom (no leader): bonded {at_atom[y == 1].mean():.1%}, "
        f"other {at_atom[y == 0].mean():.1%}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
