"""``misi-bench report RESULT... --out report.html [--png report.png] [--markdown table.md]``."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from ...builder.core.errors import MisiError
from ...builder.core.profiles import LEGACY_PROFILE, PROFILES
from ...builder.core.shards import check_split
from ...builder.scoring import NOT_COMPARABLE, PAPER_ROWS_HELP
from ..common import local_copy
from .levels import chance_levels
from .reference import complete_average_all, paper_average, reference_rows
from .render import Row, draw, figure_png, markdown_intervals, markdown_table, page
from .sources import RANDOM_DRAWS, merge_results, read_result

log = logging.getLogger(__name__)


def _parse_input(text: str) -> tuple[str | None, str]:
    """``LABEL=PATH`` or ``PATH`` (a path that exists wins over the ``=`` reading)."""
    if "=" in text and not Path(text).exists():
        label, path = text.split("=", 1)
        return label.strip() or None, path
    return None, text


def results_profile(results, dataset: str | None) -> str | None:
    """The build profile of the reported results: the ``--dataset`` build's (its manifest), else
    the one every result file records; None when unknown or mixed."""
    if dataset and (Path(dataset) / "manifest.json").exists():
        import json  # noqa: PLC0415

        return json.loads((Path(dataset) / "manifest.json").read_text(encoding="utf-8")).get(
            "profile", LEGACY_PROFILE
        )
    known = {r.profile for r in results}
    return known.pop() if len(known) == 1 else None


def collect_rows(
    inputs: list[str],
    dataset: str | None,
    split: str,
    with_paper: bool = True,
    paper_rows: str | None = "default",
) -> tuple[list[Row], list[str]]:
    """Report rows (models, then the paper's rows that ``paper_rows`` names, see
    ``--paper-rows``, then chance levels) and provenance notes."""
    rows, notes, _, _ = _collect(inputs, dataset, split, with_paper, paper_rows)
    return rows, notes


def _collect(inputs, dataset, split, with_paper, paper_rows) -> tuple[list, list, list, object]:
    """:func:`collect_rows`, plus what the factor section reuses: the merged model results and
    the build's blind floor (None without ``dataset``)."""
    rows: list[Row] = []
    notes: list[str] = []
    found = []
    for text in inputs:
        label, path = _parse_input(text)
        found += read_result(path, label, split if dataset else None)
    chance, chance_note, floor = _chance_rows(dataset, split) if dataset else ([], "", None)
    merged = merge_results(found)
    for res in merged:
        rows.append(
            Row(
                res.label,
                "model",
                res.scores,
                res.paper_average,
                res.average_all,
                f"{res.source}, split {res.split or '?'}" + (f", {res.n} answers" if res.n else ""),
                dict(res.counts),
                dict(res.intervals),
                paired_margins(res.per_item, floor),
            )
        )
        notes.append(
            f"{res.label}: {res.source} result file {res.path} (split {res.split or 'not recorded'})."
        )
    references = reference_rows(paper_rows) if with_paper else ()
    for res in found:
        if res.t9_exact:
            paper_way, ours = res.t9_exact
            notes.append(
                f"{res.label}: T9 exact match {_pct_text(paper_way)}% on complexes with at least one "
                f"H-bond (the paper's way, Table 2), {_pct_text(ours)}% over every complex (ours)."
            )
    if references:
        paper, paper_notes = _paper_rows(references, found, dataset)
        rows += paper
        notes += paper_notes
    if dataset:
        rows += chance
        notes.append(chance_note)
    return rows, notes, merged, floor


def paired_margins(per_item, floor) -> dict[str, tuple[float, float, float]]:
    """Report column (and ``paper_average``) -> (margin, low, high) in points of a result above
    the build's blind floor: ``scoring.floors.margins`` on its per-question entries, the numbers
    ``misi-bench score`` prints for the same predictions. Empty without either."""
    from ...builder.scoring import floors  # noqa: PLC0415
    from ...builder.scoring.bootstrap import has_complex  # noqa: PLC0415

    if not per_item or floor is None or not all(has_complex(i) for i in per_item):
        return {}
    from .reference import COLUMNS, SCORER_KEY  # noqa: PLC0415

    got = floors.margins(per_item, floor)
    out = {}
    for col in (*COLUMNS, "paper_average"):
        m = got.get(SCORER_KEY.get(col, col))
        if m is not None:
            out[col] = (100 * m.value, 100 * m.low, 100 * m.high)
    return out


def _paper_rows(references, found, dataset: str | None) -> tuple[list[Row], list[str]]:
    """The paper's reference rows (tagged not comparable unless the results were scored on a
    ``paper`` build; a published average that is not the mean of its columns is logged) and
    their notes."""
    rows: list[Row] = []
    notes: list[str] = []
    profile = results_profile(found, dataset)
    comparable = profile in PROFILES and PROFILES[profile].paper_comparable
    tag = "" if comparable else f" ({NOT_COMPARABLE})"
    for ref in references:
        computed = paper_average(ref.scores)
        if computed is not None and ref.average is not None and abs(computed - ref.average) > 0.01:
            log.warning(
                "%s: published average %.2f differs from the mean of its columns %.2f",
                ref.label,
                ref.average,
                computed,
            )
        rows.append(Row(ref.label + tag, "paper", ref.scores, ref.average, None, ref.source))
    notes.append(
        f"Paper rows: {rows[-1].note}; columns the paper's text does not give are left empty."
    )
    if not comparable:
        why = (
            f"the results were scored on a {profile!r} build"
            if profile
            else "the results do not say which build profile they were scored on (pass --dataset)"
        )
        notes.append(
            f"Paper rows are {NOT_COMPARABLE}: {why}; only a 'paper' build asks the paper's questions "
            "(docs/fidelity.md)."
        )
    return rows, notes


def _chance_rows(dataset: str, split: str) -> tuple[list[Row], str, object]:
    """The chance-level rows of a build's split (scores in %), the note saying how they were
    made and the build's blind floor (``scoring.floors.Floor``)."""
    chance = chance_levels(dataset, split)
    rows = [
        Row(
            name,
            "chance",
            scores,
            paper_average(scores),
            complete_average_all(scores),
            f"build {Path(dataset).name}, split {split}",
        )
        for name, scores in chance.rows.items()
    ]
    note = (
        f"Chance levels: the scorer's baselines on the {chance.n} questions of split {chance.split!r} of "
        f"the build {chance.build} (config hash {chance.config_hash}); the random answer is "
        f"averaged over {RANDOM_DRAWS} draws per question. Blind rows never look at the pictures "
        f"(docs/decoys.md): text only answers the train split's most frequent answer per task, options "
        f"only the best options-only rule per choice task."
    )
    return rows, note, chance.floor


def _exact_table(args: argparse.Namespace) -> str:
    """Exact match of the ``misi-bench score`` results beside the paper's Table 2 rows."""
    from ...builder import scoring  # noqa: PLC0415

    if args.no_paper:
        return ""
    found = [
        r
        for text in args.results
        for r in read_result(_parse_input(text)[1], _parse_input(text)[0])
    ]
    results = [(r.label, r.exact) for r in merge_results(found) if r.exact]
    profile = results_profile(found, args.dataset)
    return scoring.format_exact_markdown(
        results,
        scoring.select_paper_rows(args.paper_rows),
        comparable=profile in PROFILES and PROFILES[profile].paper_comparable,
    )


def margin_table(rows: list[Row]) -> str:
    """Each model's and published row's margin (points) above the build's blind floor row
    (``--dataset``), per column and for the paper's average; a model row with per-question
    results has its paired margin with its 95% interval (:func:`paired_margins`, the numbers of
    ``misi-bench score``), a row without them (harness files, published rows) a difference of
    means without an interval. Empty text without a floor row."""
    from .levels import FLOOR_NAME  # noqa: PLC0415
    from .reference import COLUMNS, paper_average  # noqa: PLC0415

    floor = next((r for r in rows if r.label == FLOOR_NAME), None)
    if floor is None:
        return ""
    lines = [
        "Margin above the build's blind floor (points; model rows: [95% interval]):",
        "",
        "| row | " + " | ".join(COLUMNS) + " | paper avg |",
        "|---|" + "---:|" * (len(COLUMNS) + 1),
        f"| {FLOOR_NAME} (%) | "
        + " | ".join(_pct_text(floor.scores.get(c)) for c in COLUMNS)
        + f" | {_pct_text(paper_average(floor.scores))} |",
    ]
    for row in rows:
        if row.kind not in ("model", "paper"):
            continue
        cells = []
        for c in COLUMNS:
            value, base = row.scores.get(c), floor.scores.get(c)
            cells.append(_margin_text(row.margins.get(c), value, base))
        avg, base = row.average, paper_average(floor.scores)
        cells.append(_margin_text(row.margins.get("paper_average"), avg, base))
        lines.append(f"| {row.label} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _margin_text(paired, value, base) -> str:
    """A margin cell: the paired margin with its interval, else the difference of means."""
    if paired is not None:
        return f"{paired[0]:+.1f} [{paired[1]:+.1f}, {paired[2]:+.1f}]"
    return "-" if value is None or base is None else f"{value - base:+.1f}"


def _pct_text(value) -> str:
    return "-" if value is None else f"{value:.2f}"


def _dataset_folder(args: argparse.Namespace) -> tuple[str | None, str | None]:
    """``--dataset`` as a build folder (a Hub repo at ``--revision`` fetched first: its
    ``--split`` shards, manifest and baselines) and the note naming it; (None, None) without
    ``--dataset``."""
    if not args.dataset:
        if args.revision:
            raise MisiError(f"--revision {args.revision}: needs --dataset (a Hub repo id)")
        return None, None
    check_split(args.split)
    folder, provenance = local_copy(args.dataset, args.revision, (args.split,))
    return str(folder), f"Dataset of the chance levels and profile: {provenance.label()}."


def _by_factor(args: argparse.Namespace, results: list, floor) -> tuple[str, str]:
    """``--by-factor``: the breakdown by factor of the merged ``results`` (``factor_plots``),
    on the blind floor the chance rows already computed."""
    if not args.dataset:
        raise MisiError("--by-factor needs --dataset (the build the results were scored on)")
    from .factor_plots import factor_section  # noqa: PLC0415

    return factor_section(results, Path(args.dataset), args.split, floor)


def cmd_report(args: argparse.Namespace) -> int:
    dataset, dataset_note = _dataset_folder(args)
    args.dataset = dataset  # the exact-match table reads the same folder
    rows, notes, results, floor = _collect(
        args.results, dataset, args.split, not args.no_paper, args.paper_rows
    )
    if not any(r.kind == "model" for r in rows):
        raise MisiError("no model results to report")
    if dataset_note:
        notes.append(dataset_note)
    fig = draw(rows, title=args.title)
    png = figure_png(fig)
    extra, by_factor = _by_factor(args, results, floor) if args.by_factor else ("", "")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page(rows, png, title=args.title, notes=notes, extra=extra), encoding="utf-8")
    if args.png:
        Path(args.png).parent.mkdir(parents=True, exist_ok=True)
        Path(args.png).write_bytes(png)
    table = markdown_table(rows)
    if args.markdown:  # the score table alone (one line per row); intervals are in the HTML
        Path(args.markdown).write_text(table, encoding="utf-8")
    print(table)
    intervals = markdown_intervals(rows)
    if intervals:
        print("Model rows: questions (n) and 95% intervals, in percent:\n\n" + intervals)
    margins = margin_table(rows)
    if margins:
        print(margins)
    exact = _exact_table(args)
    if exact:
        print(exact)
    if by_factor:
        print(by_factor)
    print(
        f"wrote {out}"
        + (f", {args.png}" if args.png else "")
        + (f", {args.markdown}" if args.markdown else "")
    )
    return 0


def add_commands(sub) -> None:
    """Add ``report`` to the subparsers ``sub``."""
    p = sub.add_parser(
        "report",
        help="an HTML/PNG/markdown report of model scores beside the paper's rows and chance",
    )
    p.add_argument(
        "results",
        nargs="+",
        metavar="RESULT",
        help="a result file or folder (misi-bench score JSON, a misi-bench eval run folder, "
        "lmms-eval/lm-eval results JSON, VLMEvalKit acc.csv/report.json), optionally as LABEL=PATH",
    )
    p.add_argument("--out", required=True, help="the HTML file to write (self-contained)")
    p.add_argument("--png", help="also write the chart as a PNG (for slides)")
    p.add_argument("--markdown", help="also write the markdown table here (it is always printed)")
    p.add_argument(
        "--dataset",
        help="the build folder or Hub repo id the results were scored on (adds its chance levels)",
    )
    p.add_argument(
        "--revision",
        help="Hub revision of --dataset: a release tag (v1.0.0), a branch or a commit (default: "
        "$MISI_BENCH_REVISION, else the default branch); the report's notes name it",
    )
    p.add_argument(
        "--split", default="test", help="split of --dataset for the chance levels (default test)"
    )
    p.add_argument("--title", default="MiSI-Bench results", help="title of the page and the chart")
    p.add_argument(
        "--no-paper", action="store_true", help="leave out the paper's rows (= --paper-rows none)"
    )
    p.add_argument("--paper-rows", default="default", help=PAPER_ROWS_HELP)
    p.add_argument(
        "--by-factor",
        action="store_true",
        help="add the breakdown by factor (needs --dataset and per-question results): per task "
        "a panel per factor, the paper's Fig. 4 panels, and with two results their paired "
        "difference per bin",
    )
    p.set_defaults(func=cmd_report)
