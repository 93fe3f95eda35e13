"""Dataset commands: ``build``, ``validate``, ``audit``, ``push``."""

from __future__ import annotations

import argparse

from ..core.constants import (
    DEFAULT_HBOND_MODE,
    DEFAULT_IMAGE_SIZE,
    DEFAULT_POCKET_CUTOFF,
    HBOND_MODES,
)
from ..core.profiles import DEFAULT_PROFILE


def cmd_push(args: argparse.Namespace) -> int:
    from ..dataset.hub import cli_push  # noqa: PLC0415

    return int(cli_push(args) or 0)


def build_options(args: argparse.Namespace):
    """The ``BuildOptions`` of ``misi-bench build``'s arguments (shard and worker count from the
    flags, or from Slurm inside an array task)."""
    from ..dataset.archive import FetchPolicy  # noqa: PLC0415
    from ..dataset.config import BuildConfig, BuildOptions  # noqa: PLC0415
    from ..store.cluster import choose_shard, default_workers  # noqa: PLC0415

    shard = choose_shard(args.num_shards, 0 if args.merge_only else args.shard_index)
    config = BuildConfig(
        source=args.source,
        tasks=tuple(args.configs or ()),
        seed=args.seed,
        limit=args.limit,
        split_file=args.split_file,
        split=args.split_rule,
        image_size=args.image_size,
        pocket_cutoff=args.pocket_cutoff,
        tiny_per_task=args.tiny_per_task,
        structures=args.structures,
        hbonds=args.hbonds,
        decoys=args.decoys,
        profile=args.profile,
    )
    return BuildOptions(
        config,
        out=args.out,
        workers=default_workers(args.workers),
        num_shards=shard.count,
        shard_index=shard.index,
        # a Slurm array task generates its shard only
        merge=not args.no_merge and not (shard.from_slurm and shard.count > 1),
        merge_only=args.merge_only,
        validate=not args.no_validate,
        audit=not args.no_audit,
        progress=not args.quiet,
        fetch=args.fetch,
        mirror=args.mirror,
        fetch_policy=FetchPolicy(concurrency=args.fetch_concurrency),
    )


def cmd_build(args: argparse.Namespace) -> int:
    from ..checks.build_warnings import validity_warnings  # noqa: PLC0415
    from ..dataset.build import build_dataset  # noqa: PLC0415

    options = build_options(args)
    manifest = build_dataset(options)
    if not manifest:
        print(
            f"shard {options.shard_index} of {options.num_shards} generated in {args.out}; "
            "run --merge-only when all are done"
        )
        return 0
    _print_build_summary(args.out, manifest)
    for line in validity_warnings(args.out, manifest):
        print(f"warning: {line}")
    return 0


def _print_build_summary(out: str, manifest: dict) -> None:
    """The counts per config, the validation and audit verdicts, and each config's check
    statuses (``checks.declared``) of a merged build."""
    from ..checks.declared import status_lines, uniqueness_words  # noqa: PLC0415

    totals = manifest["totals"]
    print(
        f"built {out} (profile {manifest.get('profile', 'explicit')}): "
        f"{totals['questions']['train']} train + {totals['questions']['test']} test questions "
        f"({totals['questions']['tiny']} tiny), {totals['images']['train'] + totals['images']['test']} images, "
        f"{len(manifest['skipped_complexes'])} complexes skipped"
    )
    for task, c in manifest["counts"].items():
        print(f"  {task:22s} train {c['train']:6d}  test {c['test']:6d}  tiny {c['tiny']:4d}")
    if "validation" in manifest:
        validation = manifest["validation"]
        print(
            f"validation: {'ok' if validation['ok'] else 'FAILED'} ({validation['checked']} rows)"
        )
    checks = manifest.get("checks", {})
    if "audit" in manifest:
        audit = manifest["audit"]
        n = sum(t["questions"] for t in audit["tasks"].values())
        ambiguous = [i for t in audit["tasks"].values() for i in t.get("ambiguous", [])]
        unique = uniqueness_words(checks)  # "all unique" only where the check ran
        print(
            f"audit: {'ok' if audit['ok'] else 'PROBLEMS'} ({n} sampled questions reproduced"
            f"{', ambiguous: ' + ', '.join(ambiguous) if ambiguous else unique})"
        )
    if checks:
        print("checks (ran / failed / not applicable (why) / not run (why)):")
        for line in status_lines(checks):
            print(f"  {line}")


def cmd_audit(args: argparse.Namespace) -> int:
    import json  # noqa: PLC0415

    from ..checks.audit import audit_dataset  # noqa: PLC0415

    report = audit_dataset(
        args.folder,
        configs=args.configs,
        split=args.split,
        limit=args.limit,
        source=args.source,
        structures=args.structures,
        progress=not args.json and not args.quiet,
        workers=args.workers,
    )
    print(json.dumps(report.summary(), indent=1) if args.json else report.format_text())
    return 0 if report.ok else 1


def cmd_validate(args: argparse.Namespace) -> int:
    from ..checks.validate import validate_dataset  # noqa: PLC0415
    from ..store.cluster import available_cpus, check_workers  # noqa: PLC0415

    workers = check_workers(args.workers)
    report = validate_dataset(
        args.folder,
        source=args.source,
        structures=args.structures,
        workers=available_cpus() if workers is None else workers,
    )
    for problem in report.problems[:100]:
        print(f"problem: {problem}")
    for warning in report.warnings[:100]:
        print(f"warning: {warning}")
    print(
        f"{'ok' if report.ok else 'FAILED'}: {report.checked} rows checked, {len(report.problems)} problems"
    )
    return 0 if report.ok else 1


def add_commands(sub) -> None:
    """Add ``build``, ``validate``, ``audit`` and ``push`` to the subparsers ``sub``."""
    from ..core.registry import TASK_NAMES as TASKS  # noqa: PLC0415

    _add_build(sub, TASKS)
    _add_validate(sub)
    _add_audit(sub, TASKS)
    _add_push(sub)


def _add_build(sub, TASKS) -> None:  # noqa: N803 - the registry's name, as in every parser
    p = sub.add_parser("build", help="build the dataset folder (Parquet configs, card, manifest)")
    p.add_argument(
        "--source",
        default="samples",
        help="'samples' (embedded set), a PDBbind-style root folder, or 'ids:LIST.csv' "
        "(rows pdb_id,ligand[,chain,resnum]; entries from --structures / --fetch)",
    )
    p.add_argument(
        "--structures",
        help="folder of <id>.cif[.gz]/<id>.pdb[.gz] entries for an ids: source "
        "(default $MISI_BENCH_STRUCTURES or ~/.cache/misi-bench/pdb)",
    )
    p.add_argument(
        "--fetch",
        action="store_true",
        help="download entries missing from --structures from the PDB archive",
    )
    p.add_argument(
        "--mirror",
        help="file service URL to fetch <ID>.cif.gz from (default: the PDB archive's, "
        "or $MISI_BENCH_PDB_MIRROR)",
    )
    p.add_argument("--fetch-concurrency", type=int, default=4, help="downloads at once (default 4)")
    p.add_argument(
        "--profile",
        default=DEFAULT_PROFILE,
        help="paper (default): the questions carry what the paper's prompts carry, with its "
        "sampling, counts, tiny split and answer formats; explicit: prompts that state "
        "everything needed (camera distance, ranges, H-bond rule); see docs/fidelity.md",
    )
    p.add_argument(
        "--split",
        dest="split_rule",
        default="identity30",
        choices=("identity30", "hash"),
        help="how train/test are drawn without --split-file: identity30 (default: MMseqs2 "
        "components at 30%% sequence identity, whole components to one side; docs/splits.md) "
        "or hash (the seeded hash of each PDB id, the rule of before)",
    )
    p.add_argument(
        "--split-file",
        help="CSV pdb_id,split fixing train/test membership, or ATOM3D-style lists: a folder "
        "holding train.txt, test.txt (and val.txt, left out) or those files joined by commas",
    )
    p.add_argument("--out", default="misi-bench", help="output folder (default ./misi-bench)")
    p.add_argument(
        "--configs",
        dest="configs",
        nargs="*",
        choices=TASKS,
        help="task configs to build (default: every task)",
    )
    p.add_argument(
        "--workers", type=int, help="worker processes (default: $SLURM_CPUS_PER_TASK, else 1)"
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--decoys",
        choices=("paper", "balanced"),
        default="paper",
        help="how T5, T6 and T8 draw their options: 'paper' (perturbations of the truth, the "
        "paper's; default) or 'balanced' (no options-only rule beats chance; docs/decoys.md)",
    )
    p.add_argument("--limit", type=int, help="use only the first N complexes (by PDB id)")
    p.add_argument("--image-size", type=int, default=DEFAULT_IMAGE_SIZE)
    p.add_argument("--pocket-cutoff", type=float, default=DEFAULT_POCKET_CUTOFF)
    p.add_argument(
        "--hbonds",
        choices=HBOND_MODES,
        default=DEFAULT_HBOND_MODE,
        help="H-bond criteria of the T4/T8/T9 truths: chimerax (default; ChimeraX's Mills & Dean "
        "classes relaxed 0.4 Å/20°, as the paper) or plip (the flat 4.1 Å / 100° rule, "
        "PLIP-comparable); both take rotatable H (OH, SH, NH3+) as the input models them",
    )
    p.add_argument("--tiny-per-task", type=int, default=50)
    _add_run_flags(p)
    p.set_defaults(func=cmd_build)


def _add_run_flags(p) -> None:
    """``build``'s flags of how the run goes: shards, merge, checks, progress."""
    p.add_argument(
        "--num-shards",
        type=int,
        help="split the complexes into K shards (cluster use; default: "
        "the Slurm array's size inside an array task, else 1)",
    )
    p.add_argument(
        "--shard-index",
        type=int,
        help="which shard this process generates (0..K-1; default: "
        "$SLURM_ARRAY_TASK_ID inside a Slurm array task, else 0)",
    )
    p.add_argument("--no-merge", action="store_true", help="generate this shard only; merge later")
    p.add_argument(
        "--merge-only", action="store_true", help="merge finished shards into the final folder"
    )
    p.add_argument("--no-validate", action="store_true", help="skip the validator after the merge")
    p.add_argument(
        "--no-audit",
        action="store_true",
        help="skip the audit of a sample of questions (reproduction, uniqueness) after the merge",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def _add_validate(sub) -> None:
    p = sub.add_parser(
        "validate", help="re-derive every answer of a built folder (exit 0 only if all hold)"
    )
    p.add_argument("folder")
    p.add_argument(
        "--source",
        help="structures to re-read: 'samples', a PDBbind root or 'ids:LIST.csv' "
        "(default: from the manifest)",
    )
    p.add_argument(
        "--structures",
        help="folder of the raw entries of an ids: source (default: from the manifest)",
    )
    p.add_argument(
        "--workers",
        type=int,
        help="worker processes (default: every CPU this process may use; "
        "the report is the same for any count)",
    )
    p.set_defaults(func=cmd_validate)


def _add_audit(sub, TASKS) -> None:  # noqa: N803
    p = sub.add_parser(
        "audit",
        help="check that a built folder's pictures carry exactly one answer "
        "(reproduction, uniqueness, label legibility); exit 0 only if clean",
    )
    p.add_argument("folder")
    p.add_argument(
        "--configs", nargs="*", choices=TASKS, help="task configs to audit (default: all)"
    )
    p.add_argument("--split", default="test", choices=("train", "test", "tiny"))
    p.add_argument("--limit", type=int, help="at most N questions per config")
    p.add_argument(
        "--source",
        help="structures to re-read: 'samples', a PDBbind root or 'ids:LIST.csv' (default: from the manifest)",
    )
    p.add_argument(
        "--structures",
        help="folder of the raw entries of an ids: source (default: from the manifest)",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument(
        "--workers",
        type=int,
        help="worker processes (default: every CPU this process may use; "
        "the report is the same for any count)",
    )
    p.set_defaults(func=cmd_audit)


def _add_push(sub) -> None:
    p = sub.add_parser("push", help="publish a build folder to the Hugging Face Hub")
    p.add_argument("folder")
    p.add_argument("--repo", help="ORG/NAME (default: $MISI_BENCH_REPO or the canonical repo)")
    p.add_argument("--tag", help="version tag vX.Y.Z (an existing tag is never moved)")
    p.add_argument("--revision", help="branch to push to")
    p.add_argument("--private", action="store_true")
    p.add_argument("--dry-run", action="store_true", help="list what would be uploaded")
    p.add_argument(
        "--allow-small",
        action="store_true",
        help="tag a build docs/releasing.md forbids publishing (the embedded sample set, fewer "
        "than 100 test complexes): refused without it, since a tag is never moved",
    )
    p.set_defaults(func=cmd_push)
