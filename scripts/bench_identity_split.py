"""Benchmark of the identity split (``builder/store/identity_split``): MMseqs2 clustering of
5,000 complexes' chains, the global-alignment check, and reading sequences from real files.

The chains are made from REAL protein sequences at a controlled divergence (a speed benchmark,
not data): the SEQRES chains of the raw test entries (``tests/data/raw``, ``tests/data/heldout``)
and the pocket sequences of the embedded samples are joined into family roots of 150-400
residues; each root is then substituted at 60% of its positions (so that roots share about what
unrelated proteins share), and each family's members at 0-40% of positions (with an insertion or
deletion now and then). Family sizes are drawn geometrically (mean 4), one or two distinct chains
per complex. Everything is drawn from one seeded generator.

    python -m scripts.bench_identity_split [--complexes 5000] [--threads 2] [--seed 0]

Prints: sequence reading per complex (real files), clustering seconds at ``--threads`` and at one
thread (the same components asserted), components and the largest one, the draw, and the
alignment check's cost per pair with the pairs a check of this size aligns.
"""

from __future__ import annotations

import argparse
import logging
import random
import time
from pathlib import Path

from misi_bench.builder.chemistry.samples import sample_refs
from misi_bench.builder.chemistry.sequences import ComplexSequences, pair_identity, read_sequences
from misi_bench.builder.store import identity_split as ids
from misi_bench.builder.store.sources import DEFAULT_TEST_FRACTION

from .fixtures import raw_refs

log = logging.getLogger(__name__)
AMINO = "ACDEFGHIKLMNPQRSTVWY"


def real_sequences() -> tuple[list[str], float, int]:
    """The real chains (and seconds per complex to read them, complexes read)."""
    refs = list(sample_refs()) + list(raw_refs())
    heldout = Path("tests/data/heldout")
    if heldout.is_dir():
        from misi_bench.builder.store.sources import discover  # noqa: PLC0415

        refs += discover(heldout)
    start = time.perf_counter()
    found = [read_sequences(r) for r in refs]
    seconds = (time.perf_counter() - start) / max(1, len(refs))
    return sorted({c for s in found for c in s.chains}), seconds, len(refs)


def _mutate(seq: str, rate: float, rng: random.Random) -> str:
    out = []
    for c in seq:
        roll = rng.random()
        if roll < rate:
            out.append(rng.choice(AMINO))
        elif roll < rate + 0.005:  # a deletion
            continue
        else:
            out.append(c)
        if rng.random() < 0.003:  # an insertion
            out.append(rng.choice(AMINO))
    return "".join(out)


def synthetic_plan(bases: list[str], complexes: int, seed: int) -> dict[str, tuple[str, ...]]:
    """PDB-like id -> chains of ``complexes`` complexes in families (module docstring)."""
    rng = random.Random(seed)
    pool = "".join(bases)
    out: dict[str, tuple[str, ...]] = {}
    while len(out) < complexes:
        length = rng.randint(150, 400)
        start = rng.randrange(0, max(1, len(pool) - length))
        roots = [_mutate(pool[start : start + length], 0.6, rng)]
        if rng.random() < 0.3:  # a second, different chain (a heterodimer)
            other = rng.randrange(0, max(1, len(pool) - 120))
            roots.append(_mutate(pool[other : other + 120], 0.6, rng))
        size = 1
        while rng.random() < 0.75 and size < 60:
            size += 1
        for _ in range(size):
            if len(out) >= complexes:
                break
            rate = rng.uniform(0.0, 0.4)
            out[f"x{len(out):05d}"] = tuple(_mutate(r, rate, rng) for r in roots)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--complexes", type=int, default=5000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--check-pairs", type=int, default=400, help="pairs aligned to time it")
    parser.add_argument(
        "--check-complexes",
        type=int,
        default=1000,
        help="complexes of the timed real check (0: none)",
    )
    parser.add_argument(
        "--compare-sensitivity",
        type=float,
        default=7.5,
        help="also cluster at this MMseqs2 sensitivity (0: skip): time and components",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    bases, read_s, read_n = real_sequences()
    print(f"reading sequences from real files: {1000 * read_s:.1f} ms per complex ({read_n} read)")
    chains_of = synthetic_plan(bases, args.complexes, args.seed)
    chains = sorted({c for cs in chains_of.values() for c in cs})
    mean = sum(map(len, chains)) / len(chains)
    print(f"{len(chains_of)} complexes, {len(chains)} distinct chains, mean length {mean:.0f}")
    timings = {}
    labels = {}
    for threads in sorted({args.threads, 1}, reverse=True):
        ids._clusters.cache_clear()
        start = time.perf_counter()
        labels[threads] = ids.cluster_chains(chains, threads=threads)
        timings[threads] = time.perf_counter() - start
        print(f"mmseqs cluster, {threads} thread(s): {timings[threads]:.1f} s")
    same = len({tuple(v) for v in labels.values()}) == 1
    print(f"same clusters at every thread count: {same}")
    if not same:
        raise SystemExit("clusters differ between thread counts")
    if 1 in timings and args.threads != 1:
        print(f"ratio 1 thread / {args.threads}: {timings[1] / timings[args.threads]:.2f}")
    sequences = {p: ComplexSequences(p, cs, "seqres") for p, cs in chains_of.items()}
    start = time.perf_counter()
    plan = _plan(sequences, chains, labels[args.threads])
    members = plan.members()
    largest = max(len(m) for m in members)
    print(
        f"components: {len(members)}, largest {largest} complexes "
        f"({100 * largest / len(chains_of):.1f}%), built in {time.perf_counter() - start:.2f} s"
    )
    if args.compare_sensitivity:
        _compare(args, chains, sequences, len(members), timings[args.threads])
    rng = random.Random(args.seed)
    pairs = [(rng.choice(chains), rng.choice(chains)) for _ in range(args.check_pairs)]
    start = time.perf_counter()
    for a, b in pairs:
        pair_identity(a, b)
    per_pair = (time.perf_counter() - start) / len(pairs)
    n_test = round(DEFAULT_TEST_FRACTION * len(chains))
    total = n_test * (len(chains) - n_test)
    print(
        f"global alignment (parasail): {1000 * per_pair:.3f} ms per pair; the draw's guard and "
        f"the check of a split of these chains align about {total:,} pairs each = "
        f"{total * per_pair / 60:.1f} min on one core (projected)"
    )
    if args.check_complexes:
        _time_check(plan, args)


def _time_check(plan: ids.IdentityPlan, args) -> None:
    """The real check (``cross_split_identity``) on the first ``--check-complexes`` complexes of
    the synthetic set, split by a seeded draw of whole components: seconds and pairs."""
    keep = sorted(plan.sequences)[: args.check_complexes]
    sequences = {p: plan.sequences[p] for p in keep}
    component = {p: plan.component[p] for p in keep}
    part = ids.IdentityPlan(component, sequences, plan.tool)
    rng = random.Random(args.seed)
    firsts = sorted({c for c in component.values()})
    test_components = {c for c in firsts if rng.random() < DEFAULT_TEST_FRACTION}
    splits = {p: "test" if component[p] in test_components else "train" for p in keep}
    test = {c for p in keep if splits[p] == "test" for c in sequences[p].chains}
    train = {c for p in keep if splits[p] == "train" for c in sequences[p].chains}
    start = time.process_time()
    check = ids.cross_split_identity(part.sequences, splits)
    seconds = time.process_time() - start
    print(
        f"check of {len(keep)} complexes ({len(test)} test x {len(train)} train distinct chains "
        f"= {len(test) * len(train):,} pairs): {seconds:.1f} CPU-s, highest "
        f"{check['highest']['identity']:.3f}"
    )


def _compare(args, chains, sequences, components: int, seconds: float) -> None:
    """Cluster again at ``--compare-sensitivity``: its time and components beside the default's."""
    settings = list(ids.MMSEQS_SETTINGS)
    settings[settings.index("-s") + 1] = str(args.compare_sensitivity)
    ids._clusters.cache_clear()
    start = time.perf_counter()
    rep = ids.cluster_chains(chains, threads=args.threads, settings=tuple(settings))
    other = time.perf_counter() - start
    count = len(set(_plan(sequences, chains, rep).component.values()))
    print(
        f"sensitivity {args.compare_sensitivity}: {other:.1f} s ({other / seconds:.1f} times), "
        f"{count} components (default settings: {components})"
    )


def _plan(sequences: dict, chains: list[str], rep: list[int]) -> ids.IdentityPlan:
    """The components of the synthetic complexes from MMseqs2's clusters (as ``identity_plan``)."""
    return ids.IdentityPlan(ids.join_components(sequences, chains, rep), sequences, "MMseqs2")


if __name__ == "__main__":
    main()
