"""Drawing the report: one grouped bar chart (matplotlib), a markdown table and a self-contained
HTML page (the chart inlined as a base64 PNG).

Readable without colour: models are bars with distinct hatches (with their 95% intervals as
error bars and their question counts at the foot), the paper's rows are markers of distinct
shapes, each baseline (random, constant, text only, options only) a line of its own style and
marker; colours come from the Okabe-Ito palette, which stays distinguishable under the common
colour-vision deficiencies. Every label (model names, titles) is drawn literally: no mathtext, no
TeX, so ``$x$`` stays ``$x$``.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Sequence
from dataclasses import dataclass, field

from ...builder.core.errors import MisiError
from .reference import COLUMN_TITLES, COLUMNS

#: Okabe & Ito (2008) colour-blind-safe palette (black left out: it is the chance line's colour).
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442")
HATCHES = ("", "//", "..", "xx", "\\\\", "oo", "--", "++")
#: Marker, face and edge colour of the paper's rows, in order (human, fine-tuned 7B, best API model, ...):
#: shapes and grey levels, so that they read without colour and never clash with a bar's colour.
REFERENCE_STYLES = (
    ("*", "#000000", "#ffffff"),
    ("D", "#ffffff", "#000000"),
    ("^", "#9a9a9a", "#000000"),
    ("s", "#ffffff", "#000000"),
)
#: Line style, colour and centre marker of each baseline row, by the start of its label: no two
#: share a line style or a marker (random and options only were both grey dots before).
BASELINE_STYLES = (
    ("Chance: random", "--", "#000000", None),
    ("Chance: constant", (0, (1, 1.5)), "#000000", "x"),
    ("Blind: text only", "-.", "#5a5a5a", "v"),
    ("Blind: options only", (0, (6, 2, 1, 2, 1, 2)), "#8a8a8a", "o"),
    ("Blind floor", (0, (4, 1, 1, 1)), "#000000", "s"),  # the best blind baseline per column
)
#: Styles for any other baseline row, in order.
CHANCE_STYLES = (((0, (3, 1)), "#333333", "s"), ((0, (1, 3)), "#333333", "D"))
AVERAGE_COLUMN = "Avg (paper, 8 col)"
#: Legend labels longer than this are cut (with an ellipsis); tables show them in full.
LEGEND_CHARS = 60


@dataclass(frozen=True)
class Row:
    """One line of the report: ``kind`` is ``model``, ``paper`` or ``chance``; ``scores`` column
    -> percent; ``average`` the paper's headline average; ``note`` a short provenance text."""

    label: str
    kind: str
    scores: dict[str, float | None] = field(default_factory=dict)
    average: float | None = None
    average_all: float | None = None
    note: str = ""
    #: Column -> number of questions (model rows).
    counts: dict[str, int] = field(default_factory=dict)
    #: Column (and ``paper_average``) -> 95% interval in percent (model rows).
    intervals: dict[str, tuple[float, float]] = field(default_factory=dict)
    #: Column (and ``paper_average``) -> (margin, low, high) above the build's blind floor in
    #: points, paired per question (model rows with per-question results and ``--dataset``).
    margins: dict[str, tuple[float, float, float]] = field(default_factory=dict)


def baseline_style(label: str, k: int) -> tuple:
    """(line style, colour, marker) of a baseline row: by its name, else the k-th spare style."""
    for start, style, colour, marker in BASELINE_STYLES:
        if label.startswith(start):
            return style, colour, marker
    return CHANCE_STYLES[k % len(CHANCE_STYLES)]


def literal(text: str, limit: int | None = None) -> str:
    """A label as plain one-line text (no newlines; cut to ``limit`` characters)."""
    text = " ".join(str(text).split())
    if limit and len(text) > limit:
        text = text[: limit - 1] + "\u2026"
    return text


def _plain(artist) -> None:
    """Draw a matplotlib text literally: no mathtext (``$...$``), no TeX."""
    artist.set_parse_math(False)
    artist.set_usetex(False)


def _fmt(value: float | None) -> str:
    return "\u2013" if value is None else f"{value:.2f}"


def _md_label(label: str) -> str:
    """A label for a markdown cell: one line, ``|`` escaped, no raw HTML."""
    return (
        literal(label)
        .replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("|", "\\|")
    )


#: A row's key of the paper average's interval (beside the column keys).
HEADLINE = "paper_average"


def interval_text(row: Row, column: str) -> str:
    """``n=21, 95% [52.1, 85.6]`` for a model row's column or :data:`HEADLINE` ('' when
    unknown; intervals: complexes resampled, the scorer's one method)."""
    n = row.counts.get(column)
    ci = row.intervals.get(column)
    parts = [f"n={n}"] if n is not None else []
    if ci is not None:
        parts.append(f"95% [{ci[0]:.1f}, {ci[1]:.1f}]")
    return ", ".join(parts)


def markdown_intervals(rows: Sequence[Row]) -> str:
    """A second table: per column, each model row's question count and 95% interval (percent)."""
    models = [r for r in rows if r.kind == "model" and (r.counts or r.intervals)]
    if not models:
        return ""
    head = ["model", *COLUMNS, "paper avg (8 col)"]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for row in models:
        cells = [interval_text(row, c) or "\u2013" for c in (*COLUMNS, HEADLINE)]
        lines.append(f"| {_md_label(row.label)} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def markdown_table(rows: Sequence[Row]) -> str:
    """Percent scores, one line per row; the paper's average last."""
    head = ["model", *COLUMNS, "paper avg (8 col)", "avg all tasks"]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for row in rows:
        label = _md_label(row.label)
        cells = [_fmt(row.scores.get(c)) for c in COLUMNS] + [
            _fmt(row.average),
            _fmt(row.average_all),
        ]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def draw(rows: Sequence[Row], title: str = "MiSI-Bench", dpi: int = 150):
    """The grouped chart as a matplotlib Figure (Agg backend, no display needed)."""
    try:
        import matplotlib  # noqa: PLC0415
    except ImportError:
        raise MisiError("the report needs matplotlib: pip install 'misi-bench[report]'") from None
    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure  # noqa: PLC0415
    from matplotlib.lines import Line2D  # noqa: PLC0415

    groups = [*COLUMNS, AVERAGE_COLUMN]
    fig = Figure(figsize=(13, 6.2), dpi=dpi, layout="constrained")
    ax = fig.add_subplot()
    models = [r for r in rows if r.kind == "model"]
    width = 0.8 / max(1, len(models))
    handles = [_model_bars(ax, row, k, groups, width) for k, row in enumerate(models)]
    spare = 0
    for row in [r for r in rows if r.kind == "chance"]:
        handles.append(_baseline_lines(ax, Line2D, row, spare, groups))
        spare += not any(row.label.startswith(b[0]) for b in BASELINE_STYLES)
    for k, row in enumerate([r for r in rows if r.kind == "paper"]):
        handles.append(_paper_markers(ax, Line2D, row, k, groups))
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(
        [g if g == AVERAGE_COLUMN else f"{g}\n{COLUMN_TITLES.get(g, '')}" for g in groups],
        fontsize=8.5,
    )
    ax.axvline(len(COLUMNS) - 0.5, color="#888888", linewidth=0.8)
    ax.set_ylim(0, 105)
    ax.set_xlim(-0.6, len(groups) - 0.4)
    ax.set_ylabel("score (%), the paper's weighted score; bars: 95% interval, n questions")
    _plain(ax.set_title(literal(title)))
    ax.grid(axis="y", color="#dddddd", linewidth=0.6, zorder=0)
    ax.set_axisbelow(True)
    legend = fig.legend(
        handles=handles,
        loc="outside lower center",
        ncol=min(4, len(handles)),
        fontsize=8.5,
        frameon=False,
    )
    for text in [*legend.get_texts(), *ax.get_xticklabels()]:
        _plain(text)
    return fig


def _value(row: Row, group: str) -> float | None:
    """A row's score (%) in one column (the average column: its average), or None."""
    return row.average if group == AVERAGE_COLUMN else row.scores.get(group)


def _model_bars(ax, row: Row, k: int, groups: list[str], width: float):
    """Model ``k``'s bars (one per column, 95% interval whiskers, ``n=`` above each; "n/a"
    where it has no score); returns the bars for the legend."""
    xs, ys, missing, errs, ns = [], [], [], [[], []], []
    for g, group in enumerate(groups):
        x = g - 0.4 + width * (k + 0.5)
        v = _value(row, group)
        (missing if v is None else xs).append(x)
        if v is not None:
            ys.append(v)
            ci = row.intervals.get(group)
            errs[0].append(max(0.0, v - ci[0]) if ci else 0.0)
            errs[1].append(max(0.0, ci[1] - v) if ci else 0.0)
            ns.append(row.counts.get(group))
    bars = ax.bar(
        xs,
        ys,
        width=width * 0.92,
        color=PALETTE[k % len(PALETTE)],
        edgecolor="black",
        linewidth=0.7,
        hatch=HATCHES[k % len(HATCHES)],
        label=literal(row.label, LEGEND_CHARS),
        zorder=2,
    )
    if any(errs[0]) or any(errs[1]):
        ax.errorbar(
            xs, ys, yerr=errs, fmt="none", ecolor="#222222", elinewidth=0.9, capsize=2, zorder=3
        )
    for x, n in zip(xs, ns):
        if n is not None:
            text = ax.text(
                x,
                1.0,
                f"n={n}",
                rotation=90,
                ha="center",
                va="bottom",
                fontsize=6,
                color="#000000",
                bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.4, "alpha": 0.8},
                zorder=6,
            )
            _plain(text)
    for x in missing:  # say "no score" rather than draw nothing
        ax.text(
            x,
            1.0,
            "n/a",
            rotation=90,
            ha="center",
            va="bottom",
            fontsize=6.5,
            color="#333333",
            zorder=3,
        )
    return bars


def _baseline_lines(ax, Line2D, row: Row, spare: int, groups: list[str]):  # noqa: N803
    """A chance baseline as a horizontal line across each column it scores (``spare``: how
    many baselines without a style of their own came before); returns its legend entry."""
    style, colour, marker = baseline_style(row.label, spare)
    for g, group in enumerate(groups):
        v = _value(row, group)
        if v is not None:
            ax.hlines(
                v, g - 0.45, g + 0.45, colors=colour, linestyles=style, linewidth=1.8, zorder=4
            )
            if marker:
                ax.plot(
                    [g + 0.45],
                    [v],
                    marker=marker,
                    color=colour,
                    markersize=5,
                    linestyle="none",
                    markerfacecolor="white" if marker in "ov" else colour,
                    zorder=4,
                )
    return Line2D(
        [],
        [],
        color=colour,
        linestyle=style,
        linewidth=1.8,
        marker=marker,
        markersize=5,
        markerfacecolor="white" if marker and marker in "ov" else colour,
        label=literal(row.label, LEGEND_CHARS),
    )


def _paper_markers(ax, Line2D, row: Row, k: int, groups: list[str]):  # noqa: N803
    """A paper reference row as one marker per column it scores; returns its legend entry."""
    marker, face, edge = REFERENCE_STYLES[k % len(REFERENCE_STYLES)]
    size = 15 if marker == "*" else 8
    pts = [
        (g, _value(row, group)) for g, group in enumerate(groups) if _value(row, group) is not None
    ]
    if pts:
        ax.plot(
            [p[0] for p in pts],
            [p[1] for p in pts],
            marker=marker,
            linestyle="none",
            markersize=size,
            markerfacecolor=face,
            markeredgecolor=edge,
            markeredgewidth=1.0,
            zorder=5,
        )
    return Line2D(
        [],
        [],
        marker=marker,
        linestyle="none",
        markersize=size,
        markerfacecolor=face,
        markeredgecolor="#000000",
        markeredgewidth=1.0,
        label=literal(row.label, LEGEND_CHARS),
    )


def figure_png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()


_CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2rem auto;max-width:1300px;
padding:0 1rem;color:#111}
h1{font-size:1.5rem} img{max-width:100%;height:auto;border:1px solid #ccc}
table{border-collapse:collapse;font-variant-numeric:tabular-nums;font-size:.9rem;margin:1rem 0}
th,td{border:1px solid #bbb;padding:.25rem .5rem;text-align:right} th:first-child,td:first-child{text-align:left}
tr.paper td{font-style:italic} tr.chance td{color:#444} caption{text-align:left;font-weight:600;margin-bottom:.3rem}
pre{background:#f4f4f4;padding:.8rem;overflow-x:auto;font-size:.8rem} .note{color:#444;font-size:.9rem}
td:first-child{min-width:9rem;max-width:22rem;overflow-wrap:anywhere} .ci{font-size:.72rem;color:#444}
"""


def page(
    rows: Sequence[Row], png: bytes, *, title: str, notes: Sequence[str], extra: str = ""
) -> str:
    """The self-contained HTML report (no external resources); ``extra``: HTML sections set
    after the score table (the breakdown by factor)."""
    esc = html.escape
    head = ["model", *COLUMNS, "paper avg (8 col)", "avg all tasks", "source"]
    body = []
    for row in rows:
        cells = [
            _fmt(row.scores.get(c))
            + (
                f'<br><span class="ci">{esc(interval_text(row, c)).replace(", 95%", "<br>95%")}</span>'
                if interval_text(row, c)
                else ""
            )
            for c in COLUMNS
        ] + [
            _fmt(row.average)
            + (
                f'<br><span class="ci">{esc(interval_text(row, HEADLINE))}</span>'
                if interval_text(row, HEADLINE)
                else ""
            ),
            _fmt(row.average_all),
        ]
        body.append(
            f'<tr class="{esc(row.kind)}"><td>{esc(row.label)}</td>'
            + "".join(f"<td>{c}</td>" for c in cells)
            + f"<td>{esc(row.note)}</td></tr>"
        )
    titles = "".join(
        f'<th scope="col" title="{esc(COLUMN_TITLES.get(h, h))}">{esc(h)}</th>' for h in head
    )
    alt = (
        "Grouped bar chart of per-task scores in percent: bars are the models (error bars: 95% "
        "intervals; n: questions), markers the paper's published rows, lines of distinct styles the "
        "baselines (random, constant, text only, options only); last group is the paper's "
        "eight-column average."
    )
    note_html = "".join(f"<li>{esc(n)}</li>" for n in notes)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>{esc(title)}</title><style>{_CSS}</style></head><body>
<h1>{esc(title)}</h1>
<p class="note">Scores in percent (the paper's weighted score). T4 is reported as its positive (T4+) and
negative (T4&minus;) halves. <b>paper avg (8 col)</b> = mean of T1, T2, T3, T4+, T4&minus;, T7, T8, T9 (the
paper's headline average; T5 and T6 left out); <b>avg all tasks</b> = macro mean over all tasks (for
baseline rows only when the baseline covers every task). Under a model's score: n questions and the 95%
interval, also in percent. &ndash; = not available.</p>
<img alt="{esc(alt)}" src="data:image/png;base64,{base64.b64encode(png).decode("ascii")}">
<table><caption>Per-task scores (%)</caption><thead><tr>{titles}</tr></thead><tbody>
{chr(10).join(body)}
</tbody></table>
{extra}
<h2>Markdown</h2>
<pre>{esc(markdown_table(rows))}</pre>
<pre>{esc(markdown_intervals(rows))}</pre>
<h2>Sources</h2><ul class="note">{note_html}</ul>
</body></html>
"""
