"""Options-only baselines of the choice tasks per decoy mode, on many questions (docs/decoys.md).

    python -m scripts.measure_decoys [--seeds 0-11] [--image-seeds 0-4] [--profile explicit|paper]
        [--modes paper balanced] [--sources samples tests/data/heldout tests/data/copies]
        [--json-out FILE]

Generates the T5, T6 and T8 questions of every complex of each source (the build's own generators
and question random streams, train counts, partners from the same source) for each seed and each
decoy mode, without writing a dataset. Scores, per task and mode, the options-only rules with
95% Wilson intervals: T8 the scorer's rules on the option text (``scoring.blind``); T5/T6 the
option image nearest to the other three (``checks.blind.image_medoid``, the four option images
rendered as the build renders them; seeds ``--image-seeds``) and, on every seed, the same rule in
transformation space (the option whose projected model is nearest, in mean pixel distance, to the
projections after the other three options). Prints a markdown table; with ``--profile paper``
also the T7 displacements |D| (median, quartiles, share within the paper's 9-17 Å).
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from pathlib import Path

import numpy as np
from misi_bench.builder import scoring
from misi_bench.builder.checks import blind
from misi_bench.builder.core.constants import DEFAULT_POCKET_CUTOFF
from misi_bench.builder.core.errors import MisiError
from misi_bench.builder.core.profiles import EXPLICIT, PROFILE_NAMES, PROFILES
from misi_bench.builder.dataset.units import AnnotationCache
from misi_bench.builder.operations.language import parse_operation, parse_operations
from misi_bench.builder.scene.raster import render_image
from misi_bench.builder.scoring.blind import OPTION_RULES, pick_lowest, rule_cells
from misi_bench.builder.store.sources import discover
from misi_bench.builder.tasks import generator
from misi_bench.builder.tasks.base import TaskContext, projected_difference

log = logging.getLogger(__name__)
TASKS = ("translation_rotation", "rotation_rotation", "interaction_location")
MODES = ("paper", "balanced")
DEFAULT_SOURCES = ("samples", "tests/data/heldout", "tests/data/copies")


def _seeds(text: str) -> list[int]:
    if "-" in text:
        lo, hi = text.split("-")
        return list(range(int(lo), int(hi) + 1))
    return [int(v) for v in text.split(",")]


def _ops_medoid(inst, load, rng) -> str:
    """Transformation-space medoid of a T5/T6 question's options (projected model distance)."""
    meta = inst.metadata
    options = [tuple(parse_operation(o) for o in ops) for ops in meta["option_operations"]]
    if inst.task == "translation_rotation":
        ann, base = load(meta["target"]), ()
    else:
        ann = load(meta["pdb_id"])
        base = tuple(parse_operation(o) for o in meta["operations"])
    d = np.zeros((4, 4))
    for i in range(4):
        for j in range(i + 1, 4):
            d[i, j] = d[j, i] = projected_difference(ann, options[i], options[j], base=base)
    return pick_lowest(d.sum(axis=1), rng)


def _earlier_tally(earlier) -> dict:
    """``{task: {mode: {rule: [right, n, {complex: [right, n]}]}}}`` summed over the results of
    other runs (their ``by_complex`` counts, what the intervals resample)."""
    tally: dict = {}
    for result in earlier:
        for task, modes in result.items():
            if task not in TASKS:
                continue
            for mode, rules in modes.items():
                for rule, c in rules.items():
                    cell = (
                        tally.setdefault(task, {}).setdefault(mode, {}).setdefault(rule, [0, 0, {}])
                    )
                    cell[0] += int(c["right"])
                    cell[1] += int(c["n"])
                    for unit, (k, n) in (c.get("by_complex") or {}).items():
                        got = cell[2].setdefault(unit, [0, 0])
                        got[0], got[1] = got[0] + int(k), got[1] + int(n)
    return tally


def _readable_ids(cache, refs) -> list[str]:
    """The entries that load (a warning for each one that does not), in id order."""
    ids = []
    for pdb_id in sorted(refs):
        try:
            cache.get(pdb_id)
            ids.append(pdb_id)
        except MisiError as exc:
            log.warning("%s: %s", pdb_id, exc)
    return ids


def _interval(task: str, by_complex: dict) -> list[float] | None:
    """The scorer's 95% interval (complexes resampled) of per-complex ``[right, n]`` counts."""
    scores = [
        (f"{unit}/{j}", task, unit, float(j < k))
        for unit, (k, n) in sorted(by_complex.items())
        for j in range(n)
    ]
    return rule_cells(scores)[task]["ci95"] if scores else None


def _with_intervals(tally: dict) -> dict:
    """The tallies as results: n, right, score (0-1), the per-complex counts and the 95%
    interval of the scorer's one method (None for counts of runs that kept no complexes)."""
    out = {}
    for task, modes in tally.items():
        for mode, rules in modes.items():
            for rule, (k, n, by_complex) in rules.items():
                whole = sum(c[1] for c in by_complex.values()) == n
                out.setdefault(task, {}).setdefault(mode, {})[rule] = {
                    "n": n,
                    "right": k,
                    "score": round(k / n, 4),
                    "ci95": _interval(task, by_complex) if whole else None,
                    "by_complex": by_complex,
                }
    return out


def docking_distances(sources, seeds, profile: str) -> list[int]:
    """|D| of every T7 question (train counts) of every complex of ``sources`` for ``seeds``."""
    out = []
    for source in sources:
        refs = {r.pdb_id: r for r in discover(source)}
        cache = AnnotationCache(refs, DEFAULT_POCKET_CUTOFF, 512)
        for seed in seeds:
            for pdb_id in _readable_ids(cache, refs):
                ctx = TaskContext.for_task("docking", cache.get(pdb_id), "train", seed, profile)
                out += [
                    abs(parse_operations(i.answer)[1].distance) for i in generator("docking")(ctx)
                ]
    return out


def distance_summary(distances: list[int]) -> dict:
    d = np.asarray(distances, dtype=np.float64)
    q = np.percentile(d, [10, 25, 50, 75, 90])
    return {
        "n": len(d),
        "min": float(d.min()),
        "p10_p25_median_p75_p90": [float(v) for v in q],
        "max": float(d.max()),
        "share_9_17": round(float(((d >= 9) & (d <= 17)).mean()), 4),
    }


def measure(
    sources,
    seeds,
    image_seeds,
    image_size: int = 512,
    tasks=TASKS,
    earlier=(),
    profile: str = EXPLICIT,
    modes=MODES,
) -> dict:
    """Tallies per task, mode and rule; ``earlier``: results of other runs (other seeds) to add."""
    tally = _earlier_tally(earlier)

    def add(task, mode, rule, right, unit):
        cell = tally.setdefault(task, {}).setdefault(mode, {}).setdefault(rule, [0, 0, {}])
        cell[0] += int(right)
        cell[1] += 1
        got = cell[2].setdefault(unit, [0, 0])
        got[0], got[1] = got[0] + int(right), got[1] + 1

    for source in sources:
        refs = {r.pdb_id: r for r in discover(source)}
        cache = AnnotationCache(refs, DEFAULT_POCKET_CUTOFF, image_size)
        ids = _readable_ids(cache, refs)
        for mode in modes:
            for seed in seeds:
                rng = np.random.default_rng(seed)
                for pdb_id in ids:
                    for task in tasks:
                        ctx = TaskContext.for_task(
                            task,
                            cache.get(pdb_id),
                            "train",
                            seed,
                            profile,
                            partners=[p for p in ids if p != pdb_id],
                            load_partner=cache.get,
                            decoys=mode,
                        )
                        for inst in generator(task)(ctx):
                            record = {
                                "task": task,
                                "options": list(inst.options),
                                "answer": inst.answer,
                            }
                            if task == "interaction_location":
                                for rule in OPTION_RULES:
                                    add(
                                        task,
                                        mode,
                                        rule,
                                        scoring.options_only_prediction(rule, record, rng)
                                        == inst.answer,
                                        f"{source}:{pdb_id}",
                                    )
                                continue
                            add(
                                task,
                                mode,
                                "option_ops_medoid",
                                _ops_medoid(inst, cache.get, rng) == inst.answer,
                                f"{source}:{pdb_id}",
                            )
                            if seed in image_seeds:
                                specs = [
                                    s for s in inst.images if s.view_name.startswith("option ")
                                ]
                                pixels = [
                                    np.asarray(render_image(cache.get(s.pdb_id).complex, s.request))
                                    for s in specs
                                ]
                                add(
                                    task,
                                    mode,
                                    "option_image_medoid",
                                    blind.image_medoid(pixels, rng) == inst.answer,
                                    f"{source}:{pdb_id}",
                                )
                log.info("%s %s seed %d done", source, mode, seed)
    return _with_intervals(tally)


def format_table(result: dict) -> str:
    lines = [
        "| task | decoys | rule | questions | score % | 95% interval | minus chance (points) |",
        "|---|---|---|---:|---:|---|---:|",
    ]
    for task in TASKS:
        for mode in MODES:
            for rule, c in result.get(task, {}).get(mode, {}).items():
                ci = c.get("ci95")
                span = f"{100 * ci[0]:.1f}-{100 * ci[1]:.1f}" if ci else "-"
                lines.append(
                    f"| {task} | {mode} | {rule} | {c['n']} | {100 * c['score']:.1f} | "
                    f"{span} | {100 * c['score'] - 25:+.1f} |"
                )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--sources", nargs="*", default=list(DEFAULT_SOURCES))
    parser.add_argument(
        "--seeds", default="0-11", help="seeds of T8 (and of T5/T6 transformation-space rule)"
    )
    parser.add_argument(
        "--image-seeds", default="0-4", help="seeds on which T5/T6 option images are rendered"
    )
    parser.add_argument("--configs", dest="configs", nargs="*", default=list(TASKS), choices=TASKS)
    parser.add_argument(
        "--add",
        nargs="*",
        default=[],
        help="JSON results of earlier runs (other seeds) to add to this run's",
    )
    parser.add_argument("--profile", default=EXPLICIT, choices=PROFILE_NAMES)
    parser.add_argument("--modes", nargs="*", default=list(MODES), choices=MODES)
    parser.add_argument("--json-out")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    start = time.perf_counter()
    result = measure(
        args.sources,
        _seeds(args.seeds),
        set(_seeds(args.image_seeds)) if args.image_seeds else set(),
        tasks=tuple(args.configs),
        earlier=[json.loads(Path(p).read_text(encoding="utf-8")) for p in args.add],
        profile=args.profile,
        modes=tuple(args.modes),
    )
    print(format_table(result))
    if PROFILES[args.profile].paper_comparable:  # the paper's T7 distances
        result["docking_distances"] = distance_summary(
            docking_distances(args.sources, _seeds(args.seeds), args.profile)
        )
        print(f"\nT7 |D| ({args.profile}): {result['docking_distances']}")
    print(f"\n{time.perf_counter() - start:.0f} s")
    if args.json_out:
        Path(args.json_out).write_text(
            json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
