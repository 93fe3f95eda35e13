"""Benchmark of the checks' second reading (``builder/checks/second_reading``): what reading each
structure again with biotite, and comparing it atom by atom with the generator's record, adds to
the checks' reading of a complex.

    python -m scripts.bench_second_reading [--repeat 3]

For the 19 embedded samples and the three raw test entries (real files), measured in the same
run: the first reading (``chemistry.structure.load_complex``: gemmi, RDKit, our checks), the
checks' whole reading of a complex without the second reading (load + ``tasks.base.annotate``:
camera and H-bonds, ``plip`` mode), and the second reading (biotite + the comparison); prints
milliseconds per complex (best of ``--repeat``), atoms compared, the second reading's share of
the checks' reading, and any disagreement (there should be none).
"""

from __future__ import annotations

import argparse
import logging
import time

from misi_bench.builder.checks.second_reading import second_reading_problems
from misi_bench.builder.chemistry.samples import sample_refs
from misi_bench.builder.chemistry.structure import load_complex
from misi_bench.builder.core.constants import DEFAULT_IMAGE_SIZE
from misi_bench.builder.tasks.base import annotate

from .fixtures import raw_refs

log = logging.getLogger(__name__)


def _best(fn, repeat: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    refs = list(sample_refs()) + list(raw_refs())
    load_s = whole_s = second_s = 0.0
    atoms, problems = 0, []
    for ref in refs:
        t_load, cx = _best(lambda r=ref: load_complex(r), args.repeat)
        t_ann, _ = _best(lambda c=cx: annotate(c, DEFAULT_IMAGE_SIZE, "plip"), args.repeat)
        t_second, found = _best(lambda r=ref, c=cx: second_reading_problems(r, c), args.repeat)
        load_s, whole_s, second_s = load_s + t_load, whole_s + t_load + t_ann, second_s + t_second
        atoms += found.checked
        problems += list(found.problems)
    n = len(refs)
    log.info("complexes: %d (19 samples, 3 raw entries), heavy atoms compared: %d", n, atoms)
    log.info("first reading (load_complex): %.1f ms per complex", 1000 * load_s / n)
    log.info("checks' reading without the second (load + annotate): %.1f ms", 1000 * whole_s / n)
    log.info("second reading (biotite + comparison): %.1f ms per complex", 1000 * second_s / n)
    log.info(
        "second reading / first reading: %.2f; / checks' reading: %.2f",
        second_s / load_s,
        second_s / whole_s,
    )
    log.info("disagreements: %d%s", len(problems), f" (first: {problems[0]})" if problems else "")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
