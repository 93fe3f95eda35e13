"""The report's breakdown by factor (``misi-bench report ... --dataset D --by-factor``): per task
one figure with one panel per factor (bars: each result's score per bin with its 95% interval
and ``n`` under the bar; a black dash: the build's blind floor of the bin's questions), the
paper's Fig. 4 panels (a result's bars beside the paper's published bars, hatched grey), and
for two results their paired difference per bin (A - B with its interval and p-value). The
numbers come from ``scoring.factor_table`` (the scorer's one interval method); the figures are
inlined as base64 PNGs, so the HTML stays self-contained.
"""

from __future__ import annotations

import base64
import html
import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

from ...builder.core.errors import MisiError
from ...builder.core.registry import TASK_BY_NAME, TASK_NAMES
from ...builder.scoring import factor_table as ft
from ...builder.scoring.factors import factors_of
from ..common import split_records
from .render import HATCHES, PALETTE, figure_png, literal

__all__ = ["factor_section"]

log = logging.getLogger(__name__)


def build_rows(build: Path, split: str) -> tuple[list[dict], dict]:
    """(the scorer's columns of every question of ``split``, the manifest) of a build folder."""
    rows = split_records(build, split)
    try:
        manifest = json.loads((build / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = {}
    return rows, manifest


#: Panels of a figure per row (a task with more factors wraps to a second row).
PANELS_PER_ROW = 3


def _figure(n_panels: int, height: float = 3.2):
    try:
        import matplotlib  # noqa: PLC0415
    except ImportError:
        raise MisiError("the report needs matplotlib: pip install 'misi-bench[report]'") from None
    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure  # noqa: PLC0415

    cols = min(PANELS_PER_ROW, n_panels)
    rows = -(-n_panels // cols)
    fig = Figure(figsize=(max(4.2, 4.2 * cols), height * rows), dpi=110, layout="constrained")
    return fig, [fig.add_subplot(rows, cols, k + 1) for k in range(n_panels)]


def _bars(ax, bins: Sequence[str], series, floors: Mapping[str, float] | None, paired: bool):
    """One panel: ``series`` is [(label, {bin: BinCell})]; bars with error bars and n."""
    width = 0.8 / max(1, len(series))
    for k, (label, cells, *style) in enumerate(series):
        xs, ys, lo, hi = [], [], [], []
        for x, b in enumerate(bins):
            c = cells.get(b)
            if c is None:
                continue
            xs.append(x - 0.4 + width * (k + 0.5))
            ys.append(100 * c.value)
            lo.append(100 * (c.value - c.low))
            hi.append(100 * (c.high - c.value))
            if c.n > 0:  # above the interval's top, so that no bar or label hides it
                top = 100 * max(c.high, 0.0) + 1.5
                ax.text(
                    xs[-1], top, f"n={c.n}", ha="center", va="bottom", fontsize=6.5, rotation=90
                )
        look = (
            style[0]
            if style
            else {"color": PALETTE[k % len(PALETTE)], "hatch": HATCHES[k % len(HATCHES)]}
        )
        ax.bar(
            xs,
            ys,
            width * 0.95,
            yerr=[lo, hi],
            capsize=2.5,
            label=literal(label, 40),
            edgecolor="#333333",
            linewidth=0.5,
            error_kw={"linewidth": 0.9},
            **look,
        )
    for x, b in enumerate(bins):
        if floors and b in floors:
            ax.hlines(100 * floors[b], x - 0.45, x + 0.45, color="#000000", linewidth=1.6)
    ax.set_xticks(range(len(bins)))
    ax.set_xticklabels([literal(b, 12) for b in bins], fontsize=7.5)
    if paired:
        ax.axhline(0, color="#444444", linewidth=0.8)
        low, high = ax.get_ylim()
        ax.set_ylim(low, high + 0.15 * (high - low))
    else:
        ax.set_ylim(0, 122)
    ax.grid(axis="y", color="#dddddd", linewidth=0.5)
    ax.set_axisbelow(True)


def _task_figure(task: str, results: Sequence[tuple[str, list]], paired: bool = False) -> bytes:
    """PNG of one task: a panel per factor with bins, each result's bars; the blind floor of
    the first result's bins as dashes."""
    keys = [f for f in factors_of(task) if any(c.factor == f.key for _, cs in results for c in cs)]
    fig, axes = _figure(len(keys))
    for ax, factor in zip(axes, keys):
        series = [
            (label, {c.bin: c for c in cells if c.task == task and c.factor == factor.key})
            for label, cells in results
        ]
        floors = (
            {b: c.floor for b, c in series[0][1].items() if c.floor is not None}
            if not paired
            else None
        )
        present = [b for b in factor.bins if any(b in s for _, s in series)]
        _bars(ax, present, series, floors, paired)
        ax.set_title(literal(factor.label, 60), fontsize=8.5)
        ax.set_ylabel("A - B (points)" if paired else "score (%)", fontsize=8)
    spec = TASK_BY_NAME[task]
    fig.suptitle(
        f"T{spec.number} {task}: bars 95% interval, n questions"
        + ("" if paired else "; black dash: blind floor"),
        fontsize=9.5,
    )
    if len(results) > 1 and not paired:
        axes[0].legend(fontsize=7, frameon=False)
    return figure_png(fig)


def _figure4(panels_by_result: Sequence[tuple[str, list]]) -> bytes:
    """PNG of the paper's Fig. 4 panels: each result's bars and the paper's, bin by bin."""
    first = panels_by_result[0][1]
    fig, axes = _figure(len(first), 3.4)
    for p, ax in enumerate(axes):
        panel = first[p]
        bins = [b["bin"] for b in panel["bins"]]
        bins += [b for b in panel["paper_bars"] if b not in bins]
        series = []
        for label, panels in panels_by_result:
            cells = {
                b["bin"]: ft.BinCell(
                    panel["task"],
                    panel["factor"],
                    b["bin"],
                    b["n"],
                    0,
                    b["value"],
                    b["ci95"][0],
                    b["ci95"][1],
                    0.0,
                )
                for b in panels[p]["bins"]
            }
            series.append((label, cells))
        if panel["paper_bars"]:  # the paper's bars: no interval, n where the paper gives it
            paper = {
                b: ft.BinCell(
                    panel["task"],
                    panel["factor"],
                    b,
                    int(panel["paper_n"].get(b, 0)),
                    0,
                    v / 100,
                    v / 100,
                    v / 100,
                    0.0,
                )
                for b, v in panel["paper_bars"].items()
            }
            series.append((f"paper: {panel['paper_model']}", paper, PAPER_LOOK))
        _bars(ax, bins, series, None, False)
        ax.set_title(literal(panel["title"], 70), fontsize=8.5)
        what = "error rate (%)" if panel["statistic"] == "error_rate" else "exact match (%)"
        ax.set_ylabel(what, fontsize=8)
        ax.legend(fontsize=7, frameon=False)
    return figure_png(fig)


#: The look of the paper's published bars (grey, cross-hatched: readable without colour).
PAPER_LOOK = {"color": "#bbbbbb", "hatch": "xx"}


def _img(png: bytes, alt: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'


def _checked(results) -> list:
    """Results with per-question entries; MisiError when none has them."""
    found = [r for r in results if r.per_item]
    for r in results:
        if not r.per_item:
            log.warning(
                "%s: no per-question entries (per_item): left out of the breakdown", r.label
            )
    if not found:
        raise MisiError(
            "--by-factor: no result with per-question entries (per_item): report a "
            "`misi-bench score --json-out` file or an eval run folder"
        )
    return found


def _same_build(a, b) -> None:
    builds = [{i.get("config_hash") for i in r.per_item if i.get("config_hash")} for r in (a, b)]
    if builds[0] and builds[1] and builds[0] != builds[1]:
        raise MisiError(
            f"cannot compare by factor: {a.label} is build {', '.join(sorted(builds[0]))}, "
            f"{b.label} is build {', '.join(sorted(builds[1]))}"
        )


def factor_section(results, build: Path, split: str, floor=None) -> tuple[str, str]:
    """(HTML section, markdown) of the breakdown by factor of ``results`` (``ModelResult``s
    with per-question entries) on the build folder's ``split``, with its blind floor
    (``floor``: the one the report's chance rows computed; None: computed here)."""
    from .levels import floor_level, question_table  # noqa: PLC0415

    results = _checked(results)
    rows, manifest = build_rows(build, split)
    facts = ft.manifest_facts(manifest)
    if floor is None:
        floor = floor_level(question_table(build, split, rows, manifest), rows)[1]
    bins = ft.row_bins(rows, facts)
    tables = [(r.label, ft.bin_table(r.per_item, bins, "score", floor)) for r in results]
    parts = [
        "<h2>By factor</h2>",
        '<p class="note">Per task, one panel per factor: each '
        "result's score per bin (bars: 95% interval, complexes of the bin resampled; n: "
        "questions of the bin), the black dash the build's blind floor on the same "
        "questions. Factors, bins and versions: docs/scoring.md.</p>",
    ]
    md = []
    for task in TASK_NAMES:
        if any(c.task == task for _, cells in tables for c in cells):
            parts.append(_img(_task_figure(task, tables), f"{task} by factor"))
    for label, cells in tables:
        text = ft.format_factor_markdown(cells)
        md.append(f"{label}, by factor:\n\n{text}")
        parts.append(f"<h3>{html.escape(label)}</h3><pre>{html.escape(text)}</pre>")
    panels = [(r.label, ft.figure4_panels(list(r.per_item), bins)) for r in results]
    if panels[0][1]:
        parts.append("<h2>The paper's Fig. 4 panels</h2>")
        parts.append(_img(_figure4(panels), "Fig. 4 panels: results beside the paper's bars"))
        for label, found in panels:
            text = ft.format_figure4_markdown(found)
            md.append(f"{label}, the paper's Fig. 4 panels:\n\n{text}")
            parts.append(f"<pre>{html.escape(text)}</pre>")
    if len(results) == 2:
        a, b = results
        _same_build(a, b)
        answered = [[i for i in r.per_item if not i.get("missing")] for r in results]
        diff = ft.compare_by_factor(answered[0], answered[1], bins)
        head = f"A = {a.label}, B = {b.label}: paired on the questions both answered"
        parts.append(f"<h2>{html.escape(head)}</h2>")
        for task in TASK_NAMES:
            if any(c.task == task for c in diff):
                parts.append(_img(_task_figure(task, [("A - B", diff)], paired=True), task))
        text = ft.format_factor_markdown(diff, paired_cells=True)
        md.append(f"{head}:\n\n{text}")
        parts.append(f"<pre>{html.escape(text)}</pre>")
    return "\n".join(parts), "\n".join(md)
