"""Which dataset a result was computed against: one record that every results file the project
writes carries (``score`` JSON and ``--per-item`` lines, ``eval``'s ``report.json`` and
``per_item.jsonl``, ``human`` answer files, ``export-sft`` manifests), so that a cited number
names its release and can be computed again from it (docs/releasing.md).

``dataset`` is a Hub repo id or the resolved path of a local build folder; ``revision`` the
revision that was asked for (a tag such as ``v1.0.0``, a branch or a commit; None for a local
folder or the default branch); ``commit`` the Hub commit it resolved to (None when local or when
the Hub could not say, e.g. offline); ``config_hash`` the build's (its ``manifest.json``);
``version`` the release tag the dataset's manifest states (``misi-bench push --tag`` writes it;
None for a development push or an unpushed build).

The record is built by the layer that reads the data (``builder/dataset/hub_probe`` for
``score``, ``eval_plugins/common`` for the other front-ends); this module only holds it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass

#: The JSON keys of a record, in the order files show them.
PROVENANCE_KEYS = ("dataset", "revision", "commit", "config_hash", "version")


@dataclass(frozen=True)
class DatasetProvenance:
    """Dataset repo or path, revision, resolved commit, config hash and release version."""

    dataset: str
    revision: str | None = None
    commit: str | None = None
    config_hash: str | None = None
    version: str | None = None

    def to_json(self) -> dict:
        """The record as a JSON object (every key present, None where unknown)."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping) -> DatasetProvenance:
        """The record of :meth:`to_json`'s object (unknown keys ignored)."""
        return cls(**{k: data.get(k) for k in PROVENANCE_KEYS if k in data})

    @classmethod
    def from_manifest(
        cls,
        dataset: str,
        manifest: Mapping | None,
        revision: str | None = None,
        commit: str | None = None,
    ) -> DatasetProvenance:
        """The record of a dataset whose ``manifest.json`` is ``manifest`` (None: not read)."""
        manifest = manifest or {}
        build = manifest.get("config_hash")
        version = manifest.get("version")
        return cls(
            str(dataset),
            revision or None,
            commit or None,
            str(build) if build else None,
            str(version) if version else None,
        )

    def label(self) -> str:
        """One line naming the release, e.g. ``me/misi@v1.0.0 (commit 0a1b2c3d4e5f, config
        hash 6f7e..., version v1.0.0)``."""
        where = self.dataset + (f"@{self.revision}" if self.revision else "")
        parts = []
        if self.commit and self.commit != self.revision:
            parts.append(f"commit {self.commit[:12]}")
        parts.append(f"config hash {self.config_hash or 'not recorded'}")
        if self.version:
            parts.append(f"version {self.version}")
        return f"{where} ({', '.join(parts)})"

    def line_fields(self) -> dict:
        """The fields a per-question line repeats: dataset, revision and commit (the config
        hash is written beside them by the per-item writer)."""
        return {"dataset": self.dataset, "revision": self.revision, "commit": self.commit}
