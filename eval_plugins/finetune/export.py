"""The export driver: source rows -> one format's writer -> a finished folder.

The export is written into a hidden sibling folder and moved into place at the end, so an
interrupted export leaves no half-written ``OUT``. Same inputs give byte-identical files (rows in
config then shard order, JSON with sorted keys, no timestamps).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ...builder.core.atomic import WriteError, write_error
from ...builder.core.constants import PACKAGE_VERSION
from ...builder.core.errors import InputError
from ...builder.core.provenance import DatasetProvenance
from ..common import build_config_hash
from .formats import FORMATS, WRITERS
from .source import (
    SPLITS,
    config_shards,
    count_rows,
    iter_rows,
    pick_configs,
    resolve_source,
    shards_profile,
)

log = logging.getLogger(__name__)

MANIFEST = "misi_sft_export.json"
TRAIN_SPLIT = "train"
CONTAMINATION_WARNING = (
    "exporting the {split!r} split for training: models fine-tuned on it cannot be "
    "evaluated on MiSI-Bench any more (test contamination); use it only for ablations"
)


@dataclass(frozen=True)
class ExportResult:
    """What an export wrote: ``rows`` per config, image files written (``images_written``, None for
    the ``hf`` format whose images live in the Parquet rows) against image references
    (``image_refs``), the folder's total ``bytes`` and the wall time in ``seconds``."""

    out: Path
    format: str
    split: str
    rows: dict[str, int]
    image_refs: int
    images_written: int | None
    bytes: int
    seconds: float

    @property
    def total_rows(self) -> int:
        return sum(self.rows.values())


def folder_bytes(path: Path) -> int:
    """Total size in bytes of the files under ``path``."""
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file())


def check_split(split: str, allow_test: bool) -> None:
    """Refuse a split other than train unless ``allow_test``; warn when it is allowed."""
    if split not in SPLITS:
        raise InputError("--split", f"unknown split {split!r} (one of {', '.join(SPLITS)})")
    if split == TRAIN_SPLIT:
        return
    if not allow_test:
        raise InputError(
            "--split",
            f"refusing to export the {split!r} split for training without "
            "--allow-test-split (it is the evaluation data)",
        )
    log.warning(CONTAMINATION_WARNING.format(split=split))


def _prepare_out(out: Path, overwrite: bool) -> Path:
    if out.exists() and any(out.iterdir()):
        if not overwrite:
            raise InputError(
                out,
                "output folder exists and is not empty (pass --overwrite to replace an earlier export)",
            )
        if not (out / MANIFEST).is_file():
            raise InputError(
                out, f"--overwrite only replaces an earlier export (no {MANIFEST} there)"
            )
    tmp = out.with_name(f".{out.name}.partial-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    return tmp


def export_sft(
    source: str | Path,
    out: str | Path,
    fmt: str,
    *,
    configs: Sequence[str] | None = None,
    split: str = TRAIN_SPLIT,
    allow_test: bool = False,
    revision: str | None = None,
    overwrite: bool = False,
    progress: bool = True,
    endpoint: str | None = None,
) -> ExportResult:
    """Export ``split`` of ``configs`` (default every task) from ``source`` (build folder or Hub repo
    id, at ``revision`` on ``endpoint``) to ``out`` in format ``fmt`` (a key of :data:`~.formats.FORMATS`)."""
    if fmt not in FORMATS:
        raise InputError("--format", f"unknown format {fmt!r} (one of {', '.join(FORMATS)})")
    check_split(split, allow_test)
    chosen = pick_configs(configs)
    root = resolve_source(str(source), chosen, split, revision, endpoint)
    shards = config_shards(root, chosen, split)
    out = Path(out).expanduser().absolute()
    start = time.perf_counter()
    tmp = _prepare_out(out, overwrite)
    try:
        writer = WRITERS[fmt](tmp, split)
        rows, refs = _write_rows(writer, shards, progress, f"export-sft {fmt}")
        if not rows:
            raise InputError(root, f"the {split} shards of {', '.join(chosen)} hold no rows")
        manifest = _manifest(fmt, split, source, revision, chosen, rows, refs, writer, shards, root)
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        if out.exists():
            shutil.rmtree(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        os.replace(tmp, out)
    except OSError as exc:  # a full disk, a quota: one line naming the file, nothing torn
        shutil.rmtree(tmp, ignore_errors=True)
        raise _export_write_error(out, tmp, exc) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    seconds = time.perf_counter() - start
    result = ExportResult(
        out,
        fmt,
        split,
        dict(manifest["rows"]),
        refs,
        manifest["image_files"],
        folder_bytes(out),
        seconds,
    )
    log.info(
        "export-sft %s: %d rows, %d image references, %s image files, %.1f MB in %.1f s -> %s",
        fmt,
        result.total_rows,
        refs,
        result.images_written,
        result.bytes / 1e6,
        seconds,
        out,
    )
    return result


def _export_write_error(out: Path, tmp: Path, exc: OSError) -> WriteError:
    """The one line for a failed write of the export: the file (named as it would have been in
    ``out``), what the system said, and that nothing was left behind."""
    name = Path(exc.filename) if isinstance(exc.filename, str) else out
    with contextlib.suppress(ValueError):
        name = out / name.relative_to(tmp)
    return write_error(
        name,
        exc,
        f"the partial export was removed and {out} is as it was; free space and run it again",
    )


def _write_rows(writer, shards, progress: bool, desc: str) -> tuple[Counter[str], int]:
    """Write every row of ``shards`` with ``writer`` (then close it); rows per task and the
    number of image references."""
    rows: Counter[str] = Counter()
    refs = 0
    for row in _progress(iter_rows(shards), count_rows(shards), progress, desc):
        writer.add(row)
        rows[row.task] += 1
        refs += len(row.images)
    writer.close()
    return rows, refs


def _manifest(fmt, split, source, revision, chosen, rows, refs, writer, shards, root) -> dict:
    """The export's manifest: format, split, source, configs and rows per config, image
    references and files, package version, build profile, config hash and the source's
    provenance record (``dataset``: repo or path, revision, commit, config hash, version)."""
    store = getattr(writer, "images", None)
    return {
        "format": fmt,
        "split": split,
        "source": str(source),
        "revision": revision,
        "configs": [c for c in chosen if rows[c]],
        "rows": {c: rows[c] for c in chosen if rows[c]},
        "total_rows": sum(rows.values()),
        "image_refs": refs,
        "image_files": store.written if store else None,
        "misi_bench_version": PACKAGE_VERSION,
        "profile": shards_profile(shards),
        # the build's config hash: which build (and so which answers) the rows come from
        "config_hash": build_config_hash(str(root)),
        "dataset": source_provenance(source, revision, root).to_json(),
    }


def source_provenance(source, revision: str | None, root: Path) -> DatasetProvenance:
    """The export source's provenance record, from the manifest of the folder read (``root``:
    the build folder, or the Hub cache's ``snapshots/<commit>`` copy of the repo)."""
    try:
        manifest = json.loads((Path(root) / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = None
    if Path(os.path.expanduser(str(source))).is_dir():
        return DatasetProvenance.from_manifest(str(Path(root).resolve()), manifest)
    commit = Path(root).name if len(Path(root).name) == 40 else None
    return DatasetProvenance.from_manifest(str(source), manifest, revision, commit)


def _progress(rows, total: int, enabled: bool, desc: str):
    if not enabled:
        return rows
    from tqdm.auto import tqdm  # noqa: PLC0415

    return tqdm(rows, total=total, desc=desc, unit="row")
