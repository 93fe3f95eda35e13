"""Peak memory of a command's whole process tree: runs the command, samples the resident set
size (``VmRSS`` of ``/proc/<pid>/status``) of it and every descendant every ``--every`` seconds,
and prints the peak of their sum, the peak of the largest single process, and the CPU seconds of
the tree (``os.wait4`` of the command: its own and its waited-for children's). Linux only.

Usage: ``python -m scripts.tree_peak [--every 0.2] -- COMMAND ...`` (e.g. the fast lane:
``python -m scripts.tree_peak -- python -m pytest -q -m "not slow" -n 2 --dist loadfile``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from pathlib import Path


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        tree.setdefault(ppid, []).append(int(entry.name))
    return tree


def _rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _cmdline(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return "?"
    return raw.replace(b"\0", b" ").decode("utf-8", "replace").strip()[:160]


def tree_rss(root: int) -> tuple[int, int, list[tuple[int, int]]]:
    """(sum of RSS in KiB, largest single RSS in KiB, [(RSS KiB, pid)]) of ``root`` and its
    descendants now."""
    tree = _children()
    todo, seen = [root], []
    while todo:
        pid = todo.pop()
        seen.append(pid)
        todo.extend(tree.get(pid, ()))
    sizes = [(_rss_kb(pid), pid) for pid in seen]
    return sum(s for s, _ in sizes), max((s for s, _ in sizes), default=0), sizes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--every", type=float, default=0.2, help="seconds between samples")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command")
    start = time.monotonic()
    proc = subprocess.Popen(command)
    peak = {"sum": 0, "single": 0, "processes": 0, "at": 0.0, "top": []}
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            total, single, sizes = tree_rss(proc.pid)
            if total > peak["sum"]:
                top = [(kb, _cmdline(pid)) for kb, pid in sorted(sizes, reverse=True)[:8]]
                peak.update(sum=total, processes=len(sizes), at=time.monotonic() - start, top=top)
            peak["single"] = max(peak["single"], single)
            done.wait(args.every)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    _, status, usage = os.wait4(proc.pid, 0)
    done.set()
    thread.join()
    wall = time.monotonic() - start
    print(
        f"tree peak {peak['sum'] / 1024**2:.2f} GiB ({peak['processes']} processes, at "
        f"{peak['at']:.0f} s); largest process {peak['single'] / 1024**2:.2f} GiB; "
        f"wall {wall:.0f} s; CPU {usage.ru_utime + usage.ru_stime:.0f} s",
        file=sys.stderr,
    )
    for kb, cmd in peak["top"]:
        print(f"  at the peak: {kb / 1024:7.0f} MiB  {cmd}", file=sys.stderr)
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    raise SystemExit(main())
