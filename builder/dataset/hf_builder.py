"""A ``datasets`` builder that generates MiSI-Bench in process (no loading script, no download).

The published dataset needs no code: ``load_dataset(<folder or repo>, "<config>")`` reads the
Parquet shards (docs/spec.md section 8; ``datasets`` 4 and later refuse loading scripts anyway). This
builder is for generating the benchmark straight into the ``datasets`` cache from Python::

    from misi_bench import MisiBenchBuilder
    builder = MisiBenchBuilder(config_name="rotation", source="samples", limit=10)
    builder.download_and_prepare()
    test = builder.as_dataset(split="test")

It reuses the normal build (``build_dataset``) into a folder under the builder's download cache,
keyed by the generation options, so the rows are exactly those of ``misi-bench build`` with the
same options, and a killed preparation resumes from the build's per-complex markers. It then yields
the rows of the chosen config from that folder's shards (keys = row ids).

Configs: one per task (the nine names of ``misi_bench.builder.tasks.TASKS``) and ``all``. Options
(keyword arguments of the builder): ``source`` ("samples" or a PDBbind-style folder), ``seed``,
``limit`` (first N complexes), ``image_size`` (px) and ``workers`` (build processes).
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from pathlib import Path

import datasets

from ..core.constants import BUILDER_VERSION, DEFAULT_IMAGE_SIZE
from ..core.errors import MisiError
from ..core.profiles import DEFAULT_PROFILE, get_profile
from ..store.manifest import read_manifest
from ..store.parquet import SPLIT_ORDER, features, iter_config_rows
from ..tasks import TASKS
from .build import build_dataset
from .card import ALL_CONFIG, _card_file
from .config import BuildConfig, BuildOptions

log = logging.getLogger(__name__)

_DESCRIPTION = (
    "MiSI-Bench: microscopic spatial intelligence questions on rendered protein-ligand complexes "
    "(nine tasks; one schema for every config)."
)


@dataclass
class MisiBenchConfig(datasets.BuilderConfig):
    """One task config (or ``all``) plus the generation options."""

    source: str = "samples"
    seed: int = 0
    limit: int | None = None
    image_size: int = DEFAULT_IMAGE_SIZE
    workers: int = 1
    #: The build profile (``paper``, the default, or ``explicit``; see ``builder.core.profiles``).
    profile: str = DEFAULT_PROFILE

    @property
    def tasks(self) -> tuple[str, ...]:
        return tuple(TASKS) if self.name == ALL_CONFIG else (self.name,)

    def build_key(self) -> str:
        """Hash of everything that determines the build folder's content."""
        source = (
            "samples"
            if str(self.source) == "samples"
            else str(Path(self.source).expanduser().resolve())
        )
        fields = {
            "source": source,
            "tasks": list(self.tasks),
            "seed": int(self.seed),
            "limit": None if self.limit is None else int(self.limit),
            "image_size": int(self.image_size),
            "builder_version": BUILDER_VERSION,
        }
        if get_profile(self.profile).names_itself:  # else the cache key of before profiles
            fields["profile"] = self.profile
        return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:16]


class MisiBenchBuilder(datasets.GeneratorBasedBuilder):
    """Generates one MiSI-Bench config (or ``all``) into the ``datasets`` cache."""

    VERSION = datasets.Version(BUILDER_VERSION)
    BUILDER_CONFIG_CLASS = MisiBenchConfig
    BUILDER_CONFIGS = [
        MisiBenchConfig(  # noqa: RUF012  (the datasets API names a class-level list)
            name=name, version=datasets.Version(BUILDER_VERSION), description=f"MiSI-Bench {name}"
        )
        for name in (*TASKS, ALL_CONFIG)
    ]
    DEFAULT_CONFIG_NAME = ALL_CONFIG

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("dataset_name", "misi_bench")
        super().__init__(*args, **kwargs)

    def _info(self) -> datasets.DatasetInfo:
        return datasets.DatasetInfo(
            description=_DESCRIPTION,
            features=features(),
            license="cc-by-4.0",
            citation=_card_file("citation.bib").strip(),
        )

    def _build_folder(self) -> Path:
        return Path(self._cache_downloaded_dir) / "misi_bench_builds" / self.config.build_key()

    def _split_generators(self, dl_manager) -> list[datasets.SplitGenerator]:
        cfg = self.config
        folder = self._build_folder()
        log.info("generating MiSI-Bench %s into %s", cfg.name, folder)
        what = BuildConfig(
            source=cfg.source,
            tasks=tuple(cfg.tasks),
            seed=int(cfg.seed),
            limit=cfg.limit,
            image_size=int(cfg.image_size),
            profile=cfg.profile,
        )
        build_dataset(BuildOptions(what, out=folder, workers=int(cfg.workers), progress=False))
        counts = read_manifest(folder)["counts"]
        splits = [s for s in SPLIT_ORDER if any(counts.get(t, {}).get(s, 0) for t in cfg.tasks)]
        if not splits:
            raise MisiError(
                f"{cfg.source}: the build produced no {cfg.name} questions (see {folder / 'manifest.json'})"
            )
        return [
            datasets.SplitGenerator(name=s, gen_kwargs={"folder": str(folder), "split": s})
            for s in splits
        ]

    def _generate_examples(self, folder: str, split: str):
        for task in self.config.tasks:
            for row in iter_config_rows(Path(folder), task, split):
                yield row["id"], row
