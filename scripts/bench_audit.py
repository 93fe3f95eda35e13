"""Figures of the dataset audit and the pixel-only solver on a build of the samples.

    python -m scripts.bench_audit [--folder DIR] [--split test] [--workers 2]
        [--baseline REV] [--no-solver]

Without ``--folder`` it first builds the 19 embedded samples into a temporary folder (and
measures that build's CPU time, all processes). Prints, all measured in this one run:

* the wall and CPU time (all processes) of ``misi-bench audit`` on the split with 1 and with
  ``--workers`` processes, the speed-up, and the audit's CPU as a share of the build's CPU
  (goal, docs/scale.md: at most 15 %; docs/audit.md: the test split under two minutes);
* the per-task shares (reproduced, unique with a visible margin, answers legible);
* with ``--baseline REV`` (a git revision of this repository, e.g. ``main``, or 6d44f72, the
  code when issue 25 was filed): the T7 (docking) uniqueness check per question, timed question
  by question alternately with REV's code (``git archive`` into a temporary package) and this
  code, their ratio (goal >= 10x), and whether both give the same runner-up margins; and the
  whole split's audit with REV's code;
* the pixel solver's T1/T3 scores over train and test (``--no-solver`` skips them).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from misi_bench.builder.checks import pixel_solver
from misi_bench.builder.checks.audit import _Auditor, audit_dataset, select_rows
from misi_bench.builder.dataset.build import build_dataset
from misi_bench.builder.store.manifest import read_manifest

from .baseline import extract_revision


def _cpu() -> float:
    """CPU seconds of this process and of its finished children (pool workers)."""
    own, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _timed(fn, *args, **kwargs):
    wall, cpu = time.perf_counter(), _cpu()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - wall, _cpu() - cpu


#: The baseline's side of the comparison, run by REV's code in a child process (its package is a
#: ``git archive`` of REV's ``builder`` under another name): reads commands on stdin, answers one
#: JSON line each: ``t7 K`` (CPU seconds and margin of the T7 uniqueness check of question K of
#: the split) or ``audit`` (wall and CPU seconds of the whole split's audit).
_CHILD = """
import inspect, json, resource, sys, time
sys.path.insert(0, sys.argv[1])
try:  # the checks layer (issue 50) or, at an older REV, the dataset layer
    from {pkg}.checks.audit import TaskAudit, _Auditor, audit_dataset, select_rows
    from {pkg}.store.manifest import read_manifest
except ImportError:
    from {pkg}.dataset.audit import TaskAudit, _Auditor, audit_dataset, select_rows
    from {pkg}.dataset.manifest import read_manifest
folder, split = sys.argv[2], sys.argv[3]
auditor = _Auditor(read_manifest(folder), None)
rows = list(select_rows(folder, "docking", split, None, None))
OLD = "result" in inspect.signature(_Auditor.audit_row).parameters
def cpu():
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
print(json.dumps({{"rows": len(rows)}}), flush=True)
for line in sys.stdin:
    cmd = line.split()
    if cmd[0] == "t7":
        row = rows[int(cmd[1])]
        auditor.load(row["pdb_id"])
        result = TaskAudit()
        start = time.process_time()
        if OLD:  # the code at the issue's filing: findings folded into a TaskAudit
            auditor.audit_row(row, ("uniqueness",), result)
            margins = result.margins
        else:
            margins = [auditor.audit_row(row, ("uniqueness",)).margin]
        print(json.dumps({{"cpu": time.process_time() - start, "margin": margins}}), flush=True)
    else:
        wall, c = time.perf_counter(), cpu()
        audit_dataset(folder, split=split)
        print(json.dumps({{"wall": time.perf_counter() - wall, "cpu": cpu() - c}}), flush=True)
"""


class _Baseline:
    """REV's audit in a child process (see ``_CHILD``)."""

    def __init__(self, rev: str, into: Path, folder: Path, split: str):
        name = "misi_baseline"
        extract_revision(rev, into, name)
        self.child = subprocess.Popen(
            [sys.executable, "-c", _CHILD.format(pkg=name), str(into / "tree"), str(folder), split],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.rows = self._ask(None)["rows"]

    def _ask(self, command: str | None) -> dict:
        if command is not None:
            self.child.stdin.write(command + "\n")
            self.child.stdin.flush()
        return json.loads(self.child.stdout.readline())

    def t7(self, k: int) -> dict:
        return self._ask(f"t7 {k}")

    def audit(self) -> dict:
        return self._ask("audit")

    def close(self) -> None:
        self.child.stdin.close()
        self.child.wait(60)


def _docking_per_question(
    folder: Path, split: str, base: _Baseline
) -> tuple[list[float], list[float], bool]:
    """CPU seconds of the T7 uniqueness check per question, REV's and ours alternately, and
    whether the runner-up margins agree."""
    ours = _Auditor(read_manifest(folder), None)
    t_ours, t_base, same = [], [], True
    for k, row in enumerate(select_rows(folder, "docking", split, None, None)):
        ours.load(row["pdb_id"])
        theirs = base.t7(k)
        t_base.append(theirs["cpu"])
        start = time.process_time()
        found = ours.audit_row(row, ("uniqueness",))
        t_ours.append(time.process_time() - start)
        same &= theirs["margin"] == [found.margin]
    return t_base, t_ours, same


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument(
        "--folder", help="a built dataset folder (default: build the samples first)"
    )
    parser.add_argument("--split", default="test")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--baseline", help="git revision to compare with (e.g. main)")
    parser.add_argument("--no-solver", action="store_true", help="skip the pixel solver's scores")
    args = parser.parse_args(argv)
    print(
        f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} "
        f"on {os.cpu_count()} CPUs"
    )
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.folder) if args.folder else Path(tmp) / "samples"
        build_cpu = None
        if not args.folder:
            _, wall, build_cpu = _timed(
                build_dataset, source="samples", out=folder, workers=args.workers, progress=False
            )
            print(
                f"build of the samples ({args.workers} workers, with validation and sampled audit): "
                f"{wall:.1f} s wall, {build_cpu:.1f} s CPU"
            )
        results = {}
        for workers in sorted({1, args.workers}):
            report, wall, cpu = _timed(audit_dataset, folder, split=args.split, workers=workers)
            results[workers] = (report, wall, cpu)
            print(
                f"audit of the {args.split} split, {workers} worker(s): {wall:.1f} s wall, {cpu:.1f} s CPU"
            )
        report, wall1, cpu1 = results[1]
        print(report.format_text())
        if args.workers > 1:
            other = results[args.workers][0].summary()
            same = {k: v for k, v in other.items() if k != "seconds"} == {
                k: v for k, v in report.summary().items() if k != "seconds"
            }
            print(
                f"speed-up 1 -> {args.workers} workers: {wall1 / results[args.workers][1]:.2f}x wall "
                f"(same report: {same})"
            )
        if build_cpu:
            print(f"audit CPU / build CPU: {cpu1 / build_cpu:.1%} (goal <= 15%)")
        if args.baseline:
            base = _Baseline(args.baseline, Path(tmp), folder, args.split)
            t_base, t_ours, same = _docking_per_question(folder, args.split, base)
            if t_ours:
                print(
                    f"T7 uniqueness per question ({len(t_ours)} questions, CPU): {args.baseline} "
                    f"{np.mean(t_base):.3f} s, this code {np.mean(t_ours):.3f} s: "
                    f"{sum(t_base) / sum(t_ours):.1f}x faster (goal >= 10x); same margins: {same}"
                )
            found = base.audit()
            base.close()
            wall_b, cpu_b = found["wall"], found["cpu"]
            print(
                f"audit of the {args.split} split with {args.baseline}'s code: {wall_b:.1f} s wall, "
                f"{cpu_b:.1f} s CPU; this code {cpu_b / cpu1:.1f}x less CPU (1 worker)"
            )
        if not args.no_solver:
            for task in pixel_solver.TASKS:
                values = pixel_solver.scores(folder, task)
                exact = float(np.mean([v == 1.0 for v in values])) if values else float("nan")
                print(
                    f"pixel solver {task}: score {np.mean(values):.3f}, exact {exact:.3f} "
                    f"over {len(values)} questions"
                )
    return 0 if report.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
