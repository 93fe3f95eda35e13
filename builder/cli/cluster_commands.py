"""Cluster commands: ``slurm-script`` (the sbatch script of a sharded build, then its merge)."""

from __future__ import annotations

import argparse
import sys

from . import dataset_commands


def _check_build_args(build_args: list[str]) -> list[str]:
    """``build_args`` (what follows ``--``) if ``misi-bench build`` accepts them; argparse's error
    (exit 2, naming the option) otherwise."""
    args = build_args[1:] if build_args[:1] == ["--"] else build_args
    from .parser import Parser  # noqa: PLC0415

    parser = Parser(prog="misi-bench")
    dataset_commands.add_commands(parser.add_subparsers())
    parser.parse_args(["build", *args])
    return args


def cmd_slurm_script(args: argparse.Namespace) -> int:
    from ..dataset.slurm import SlurmJob, slurm_script, write_slurm_script  # noqa: PLC0415

    job = SlurmJob(
        source=args.source,
        out=args.out,
        shards=args.array,
        cpus=args.cpus,
        time=args.time,
        merge_time=args.merge_time,
        partition=args.partition,
        account=args.account,
        mem=args.mem,
        job_name=args.job_name,
        build_args=tuple(_check_build_args(args.build_args)),
        push_repo=args.then_push,
        push_tag=args.tag,
    )
    if args.write:
        path = write_slurm_script(job, args.write)
        print(
            f"wrote {path}: submit with `bash {path}` (re-run failed shards: `bash {path} 1,4`)",
            file=sys.stderr,
        )
    else:
        sys.stdout.write(slurm_script(job))
    return 0


def add_commands(sub) -> None:
    """Add ``slurm-script`` to the subparsers ``sub``."""
    p = sub.add_parser(
        "slurm-script",
        help="print (or write) the sbatch script of a cluster build: a job array of "
        "shards, then the merge (and push) after them",
        description="Print (or write) a Slurm script for a sharded build. `bash SCRIPT` submits the "
        "shards as a job array and the merge as a job that waits for them (afterok); `bash SCRIPT 1,4` "
        "re-submits only shards 1 and 4 (they resume) and the merge. Options after `--` go to every "
        "`misi-bench build` (e.g. -- --seed 1 --configs rotation).",
    )
    p.add_argument(
        "--source",
        required=True,
        help="'samples' or a PDBbind-style root folder visible from the nodes",
    )
    p.add_argument("--out", required=True, help="output folder on a shared filesystem")
    p.add_argument(
        "--array", type=int, default=8, help="number of shards = array tasks (default 8)"
    )
    p.add_argument(
        "--cpus", type=int, default=4, help="CPUs per shard = its worker processes (default 4)"
    )
    p.add_argument("--time", default="12:00:00", help="time limit per shard (default 12:00:00)")
    p.add_argument(
        "--merge-time",
        help="time limit of the merge job, which validates every row (default: --time)",
    )
    p.add_argument("--partition", help="Slurm partition")
    p.add_argument("--account", help="Slurm account")
    p.add_argument("--mem", help="memory per shard, e.g. 8G (default: the partition's)")
    p.add_argument("--job-name", default="misi-build", help="job name (the merge is NAME-merge)")
    p.add_argument(
        "--then-push",
        metavar="REPO",
        help="after the merge, push the folder to this Hub repo (needs --tag)",
    )
    p.add_argument("--tag", help="release tag vX.Y.Z for --then-push")
    p.add_argument(
        "--write",
        metavar="FILE",
        help="write the script to FILE (and create OUT/.slurm for the logs)",
    )
    p.add_argument(
        "build_args", nargs=argparse.REMAINDER, help="-- then extra `misi-bench build` options"
    )
    p.set_defaults(func=cmd_slurm_script)
