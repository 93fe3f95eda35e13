"""The build's configuration: what determines its output (:class:`BuildConfig`, hashed) and how
one run of it goes (:class:`BuildOptions`, the one argument of ``build.build_dataset``)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path

from ..chemistry.hbonds import DEFAULT_HBOND_MODE, HBOND_MODES
from ..core.constants import (
    BUILDER_VERSION,
    DEFAULT_IMAGE_SIZE,
    DEFAULT_POCKET_CUTOFF,
    check_image_size,
)
from ..core.errors import MisiError
from ..core.profiles import DEFAULT_PROFILE, check_profile, get_profile
from ..scene.png import PNG_ENCODER
from ..scene.requests import RENDER_VERSION
from ..store.id_list import id_list_path, is_id_source
from ..store.identity_split import DEFAULT_SPLIT, HASH_SPLIT, SPLIT_RULES
from ..store.manifest import sha256_file
from ..store.split_files import split_file_digest
from ..tasks import TASKS
from ..tasks.data import task_data, versions_label
from ..tasks.decoys import DECOY_MODES, DEFAULT_DECOYS
from .archive import FetchPolicy

DEFAULT_OUT = Path("misi-bench")
#: Questions per config that the build's audit checks (``BuildOptions.audit_sample``).
AUDIT_SAMPLE = 4


@dataclass(frozen=True)
class BuildConfig:
    """Everything that determines a build's output (hashed into ``config_hash``)."""

    source: str = "samples"
    tasks: tuple[str, ...] = ()
    seed: int = 0
    limit: int | None = None
    split_file: str | None = None
    image_size: int = DEFAULT_IMAGE_SIZE
    pocket_cutoff: float = DEFAULT_POCKET_CUTOFF
    tiny_per_task: int = 50
    max_shard_bytes: int = 256 * 1024 * 1024
    #: H-bond criteria of the T4/T8/T9 truths (``chemistry.hbonds.HBOND_MODES``).
    hbonds: str = DEFAULT_HBOND_MODE
    #: Folder of PDB/mmCIF entries for an ``ids:`` source (where files are, not what they hold:
    #: not hashed; their checksums are in the manifest).
    structures: str | None = None
    #: How the choice tasks draw their options (``tasks.decoys``): ``paper`` (the legacy value,
    #: left out of the hashed fields so that such builds keep their hash) or ``balanced``.
    decoys: str = DEFAULT_DECOYS
    #: The build profile (``builder.core.profiles``): ``paper`` (default) or ``explicit``.
    profile: str = DEFAULT_PROFILE
    #: How train/test are drawn without a split file (``identity_split``): ``identity30`` (the
    #: default; hashed) or ``hash`` (the rule of before, left out of the hashed fields so that
    #: such builds keep their hash). Ignored (and not hashed) with a ``split_file``.
    split: str = DEFAULT_SPLIT

    def __post_init__(self) -> None:
        for name, kind in (("source", str), ("split_file", str), ("structures", str)):
            value = getattr(self, name)
            if value is not None and not isinstance(value, kind):
                object.__setattr__(self, name, kind(value))  # e.g. a Path
        tasks = tuple(self.tasks) or TASKS
        unknown = [t for t in tasks if t not in TASKS]
        if unknown:
            raise MisiError(
                f"unknown task(s): {', '.join(unknown)}; expected some of {', '.join(TASKS)}"
            )
        object.__setattr__(self, "tasks", tuple(t for t in TASKS if t in tasks))
        object.__setattr__(self, "profile", check_profile(self.profile))
        if self.hbonds not in HBOND_MODES:
            raise MisiError(
                f"unknown H-bond mode {self.hbonds!r}: expected one of {', '.join(HBOND_MODES)}"
            )
        if self.decoys not in DECOY_MODES:
            raise MisiError(
                f"unknown decoy mode {self.decoys!r}; expected one of {', '.join(DECOY_MODES)}"
            )
        if self.split not in SPLIT_RULES:
            raise MisiError(
                f"unknown split rule {self.split!r}; expected one of {', '.join(SPLIT_RULES)}"
            )
        if self.seed is None or int(self.seed) < 0:
            raise MisiError(f"seed must be a non-negative integer, got {self.seed!r}")
        object.__setattr__(self, "seed", int(self.seed))
        object.__setattr__(self, "pocket_cutoff", float(self.pocket_cutoff))
        object.__setattr__(self, "tiny_per_task", int(self.tiny_per_task))
        try:
            object.__setattr__(self, "image_size", check_image_size(self.image_size))
        except ValueError as exc:
            raise MisiError(str(exc)) from None

    def generation_fields(self) -> dict:
        data = asdict(self)
        data.pop("max_shard_bytes")
        data.pop("structures")
        if self.decoys == DEFAULT_DECOYS:  # legacy value: not hashed, not in the manifest
            data.pop("decoys")
        if self.split == HASH_SPLIT or self.split_file:  # the rule of before / a split file's
            data.pop("split")
        if is_id_source(self.source):
            data["source"] = "ids"
            data["id_list"] = sha256_file(id_list_path(self.source))
        else:
            data["source"] = "samples" if self.source == "samples" else "folder"
        if not get_profile(self.profile).names_itself:  # the config (and hash) of before profiles
            data.pop("profile")
        # each task's versions and data digest (its data file): one task's edit moves only the
        # hashes of builds that include it
        balanced = self.decoys != DEFAULT_DECOYS
        data["task_data"] = {
            t: task_data(t).config_fields(self.profile, balanced) for t in self.tasks
        }
        data["template_version"] = versions_label(self.tasks, self.profile)
        data["params_version"] = versions_label(self.tasks, self.profile, "params_version")
        data["builder_version"] = BUILDER_VERSION
        data["render_version"] = RENDER_VERSION
        data["png_encoder"] = PNG_ENCODER
        data["split_file"] = split_file_digest(self.split_file) if self.split_file else None
        return data

    @property
    def config_hash(self) -> str:
        text = json.dumps(self.generation_fields(), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


#: The fields of :class:`BuildConfig` (what is built), as :meth:`BuildOptions.of` sorts names.
CONFIG_FIELDS = frozenset(f.name for f in fields(BuildConfig))


@dataclass(frozen=True)
class BuildOptions:
    """One run of ``build_dataset``: what is built (``config``) and how the run goes.

    ``out``: the build folder. ``workers``: processes running the jobs of every stage.
    ``num_shards``/``shard_index``: generate one shard of the complexes only (``merge_only``
    merges them afterwards; ``merge=False``: stop after generating). ``validate``/``audit``:
    run the validator and the audit of ``audit_sample`` questions per config on the merged
    release before it is published. ``progress``: draw the stage bars. ``fetch``: download the
    missing entries of an ``ids:`` source from ``mirror`` (default: the PDB archive's file
    service) under ``fetch_policy`` first.
    """

    config: BuildConfig = field(default_factory=BuildConfig)
    out: str | Path = DEFAULT_OUT
    workers: int = 1
    num_shards: int = 1
    shard_index: int = 0
    merge: bool = True
    merge_only: bool = False
    validate: bool = True
    audit: bool = True
    audit_sample: int = AUDIT_SAMPLE
    progress: bool = True
    fetch: bool = False
    mirror: str | None = None
    fetch_policy: FetchPolicy = field(default_factory=FetchPolicy)

    def __post_init__(self) -> None:
        object.__setattr__(self, "out", Path(self.out))
        if int(self.workers) < 1:
            raise MisiError(f"workers must be a positive number of processes, got {self.workers}")
        if not (1 <= self.num_shards and 0 <= self.shard_index < self.num_shards):
            raise MisiError(f"shard index {self.shard_index} is not in 0..{self.num_shards - 1}")

    @classmethod
    def of(cls, base: BuildOptions | None = None, **changes) -> BuildOptions:
        """``base`` (default: all defaults) with ``changes``, named as the fields of this class or
        of :class:`BuildConfig` (``source``, ``tasks``, ``seed`` ...): the keyword form of a
        build (``build_dataset(out=..., tasks=...)``)."""
        base = cls() if base is None else base
        what = {k: v for k, v in changes.items() if k in CONFIG_FIELDS}
        how = {k: v for k, v in changes.items() if k not in CONFIG_FIELDS}
        if "tasks" in what:
            what["tasks"] = tuple(what["tasks"] or ())
        return replace(base, config=replace(base.config, **what), **how)

    @property
    def locked(self) -> bool:
        """Does this run hold the folder's writer lock? Cluster shard runs (``num_shards > 1``
        without ``merge_only``) write only their own units, atomically, and may run at once."""
        return self.num_shards == 1 or self.merge_only
