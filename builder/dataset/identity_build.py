"""The build's side of the identity split (``identity_split``): the components of a build's
complexes (sequences cached by input checksum, clusters by sequence), the draw kept in the work folder, the
merge's record and refusal, and the fetch an ``ids:`` build needs before drawing."""

from __future__ import annotations

import logging
from pathlib import Path

from ..core.errors import MisiError
from ..core.records import ComplexRef
from ..store.id_list import default_structures_dir, is_id_source
from ..store.identity_split import (
    IDENTITY_SPLIT,
    SEQUENCE_CACHE,
    IdentityPlan,
    cached_draw,
    identity_plan,
    split_record,
)
from ..store.sources import DEFAULT_TEST_FRACTION, discover
from .archive import fetch_entries
from .config import BuildConfig, BuildOptions

log = logging.getLogger(__name__)


def identity_draw(cfg: BuildConfig, refs, out: Path | None, skipped=frozenset()) -> dict[str, str]:
    """The identity split of ``refs`` around ``skipped`` (kept in ``<out>/.work/draws``)."""
    found = split_plan(cfg, refs, out)
    folder = Path(out) / ".work" / "draws" if out is not None else None
    return cached_draw(found, int(cfg.seed), DEFAULT_TEST_FRACTION, skipped, folder)


def split_plan(cfg: BuildConfig, refs: dict[str, ComplexRef], out: Path | None) -> IdentityPlan:
    """The identity components of ``refs``: the sequences cached in ``<out>/.work/`` by input
    checksum (a changed file is read again), the clusters remembered per process by sequence."""
    cache = Path(out) / ".work" / SEQUENCE_CACHE if out is not None else None
    return identity_plan(refs, cache)


def fetch_before_identity_split(options: BuildOptions) -> None:
    """The identity split needs every entry's sequences before it is drawn: a ``--fetch`` build
    of an ``ids:`` source downloads every missing entry of the build (not only its shard's) first,
    so that every shard, resume and merge draws from the same sequences. An entry that cannot be
    had is logged here and recorded as skipped by its shard's fetch."""
    cfg = options.config
    if not (options.fetch and is_id_source(cfg.source) and not options.merge_only):
        return
    if cfg.split_file is not None or cfg.split != IDENTITY_SPLIT:
        return
    refs = discover(cfg.source, cfg.structures)
    refs = refs if cfg.limit is None else refs[: int(cfg.limit)]
    pending = [r.pdb_id for r in refs if r.kind == "raw" and not r.path.exists()]
    if not pending:
        return
    folder = Path(cfg.structures).expanduser() if cfg.structures else default_structures_dir()
    got = fetch_entries(pending, folder, options.mirror, options.fetch_policy, options.progress)
    failed = sorted(p for p, r in got.items() if r.error)
    if failed:
        log.warning("identity split: %d entries could not be fetched: %s", len(failed), failed[:5])


def identity_record(cfg: BuildConfig, refs, splits, out: Path) -> dict | None:
    """The manifest's ``split`` entry of an identity build (None otherwise); refuses the merge
    when a test complex reaches the identity threshold against a train complex."""
    if cfg.split_file is not None or cfg.split != IDENTITY_SPLIT:
        return None
    record = split_record(split_plan(cfg, refs, out), splits)
    top = record["check"]["highest"]
    log.info(
        "identity split: %d components (largest %d complexes), highest test-train identity "
        "%.1f%% (%s / %s)",
        record["components"],
        record["largest_component"],
        100 * top["identity"],
        top["test"],
        top["train"],
    )
    if top["identity"] >= record["threshold"]:
        raise MisiError(
            f"{out}: identity split: test complex {top['test']} is {100 * top['identity']:.1f}% "
            f"identical to train complex {top['train']} (threshold "
            f"{100 * record['threshold']:.0f}%); nothing was merged"
        )
    return record
