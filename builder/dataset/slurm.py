"""The sbatch script of a cluster build (``misi-bench slurm-script``).

One file, from the versioned template ``templates/slurm_build.sh``, that is both

* an sbatch job-array script: array task I runs ``misi-bench build --num-shards K --no-merge``,
  which takes its shard I from ``SLURM_ARRAY_TASK_ID`` and its worker count from
  ``SLURM_CPUS_PER_TASK`` (see ``cluster``), and resumes from the completion markers under
  ``OUT/.work/`` when a task is re-run;
* a submit script: ``bash FILE [SHARDS]`` submits the array (or only the listed shards), then the
  merge (and the optional push) as a job depending on it (``afterok``, cancelled if a shard fails)
  with the array tasks' CPUs: it writes the configs' shards, validates every row and audits a
  sample with that many worker processes.

The jobs call the ``misi-bench`` of the Python that wrote the script (absolute path), so they run
the same installation; the submitting environment is exported to them (``--export=ALL``).
Logs go to ``OUT/.slurm/`` (a hidden folder: never pushed to the Hub).
"""

from __future__ import annotations

import re
import shlex
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..core.constants import PACKAGE_VERSION
from ..core.errors import MisiError
from .hub import _validate_repo_id, validate_tag

#: Version of templates/slurm_build.sh; bump when the script's behaviour changes.
TEMPLATE_VERSION = 1
LOG_FOLDER = ".slurm"
#: Slurm time formats: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS.
_TIME_RE = re.compile(
    r"^(\d+|\d+:\d{2}|\d+:\d{2}:\d{2}|\d+-\d+|\d+-\d+:\d{2}|\d+-\d+:\d{2}:\d{2})$"
)
#: Options the script sets itself; they may not be among the extra build options.
RESERVED_BUILD_OPTIONS = (
    "--source",
    "--out",
    "--num-shards",
    "--shard-index",
    "--no-merge",
    "--merge-only",
    "--workers",
    "--quiet",
)


@dataclass(frozen=True)
class SlurmJob:
    """What the script runs and asks Slurm for. ``time`` is a Slurm time limit per shard,
    ``merge_time`` the merge job's (default: ``time``; the merge validates every row); ``mem`` a
    Slurm memory size per shard (e.g. ``8G``); ``build_args`` extra
    ``misi-bench build`` options (``--seed``, ``--configs``, ``--limit``, ...)."""

    source: str
    out: str
    shards: int = 8
    cpus: int = 4
    time: str = "12:00:00"
    merge_time: str | None = None
    partition: str | None = None
    account: str | None = None
    mem: str | None = None
    job_name: str = "misi-build"
    build_args: tuple[str, ...] = ()
    push_repo: str | None = None
    push_tag: str | None = None

    def __post_init__(self) -> None:
        if int(self.shards) < 1 or int(self.cpus) < 1:
            raise MisiError(
                f"--array must be >= 1 shards and --cpus >= 1 (got {self.shards}, {self.cpus})"
            )
        for name in ("time", "merge_time"):
            value = getattr(self, name)
            if value is not None and not _TIME_RE.match(str(value)):
                raise MisiError(
                    f"--{name.replace('_', '-')} {value!r} is not a Slurm time limit "
                    "(e.g. 90, 4:00:00 or 1-12:00:00)"
                )
        for name in ("partition", "account", "mem", "job_name"):
            value = getattr(self, name)
            if value is not None and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._,:+-]*", str(value)):
                raise MisiError(
                    f"--{name.replace('_', '-')} {value!r}: only letters, digits and ._,:+- are allowed"
                )
        if any(c.isspace() or c == "%" for c in str(self.out)):
            raise MisiError(
                f"--out {self.out!r}: Slurm log paths cannot hold spaces or '%'; choose another folder"
            )
        reserved = [a for a in self.build_args if a.split("=")[0] in RESERVED_BUILD_OPTIONS]
        if reserved:
            raise MisiError(
                f"build option(s) {', '.join(reserved)} are set by the script itself; leave them out"
            )
        if (self.push_repo is None) != (self.push_tag is None):
            raise MisiError("--then-push REPO and --tag vX.Y.Z go together")
        if self.push_repo is not None:
            _validate_repo_id(self.push_repo)
            validate_tag(self.push_tag)


def misi_command() -> list[str]:
    """The command that runs this installation's ``misi-bench`` from anywhere (absolute paths)."""
    python = Path(sys.executable).absolute()
    script = python.parent / "misi-bench"
    if script.is_file():
        return [str(script)]
    return [str(python), "-c", "import sys, misi_bench; sys.exit(misi_bench.main())"]


def load_template() -> str:
    """The versioned script template (``@NAME@`` placeholders)."""
    return (
        resources.files(__package__)
        .joinpath("templates/slurm_build.sh")
        .read_text(encoding="utf-8")
    )


def slurm_script(job: SlurmJob, command: list[str] | None = None) -> str:
    """The text of the sbatch script for ``job``; ``command`` runs misi-bench (default: this one)."""
    source = job.source if job.source == "samples" else str(Path(job.source).absolute())
    out = Path(job.out).absolute()
    logs = out / LOG_FOLDER
    options = [
        f"--{k}={v}"
        for k, v in (("partition", job.partition), ("account", job.account), ("mem", job.mem))
        if v is not None
    ]
    push = ""
    if job.push_repo is not None:
        push = f'    "${{MISI[@]}}" push "$OUT" --repo {job.push_repo} --tag {job.push_tag}'  # both validated
    values = {
        "JOB_NAME": job.job_name,
        "LAST_SHARD": str(int(job.shards) - 1),
        "CPUS": str(int(job.cpus)),
        "TIME": job.time,
        "MERGE_TIME": job.merge_time or job.time,
        "LOG_DIR": str(logs),
        "LOG_DIR_Q": shlex.quote(str(logs)),
        "TEMPLATE_VERSION": str(TEMPLATE_VERSION),
        "PACKAGE_VERSION": PACKAGE_VERSION,
        "SOURCE_TEXT": source,
        "OUT_TEXT": str(out),
        "SHARDS": str(int(job.shards)),
        "EXTRA_SBATCH": "".join(f"#SBATCH {o}\n" for o in options).rstrip("\n") or "#",
        "MERGE_SBATCH": "".join(f"{o} " for o in options),
        "PUSH_NOTE": f", then the push to {job.push_repo} as {job.push_tag}" if push else "",
        "PUSH_COMMAND": push or "    :",
        "MISI": shlex.join(command or misi_command()),
        "SOURCE": shlex.quote(source),
        "OUT": shlex.quote(str(out)),
        "BUILD_ARGS": shlex.join(job.build_args),
    }
    text = load_template()
    for key, value in values.items():
        text = text.replace(f"@{key}@", value)
    left = re.findall(r"@[A-Z_]+@", text)
    if left:  # a template edit that forgot a value: a bug, never a user error
        raise RuntimeError(f"slurm template placeholders without a value: {left}")
    return text


def write_slurm_script(job: SlurmJob, path: str | Path, command: list[str] | None = None) -> Path:
    """Write the script to ``path`` (executable) and create the job log folder it names."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(slurm_script(job, command), encoding="utf-8")
    path.chmod(0o755)
    (Path(job.out).absolute() / LOG_FOLDER).mkdir(parents=True, exist_ok=True)
    return path
