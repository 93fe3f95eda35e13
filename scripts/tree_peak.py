"""Peak memory of a command's whole process tree: runs the command, samples the proportional
set size (PSS, ``/proc/<pid>/smaps_rollup``) of it and every descendant every ``--every``
seconds, and prints the peak of their sum (the memory the tree holds: a page shared by forked
processes counted once), the peak of their summed RSS (which counts shared pages in every
process), the largest processes at the peak, and the CPU seconds of the tree (``os.wait4`` of
the command: its own and its waited-for children's). Linux only.

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


def _memory_kb(pid: int) -> tuple[int, int]:
    """(PSS, RSS) of a process in KiB: the proportional set size counts a page shared by n
    processes (a forked pool worker's pages it has not written) as 1/n in each, so the PSS of a
    tree sums to the memory it holds; RSS counts it in every process."""
    found = {"Pss:": 0, "Rss:": 0}
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            key = line.split(":", 1)[0] + ":"
            if key in found:
                found[key] = int(line.split()[1])
    except OSError:
        pass
    return found["Pss:"], found["Rss:"]


def _cmdline(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return "?"
    return " ".join(raw.replace(b"\0", b" ").decode("utf-8", "replace").split())[:160]


def tree_memory(root: int) -> tuple[int, int, list[tuple[int, int]]]:
    """(sum of PSS in KiB, sum of RSS in KiB, [(PSS KiB, pid)]) of ``root`` and its descendants
    now."""
    tree = _children()
    todo, seen = [root], []
    while todo:
        pid = todo.pop()
        seen.append(pid)
        todo.extend(tree.get(pid, ()))
    sizes = [(_memory_kb(pid), pid) for pid in seen]
    return (
        sum(pss for (pss, _), _ in sizes),
        sum(rss for (_, rss), _ in sizes),
        [(pss, pid) for (pss, _), pid in sizes],
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    parser.add_argument("--every", type=float, default=0.2, help="seconds between samples")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command")
    start = time.monotonic()
    proc = subprocess.Popen(command)
    peak = {"sum": 0, "rss": 0, "processes": 0, "at": 0.0, "top": []}
    own: dict[int, tuple[int, str]] = {}  # pid -> (its largest PSS in KiB, its command)
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            total, rss, sizes = tree_memory(proc.pid)
            if total > peak["sum"]:
                top = [(kb, _cmdline(pid)) for kb, pid in sorted(sizes, reverse=True)[:8]]
                peak.update(sum=total, processes=len(sizes), at=time.monotonic() - start, top=top)
            peak["rss"] = max(peak["rss"], rss)
            for kb, pid in sizes:
                if kb > own.get(pid, (0, ""))[0]:
                    own[pid] = (kb, own[pid][1] if pid in own else _cmdline(pid))
            done.wait(args.every)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    _, status, usage = os.wait4(proc.pid, 0)
    done.set()
    thread.join()
    wall = time.monotonic() - start
    print(
        f"tree peak {peak['sum'] / 1024**2:.2f} GiB PSS ({peak['processes']} processes, at "
        f"{peak['at']:.0f} s); peak of the summed RSS {peak['rss'] / 1024**2:.2f} GiB; "
        f"wall {wall:.0f} s; CPU {usage.ru_utime + usage.ru_stime:.0f} s",
        file=sys.stderr,
    )
    for kb, cmd in peak["top"]:
        print(f"  at the peak: {kb / 1024:7.0f} MiB PSS  {cmd}", file=sys.stderr)
    for kb, cmd in sorted(own.values(), reverse=True)[:4]:
        print(f"  largest in its life: {kb / 1024:7.0f} MiB PSS  {cmd}", file=sys.stderr)
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    raise SystemExit(main())
