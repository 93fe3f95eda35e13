"""The dataset card (README.md with Hub YAML metadata), generated from ``dataset_card/``."""

from __future__ import annotations

import logging
import math
from importlib import resources
from pathlib import Path

import yaml

from .. import scoring
from ..checks import blind, card_stats, pixel_solver
from ..core.constants import hub_repo_id, version_label
from ..core.profiles import LEGACY_PROFILE, PROFILES
from ..core.registry import TASK_BY_NAME, TASK_NAMES, TASK_SPECS
from ..core.shards import config_glob, shard_prefix
from ..scoring.floors import FLOOR_LABEL
from ..store.parquet import SPLIT_ORDER, features
from . import card_factors, card_power, card_tasks, card_text
from .card_checks import checks_text
from .card_examples import example_sheet, legibility_text

log = logging.getLogger(__name__)

ALL_CONFIG = "all"


def _card_file(name: str) -> str:
    return resources.files("misi_bench.dataset_card").joinpath(name).read_text(encoding="utf-8")


def _size_category(n: int) -> str:
    for limit, label in (
        (1_000, "n<1K"),
        (10_000, "1K<n<10K"),
        (100_000, "10K<n<100K"),
        (1_000_000, "100K<n<1M"),
    ):
        if n < limit:
            return label
    return "1M<n<10M"


def ordered_tasks(manifest: dict) -> list[str]:
    """The manifest's task configs in T1..T9 order (a manifest read back from JSON is sorted)."""

    return [t for t in TASK_NAMES if t in manifest["counts"]] + sorted(
        set(manifest["counts"]) - set(TASK_NAMES)
    )


def card_metadata(manifest: dict) -> dict:
    """Hub YAML metadata: licence, task categories, size, configs (nine tasks + ``all``)."""

    counts = manifest["counts"]
    tasks = ordered_tasks(manifest)
    configs = []
    for task in tasks:
        files = [
            {"split": s, "path": config_glob(task, s)} for s in SPLIT_ORDER if counts[task].get(s)
        ]
        configs.append({"config_name": task, "data_files": files})
    all_files = [
        {"split": s, "path": [config_glob(t, s) for t in tasks if counts[t].get(s)]}
        for s in SPLIT_ORDER
        if any(counts[t].get(s) for t in tasks)
    ]
    # ``all`` is the default config: ``load_dataset(repo)`` without a name loads the nine tasks
    configs.append({"config_name": ALL_CONFIG, "data_files": all_files, "default": True})
    feats = features()._to_yaml_list()

    def split_bytes(task: str, split: str) -> int:
        return sum(
            v["bytes"]
            for k, v in manifest["shards"].items()
            if k.startswith(shard_prefix(task, split))
        )

    info = []
    for task in [*tasks, ALL_CONFIG]:
        members = tasks if task == ALL_CONFIG else [task]
        splits = [
            {
                "name": s,
                "num_bytes": sum(split_bytes(t, s) for t in members),
                "num_examples": sum(counts[t].get(s, 0) for t in members),
            }
            for s in SPLIT_ORDER
        ]
        info.append(
            {
                "config_name": task,
                "features": feats,
                "splits": [s for s in splits if s["num_examples"]],
            }
        )
    total = sum(manifest["totals"]["questions"].get(s, 0) for s in ("train", "test"))
    return {
        "license": "cc-by-4.0",
        "language": ["en"],
        "pretty_name": "MiSI-Bench",
        "task_categories": ["visual-question-answering", "image-text-to-text"],
        "tags": [
            "chemistry",
            "biology",
            "protein-ligand",
            "spatial-reasoning",
            "molecules",
            "benchmark",
        ],
        "size_categories": [_size_category(total)],
        "configs": configs,
        "dataset_info": info,
    }


def _counts_table(manifest: dict) -> str:
    lines = ["| config | train | test | tiny |", "|---|---:|---:|---:|"]
    for task in ordered_tasks(manifest):
        c = manifest["counts"][task]
        lines.append(
            f"| `{task}` | {c.get('train', 0)} | {c.get('test', 0)} | {c.get('tiny', 0)} |"
        )
    t = manifest["totals"]["questions"]
    lines.append(f"| **total** | {t.get('train', 0)} | {t.get('test', 0)} | {t.get('tiny', 0)} |")
    return "\n".join(lines)


def _pct(value, digits: int = 1) -> str:
    return "–" if value is None or math.isnan(value) else f"{100 * value:.{digits}f}"


def card_scored(out: Path, manifest: dict, seed: int = 0, pool=None) -> dict:
    """The chance and text-only entries of every train and test question (:mod:`.card_stats`),
    shared by the baselines table and the blind floor."""
    data = blind.read_blind(out)
    model = (data or {}).get("text_model") or {}
    return card_stats.card_scores(out, ordered_tasks(manifest), model, seed, pool)


def card_floors(out: Path, scored: dict) -> dict:
    """The build's blind floors (``scoring.floors``; ``{"score", "exact"}``) over every train and
    test question: the chance kinds and the text-only rule from ``scored``, the options-only rules
    from ``baselines.json`` (train and test pooled)."""
    from ..scoring import floors  # noqa: PLC0415  (the scorer's floor module)

    by_rule: dict[str, dict] = {"score": {}, "exact": {}}
    for kind, entries in scored.items():
        if entries:
            report = scoring.aggregate(entries)
            by_rule["score"][kind] = scoring.paper_columns(report)
            by_rule["exact"][kind] = scoring.paper_exact_columns(report)
    data = blind.read_blind(out)
    for rule in (*blind.OPTION_RULES, blind.IMAGE_RULE) if data else ():
        columns = {}
        for task in TASK_BY_NAME:
            cells = [v.get(rule, {}).get(task) for v in data["splits"].values()]
            cells = [c for c in cells if c and c["n"]]
            if cells:
                key = f"T{TASK_BY_NAME[task].number}"
                columns[key] = sum(c["score"] * c["n"] for c in cells) / sum(c["n"] for c in cells)
        by_rule["score"][rule] = by_rule["exact"][rule] = columns
    return {m: floors.floor_from_columns(m, by_rule[m]) for m in ("score", "exact")}


def baseline_table(
    out: Path, manifest: dict, seed: int = 0, pool=None, scored: dict | None = None
) -> str:
    """Chance levels (score, %) of the scorer's baselines, measured on every train and test
    question of this build (more questions than the test split alone, so less noise); the random
    baseline is averaged over ``card_stats.RANDOM_DRAWS`` draws per question (measured one
    shard file per job, in ``pool`` when given: :mod:`.card_stats`). Columns: the tasks (T4 also as
    its positive and negative halves), then the paper's average and the 9- and 7-task averages
    (:data:`scoring.AVERAGE_DEFINITIONS`)."""
    tasks = ordered_tasks(manifest)
    columns = [(t, "tasks") for t in tasks]
    for spec in TASK_SPECS:  # a task with halves (T4) also shows its positive and negative halves
        if spec.halves is not None and spec.name in tasks:
            at = [c for c, _ in columns].index(spec.name) + 1
            columns[at:at] = [(sub, "subsets") for sub in spec.half_names()]
    averages = list(scoring.AVERAGE_DEFINITIONS)
    rows_md = [
        "| baseline | " + " | ".join([c for c, _ in columns] + averages) + " |",
        "|---|" + "---:|" * (len(columns) + len(averages)),
    ]
    names = {
        "random": "random answer in range / random letter",
        "always_no": "constant (`No`, `None`, `A`)",
    }
    data = blind.read_blind(out)
    if scored is None:
        scored = card_scored(out, manifest, seed, pool)

    def row(label: str, entries: list) -> str:
        report = scoring.aggregate(entries)
        cells = [_pct((report[section].get(name) or {}).get("score")) for name, section in columns]
        cells += [_pct(report[name]) for name in averages]
        return f"| {label} | " + " | ".join(cells) + " |"

    rows_md += [row(names[kind], scored[kind]) for kind in card_stats.CHANCE_KINDS]
    if data and scored[card_stats.TEXT_ONLY]:
        rows_md.append(row(scoring.BLIND_NAMES["text_only"], scored[card_stats.TEXT_ONLY]))
    rows_md += _best_option_rule_row(data, columns, averages)
    rows_md.append(pixel_solver.baseline_row(out, tasks, pool, [c for c, _ in columns] + averages))
    extra = blind.blind_table(data, tasks)
    note = blind_note(tasks, manifest.get("config", {}).get("decoys", "paper"))
    note += "\n\n" + " ".join(_card_file("decoys.md").split())
    return "\n".join(rows_md) + (f"\n\n{note}\n\n{extra}" if extra else "")


def blind_note(tasks: list[str], decoys: str) -> str:
    """The paragraph under the baselines table: what the blind baselines read (the options-only
    rules of the build's choice tasks, from their data files), and the build's decoy mode."""
    rules = card_tasks.options_only_text(tasks)
    options = f"*options only* reads the four options alone ({rules}), " if rules else ""
    return (
        f"Blind baselines never look at the pictures (docs/decoys.md): {options}*text only* "
        "answers every question of a task with the train split's most frequent answer. A score "
        "shows use of the pictures only where it beats these rows. Decoy mode of this build: "
        f"**{decoys}**."
    )


def _best_option_rule_row(
    data: dict | None, columns: list[tuple[str, str]], averages: list[str]
) -> list[str]:
    """The main table's row of the best options-only rule (train and test pooled, as above)."""
    if not data:
        return []
    rows = []
    pooled: dict[str, float] = {}
    for rule in (*blind.OPTION_RULES, blind.IMAGE_RULE):
        for task, _ in columns:
            cells = [v.get(rule, {}).get(task) for v in data["splits"].values()]
            cells = [c for c in cells if c and c["n"]]
            if cells:
                score = sum(c["score"] * c["n"] for c in cells) / sum(c["n"] for c in cells)
                pooled[task] = max(pooled.get(task, 0.0), score)
    if pooled:
        cells = [_pct(pooled.get(name)) for name, _ in columns] + ["–"] * len(averages)
        rows.append(f"| {scoring.BLIND_NAMES[blind.BEST_RULE]} | " + " | ".join(cells) + " |")
    return rows


def paper_reference_table(profile: str, out: Path | None = None, floors: dict | None = None) -> str:
    """The paper's Tables 1 and 2 in full (%, every row with its rank; arXiv 2512.10867v2) and,
    as a row under them, the train split's most frequent answer scored on this build's test
    questions (from ``baselines.json`` when ``out`` has one). Rows are labelled "not comparable"
    unless the build's profile asks the paper's questions."""
    data = blind.read_blind(out) if out is not None else None
    test = ((data or {}).get("splits") or {}).get("test") or {}
    baselines = {k: test[k] for k in ("text_only",) if test.get(k)}
    return scoring.format_paper_rows_markdown(
        None,
        profile,
        scoring.select_paper_rows("all"),
        baselines,
        title=False,
        where="this build's test split",
        floors=floors,
        floor_where="every question of this build",
    ).strip()


def paper_title(profile: str, manifest: dict | None = None, floors: dict | None = None) -> str:
    """The line above the paper's rows: comparable or not (above which floor), qualified for a
    small build."""
    source = scoring.paper_reference_rows()[0].source
    if PROFILES[profile].paper_comparable:
        caveat = card_text.size_caveat(manifest) if manifest else ""
        grounds = card_text.comparison_grounds(manifest) if manifest else "the blind floor"
        return (
            f"Published results ({source}: Tables 1 and 2 in full; %). A comparison with them "
            f"rests on {grounds}{_floor_words(floors)}. On those terms they are comparable with "
            f"this build above its blind floor.{caveat}"
        )
    return (
        f"Published results ({source}; %): **{scoring.NOT_COMPARABLE}** with this `{profile}` build, whose "
        "questions state more than the paper's (see the table below); shown for orientation only:"
    )


def _floor_words(floors: dict | None) -> str:
    """The blind floor named in the comparability sentence."""
    floor = (floors or {}).get("score")
    average = getattr(floor, "paper_average", None)
    figure = f", paper average {100 * average:.2f}%" if average is not None else ""
    return (
        f" (the row `{FLOOR_LABEL}` of Table 1, the best blind baseline of each column on every "
        f"question of this build{figure}): a model or a published row shows use of the pictures "
        "only by its margin above that row; `misi-bench score` prints a model's margin with its "
        "95% interval"
    )


#: The card's description of each H-bond mode (``--hbonds``).
HBOND_CARD_TEXT = {
    "chimerax": (
        "ChimeraX's criteria as the paper used them: the Mills & Dean (1996) donor and acceptor\n"
        "  classes (IDATM-style atom types: residue templates for the protein, RDKit chemistry for the\n"
        "  ligand) with their distance and angle limits relaxed by 0.4 Å and 20°; explicit hydrogens\n"
        "  where the input has them (ligand: the MOL2's, protein: the pocket file's), positions inferred\n"
        "  where the heavy atoms fix them, generic limits for atoms of no class (docs/hbonds.md)."
    ),
    "plip": (
        "donors/acceptors from a per-residue table (protein; His tautomer from input\n"
        "  hydrogens) and RDKit's BaseFeatures definitions on the ligand's bond orders, charges and\n"
        "  hydrogens (amidine/guanidine groups as cations); donor-acceptor distance ≤ 4.1 Å (PLIP's\n"
        "  limit, chosen against PLIP on held-out complexes); D-H…A ≥ 100° with input hydrogens or\n"
        "  hydrogens placed on planar N donors (a hydrogen may bond two acceptors), else every\n"
        "  neighbour-donor-acceptor and neighbour-acceptor-donor angle ≥ 70° and at most one bond per\n"
        "  hydrogen the donor carries."
    ),
}


def render_card(out: Path, manifest: dict, repo_or_folder: str | None = None, pool=None) -> str:
    meta = card_metadata(manifest)
    examples = [e for e in (example_sheet(out, t) for t in ordered_tasks(manifest)) if e]
    cfg = manifest["config"]
    version = manifest.get("version")
    skipped = manifest.get("skipped_complexes", {})
    profile = manifest.get("profile", LEGACY_PROFILE)
    scored = card_scored(out, manifest, pool=pool)
    floors = card_floors(out, scored)
    tasks = ordered_tasks(manifest)
    body = _card_file("template.md").format(
        asks=card_tasks.asks_text(tasks),
        task_table=card_tasks.task_table(tasks),
        scoring=card_tasks.scoring_paragraph(tasks),
        averages=card_tasks.averages_text(),
        detectable=card_power.detectable_paragraph(out),  # issue 48: its own paragraph
        factors=card_factors.factors_section(out, manifest, tasks),  # issue 51
        profile=profile,
        profile_text=PROFILES[profile].card_text
        + (" This build is small: see its Limitations." if card_text.small_tasks(manifest) else ""),
        paper_title=paper_title(profile, manifest, floors),
        provenance=card_text.provenance(manifest),
        tiny_text=card_text.tiny_text(manifest),
        limitations=card_text.limitations(out, manifest),
        fidelity_table=_card_file("fidelity.md").strip(),
        version_label=version_label(
            manifest.get("misi_bench_version", "(not recorded)"),
            manifest["builder_version"],
            cfg.get("template_version"),
        ),
        config_hash=manifest["config_hash"],
        seed=manifest["seed"],
        version_line=card_text.version_line(repo_or_folder or _default_repo(), version),
        examples="\n\n".join(examples),
        legibility=legibility_text(manifest),
        checks=checks_text(manifest),
        counts_table=_counts_table(manifest),
        n_train=manifest["complexes"]["train"],
        n_test=manifest["complexes"]["test"],
        images_train=manifest["totals"]["images"]["train"],
        images_test=manifest["totals"]["images"]["test"],
        skipped_line=(
            f"Complexes skipped: {len(skipped)} (reasons in `manifest.json`)." if skipped else ""
        ),
        image_size=cfg["image_size"],
        pocket_cutoff=cfg["pocket_cutoff"],
        hbonds=cfg.get("hbonds", "plip"),
        hbond_rule=HBOND_CARD_TEXT[cfg.get("hbonds", "plip")],
        repo_or_folder=repo_or_folder or _default_repo(),
        **card_text.snippets(repo_or_folder or _default_repo(), version),
        baselines_table=baseline_table(out, manifest, pool=pool, scored=scored),
        paper_table=paper_reference_table(profile, out, floors),
        licence=_card_file("licence.md").strip(),
        citation=_card_file("citation.bib").strip(),
    )
    header = yaml.dump(meta, Dumper=_PlainDumper, sort_keys=False, allow_unicode=True, width=100)
    return f"---\n{header}---\n\n{body}"


class _PlainDumper(yaml.SafeDumper):
    """Writes repeated values in full (no YAML anchors/aliases in the Hub metadata)."""

    def ignore_aliases(self, data) -> bool:
        return True


def _default_repo() -> str:
    return hub_repo_id()


def write_card(out: Path, manifest: dict, repo_or_folder: str | None = None, pool=None) -> Path:
    """Write the card; ``pool`` (a process pool) spreads the pixel-solver baseline's questions."""
    path = Path(out) / "README.md"
    path.write_text(render_card(Path(out), manifest, repo_or_folder, pool), encoding="utf-8")
    return path
