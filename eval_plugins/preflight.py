"""Checks around a harness run, so that ``misi-bench lmms-eval|vlmevalkit|lm-eval`` fail loudly.

The harnesses log many errors and still exit 0 (lmms-eval: unknown task, unreachable dataset;
VLMEvalKit: a failed model x dataset pair). Before launching, the launchers check that the
requested MiSI names exist (:func:`expand_requested`) and that the data location resolves
(:func:`check_data_location`); after the run they compare what the harness reported with what
was asked (:func:`missing`). Every problem is one line naming the input and what to do
(:class:`PreflightError`, printed by :func:`fail`). Imports only ``builder.core`` and, for a Hub
location, ``huggingface_hub``.
"""

from __future__ import annotations

import contextlib
import difflib
import fnmatch
import os
import re
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from ..builder.core.constants import REPO_ENV, REVISION_ENV, hub_repo_id, hub_revision
from ..builder.core.registry import TASK_NAMES

_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
_OFFLINE_VARS = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")


def task_names() -> tuple[list[str], dict[str, list[str]]]:
    """``(names, groups)`` of the lmms-eval and lm-eval task folders: ``misi_<config>``,
    ``tiny_misi_<config>`` and the groups ``misi`` / ``tiny_misi`` (group -> members)."""
    groups = {
        "misi": [f"misi_{t}" for t in TASK_NAMES],
        "tiny_misi": [f"tiny_misi_{t}" for t in TASK_NAMES],
    }
    return [*groups, *groups["misi"], *groups["tiny_misi"]], groups


def names_misi(name: str) -> bool:
    """Whether a requested task name is meant as a MiSI-Bench one."""
    return "misi" in name.lower()


class PreflightError(Exception):
    """A problem with the launch (one line: what is wrong, then what to do)."""


def fail(harness: str, message: object, code: int = 2) -> int:
    """Print ``misi-bench <harness>: <message>`` to stderr and return ``code``."""
    print(f"misi-bench {harness}: {message}", file=sys.stderr)
    return code


def option_values(argv: Sequence[str], *flags: str) -> list[str] | None:
    """Values of ``--flag a b,c`` / ``--flag=a,b`` in ``argv`` (comma lists split), or None when
    no flag is given. Values run until the next token starting with ``-``."""
    values: list[str] | None = None
    i = 0
    while i < len(argv):
        token = argv[i]
        name, eq, inline = token.partition("=")
        if name in flags:
            values = [] if values is None else values
            if eq:
                values.append(inline)
            else:
                while i + 1 < len(argv) and not argv[i + 1].startswith("-"):
                    i += 1
                    values.append(argv[i])
        i += 1
    if values is None:
        return None
    return [v.strip() for value in values for v in value.split(",") if v.strip()]


def _offline() -> str | None:
    for var in _OFFLINE_VARS:
        if os.environ.get(var, "").strip().lower() in ("1", "true", "yes", "on"):
            return var
    return None


def check_data_location(path: str | None = None, revision: str | None = None) -> str:
    """Check that the data location resolves and return it in words.

    ``path`` defaults to ``misi_bench.hub_repo_id()`` (``$MISI_BENCH_REPO`` or the canonical Hub
    repo) and ``revision`` to ``$MISI_BENCH_REVISION``. A local folder must hold the
    ``manifest.json`` of a build (or of a Hub clone); a Hub repo must be reachable at the
    revision (offline mode makes that an error).
    """
    path = path or hub_repo_id()
    revision = revision or hub_revision()
    local = Path(os.path.expanduser(path))
    if local.is_dir():
        if not (local / "manifest.json").is_file():
            raise PreflightError(
                f"{path} has no manifest.json, so it is not a MiSI-Bench dataset folder: set "
                f"{REPO_ENV} to a folder written by 'misi-bench build' or a clone of the Hub repo"
            )
        return f"local folder {local.resolve()}"
    if not _HUB_ID.match(path):
        raise PreflightError(
            f"{REPO_ENV}={path} is neither an existing folder nor a Hub repo id (owner/name): "
            "fix the path or the id"
        )
    at = f" at revision {revision}" if revision else ""
    var = _offline()
    if var:
        raise PreflightError(
            f"the data is the Hub repo {path}{at} but {var} is set: download it once with "
            f"`hf download {path} --repo-type dataset --local-dir misi-data` and set "
            f"{REPO_ENV}=misi-data, or unset {var}"
        )
    from huggingface_hub import HfApi
    from huggingface_hub.errors import RepositoryNotFoundError, RevisionNotFoundError

    try:
        HfApi().dataset_info(path, revision=revision, timeout=20)
    except RevisionNotFoundError:
        raise PreflightError(
            f"the Hub repo {path} has no revision {revision!r}: set {REVISION_ENV} to one of "
            "its tags or branches"
        ) from None
    except RepositoryNotFoundError:
        raise PreflightError(
            f"no dataset repo {path} on the Hub (or it is private): check {REPO_ENV}, or log "
            "in with `hf auth login`"
        ) from None
    except Exception as exc:  # connection errors come in many types (httpx, requests, OSError)
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise PreflightError(
            f"cannot reach the Hub repo {path}{at} ({first}): check the network, or set "
            f"{REPO_ENV} to a local copy"
        ) from None
    return f"Hub repo {path}{at}"


def expand_requested(
    requested: Sequence[str],
    names: Sequence[str],
    groups: Mapping[str, Sequence[str]],
    ours: Callable[[str], bool],
) -> list[str]:
    """The result names a run of ``requested`` must produce (ours only, in ``names`` order).

    ``names``: every task and group name we register; ``groups``: group -> member names;
    ``ours(name)``: whether a requested name is meant as one of ours (others belong to the
    harness and pass through). A glob (``misi_*``) must match at least one name; an unknown name
    of ours raises :class:`PreflightError` with the closest names.
    """
    wanted: set[str] = set()
    for token in requested:
        if not ours(token) or os.path.exists(token):  # the harness's own task, or a YAML path
            continue
        hits = (
            fnmatch.filter(names, token)
            if any(c in token for c in "*?[")
            else [n for n in names if n == token]
        )
        if not hits:
            close = difflib.get_close_matches(token.lower(), names, n=3, cutoff=0.6)
            hint = (
                f"did you mean {', '.join(close)}?"
                if close
                else f"the names are {', '.join(names)}"
            )
            raise PreflightError(f"no MiSI-Bench task named {token!r}: {hint}")
        for hit in hits:
            wanted.add(hit)
            wanted.update(groups.get(hit, ()))
    return [n for n in names if n in wanted]


def missing(expected: Sequence[str], reported: Sequence[str] | set[str]) -> list[str]:
    """The expected names the harness did not report."""
    got = set(reported)
    return [n for n in expected if n not in got]


def missing_message(
    harness_hint: str, absent: Sequence[str], expected: Sequence[str], where: str
) -> str:
    return (
        f"no results for {', '.join(absent)} ({len(absent)} of {len(expected)} requested MiSI-Bench names; "
        f"data: {where}): read the harness's error above, {harness_hint}"
    )


@contextlib.contextmanager
def recording(
    owner: object, attr: str, keys: Callable[[object], Sequence[str] | None]
) -> Iterator[list]:
    """Wrap ``owner.attr`` (a harness's ``simple_evaluate``) while the block runs and collect,
    per call, ``keys(return value)`` (None for a call that returned nothing, e.g. a non-main
    rank). The list is yielded; calls that raise leave no entry."""
    calls: list = []
    original = getattr(owner, attr)

    def wrapper(*args, **kwargs):
        result = original(*args, **kwargs)
        calls.append(keys(result))
        return result

    setattr(owner, attr, wrapper)
    try:
        yield calls
    finally:
        setattr(owner, attr, original)


def result_keys(results: object) -> list[str] | None:
    """Task/group names of a harness results dict (``{"results": {...}, "groups": {...}}``)."""
    if not isinstance(results, Mapping):
        return None
    return [*results.get("results", {}), *results.get("groups", {})]


#: The group rows whose figures the launchers print after a run (the headline in %).
HEADLINE_GROUPS = ("misi", "tiny_misi")


def headline_lines(results: object) -> list[str]:
    """One line per MiSI group in a harness results dict: its three averages in %, the headline
    first. The harness's own table prints 0-1 like all its tasks, and a task row's
    ``paper_average`` there is only that task's share of the headline (docs/scoring.md)."""
    if not isinstance(results, Mapping):
        return []
    lines = []
    blocks = results.get("misi_intervals") or {}
    for group, split in zip(HEADLINE_GROUPS, ("test", "tiny")):
        row = (results.get("groups") or {}).get(group) or (results.get("results") or {}).get(group)
        if not isinstance(row, Mapping):
            continue
        stats = (blocks.get(split) or {}).get("statistics") or {}
        cells = []
        for metric, label, name in (
            ("paper_average", "paper_average (the headline)", "paper_average"),
            ("score", "average_all_tasks", "average_all_tasks"),
            ("average_headline_tasks", "average_headline_tasks", "average_headline_tasks"),
        ):
            value = row.get(f"{metric},none")
            ci = (stats.get(name) or {}).get("ci95")
            tail = (
                f" [95% {100 * ci[0]:.2f}, {100 * ci[1]:.2f}]" if ci and ci[0] is not None else ""
            )
            if isinstance(value, (int, float)) and value == value:
                cells.append(f"{label} {100 * value:.2f} %{tail}")
        if cells:
            lines.append(
                f"group {group}: {', '.join(cells)}; a task row's paper_average in the table "
                "above is only that task's share of the headline, not its score"
            )
    return lines


def check_after(harness: str, hint: str, expected: Sequence[str], calls: list, where: str) -> int:
    """0 when every expected name was reported (or this is a non-main rank), else 1 and one line."""
    if not expected or (calls and all(c is None for c in calls)):
        return 0
    got = {name for c in calls if c for name in c}
    absent = missing(expected, got)
    if absent:
        return fail(harness, missing_message(hint, absent, expected, where), code=1)
    return 0


#: ``--tasks`` values that list names instead of running tasks (lmms-eval, lm-eval).
LISTINGS = frozenset({"list", "list_groups", "list_tags", "list_subtasks"})


def unmatched_requests(requested: Sequence[str], calls: list) -> list[str]:
    """The ``--tasks`` values that produced no results, though the harness exited 0: all of them
    when no evaluation returned (the harness logged "no tasks found" or another error and went
    on), else each glob pattern that matches no reported name. Listings and a non-main rank's
    runs (``None`` entries) are never unmatched."""
    tokens = [t for t in requested if t not in LISTINGS]
    if not tokens or (calls and all(c is None for c in calls)):
        return []
    if not calls:
        return tokens
    got = sorted({name for c in calls if c for name in c})
    return [
        t
        for t in tokens
        if any(c in t for c in "*?[") and not os.path.exists(t) and not fnmatch.filter(got, t)
    ]


def unmatched_message(harness: str, unmatched: Sequence[str]) -> str:
    return (
        f"no results for --tasks {', '.join(unmatched)}: the harness found no task by "
        f"{'that name or pattern' if len(unmatched) == 1 else 'those names or patterns'} or "
        f"stopped with an error (read it above; the harness itself exits 0); the names: "
        f"`misi-bench {harness} --tasks list`"
    )


def run_checked(
    harness: str,
    argv: Sequence[str],
    flags: tuple[str, ...],
    start: Callable[[], tuple[object, str, Callable[[], int]]],
    check: bool = True,
) -> int:
    """Launch an lmms-eval / lm-eval run with the checks around it.

    Before: the task names in ``argv`` after ``flags`` (when ``check``) and the data location.
    ``start()`` then imports the harness and returns ``(owner, attr, launch)``: ``owner.attr`` is
    the harness's ``simple_evaluate`` (watched for the result names), ``launch()`` runs it and
    returns the exit status. After: exit 1 when a requested MiSI name has no results, or a
    ``--tasks`` name or pattern of any harness produced none (:func:`unmatched_requests`).
    """
    expected: list[str] = []
    where = ""
    if check:
        try:
            expected = expand_requested(
                option_values(argv, *flags) or [], *task_names(), ours=names_misi
            )
            where = check_data_location() if expected else ""
        except PreflightError as exc:
            return fail(harness, exc)
    from .harness_intervals import add_intervals, reset  # noqa: PLC0415

    owner, attr, launch = start()
    headlines: list[str] = []
    reset()

    def keys(results: object) -> list[str] | None:
        add_intervals(results)  # the scorer's intervals, before the harness prints and saves
        headlines.extend(headline_lines(results))
        return result_keys(results)

    with recording(owner, attr, keys) as calls:
        code = launch()
    if code:
        return code
    for line in headlines:
        print(f"misi-bench {harness}: {line}", file=sys.stderr)
    code = check_after(harness, "then rerun with --verbosity DEBUG", expected, calls, where)
    unmatched = unmatched_requests(option_values(argv, *flags) or [], calls) if check else []
    if code or not unmatched:
        return code
    return fail(harness, unmatched_message(harness, unmatched), code=1)
