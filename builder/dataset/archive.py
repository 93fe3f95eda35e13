"""Fetch PDB entries from the PDB archive's public file service (or a mirror) into a local cache.

``{mirror}/{ID}.cif.gz`` is downloaded for each missing entry (default mirror
:data:`DEFAULT_MIRROR`, the wwPDB/RCSB file service). Politeness and robustness:

* at most ``concurrency`` downloads at once (default 4);
* retries with exponential backoff and jitter on timeouts, connection errors, HTTP 429 and 5xx
  (``Retry-After`` honoured) and on a corrupted download; HTTP 404 is final ("not in the archive");
* a download is checked before it is kept (complete gzip stream that decompresses to an mmCIF
  ``data_`` block), written to a temporary name and renamed, so the cache never holds half a file;
* entries already in the cache are never requested again.

Each outcome is a :class:`FetchResult`; failures are returned, never raised, so a build records
them as skip reasons and goes on.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import logging
import os
import random
import time
import urllib.error
import urllib.request
import zlib
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ..chemistry.files import MAX_FILE_BYTES
from ..core.constants import PACKAGE_VERSION
from ..store.id_list import expected_structure, find_structure

log = logging.getLogger(__name__)

DEFAULT_MIRROR = "https://files.rcsb.org/download"
MIRROR_ENV = "MISI_BENCH_PDB_MIRROR"
USER_AGENT = f"misi-bench/{PACKAGE_VERSION} (structure fetch for benchmark builds)"


@dataclass(frozen=True)
class FetchPolicy:
    """How hard and how politely to fetch: seconds, counts."""

    concurrency: int = 4
    retries: int = 4
    timeout: float = 30.0
    backoff: float = 0.5
    max_backoff: float = 30.0


@dataclass(frozen=True)
class FetchResult:
    """Outcome for one entry: ``path`` of the cached file (None on failure), ``sha256`` of its
    bytes, ``fetched`` (False when it was already cached), ``error`` (why it failed), ``url``."""

    pdb_id: str
    path: str | None
    sha256: str | None = None
    fetched: bool = False
    error: str = ""
    url: str = ""
    attempts: int = 0


class _Retry(Exception):
    def __init__(self, reason: str, wait: float | None = None):
        super().__init__(reason)
        self.reason, self.wait = reason, wait


def mirror_url(mirror: str | None = None) -> str:
    return (mirror or os.environ.get(MIRROR_ENV) or DEFAULT_MIRROR).rstrip("/")


def check_entry_bytes(data: bytes) -> str | None:
    """None when ``data`` is a complete gzip stream holding an mmCIF block, else the reason."""
    try:  # unpacked in chunks and thrown away (a bomb costs a chunk, not what it unpacks to)
        with gzip.GzipFile(fileobj=io.BytesIO(data), mode="rb") as stream:
            head = stream.read(4096)
            total = len(head)
            while chunk := stream.read(1 << 20):
                total += len(chunk)
                if total > MAX_FILE_BYTES:
                    return (
                        f"unpacks to over {MAX_FILE_BYTES:,} bytes, the limit of a structure file"
                    )
    except (OSError, EOFError, zlib.error) as exc:
        return f"corrupted gzip ({type(exc).__name__}: {exc})"
    if head.lstrip()[:5] != b"data_":
        return "downloaded file is not an mmCIF entry (no data_ block)"
    return None


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _download(url: str, policy: FetchPolicy) -> bytes:
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    try:
        with urllib.request.urlopen(request, timeout=policy.timeout) as response:  # noqa: S310 (https or a user mirror)
            data = response.read(MAX_FILE_BYTES + 1)
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            raise FileNotFoundError("not in the archive (HTTP 404)") from None
        if exc.code == 429 or exc.code >= 500:
            after = exc.headers.get("Retry-After") if exc.headers else None
            wait = float(after) if after and after.strip().isdigit() else None
            raise _Retry(f"HTTP {exc.code}", wait) from None
        raise FileNotFoundError(f"HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise _Retry(f"network error ({reason})") from None
    if len(data) > MAX_FILE_BYTES:
        raise FileNotFoundError(
            f"download over {MAX_FILE_BYTES:,} bytes, the limit of a structure file"
        )
    problem = check_entry_bytes(data)
    if problem:
        raise _Retry(problem)
    return data


def fetch_entry(
    pdb_id: str, folder: Path, mirror: str | None = None, policy: FetchPolicy = FetchPolicy()
) -> FetchResult:
    """Make ``<folder>/<id>.cif.gz`` exist (download it unless an entry is cached); never raises."""
    folder = Path(folder)
    cached = find_structure(folder, pdb_id)
    if cached is not None:
        return FetchResult(pdb_id, str(cached), _sha256(cached.read_bytes()), fetched=False)
    url = f"{mirror_url(mirror)}/{pdb_id.upper()}.cif.gz"
    last = ""
    for attempt in range(1, policy.retries + 2):
        try:
            data = _download(url, policy)
        except FileNotFoundError as exc:
            return FetchResult(pdb_id, None, error=f"{url}: {exc}", url=url, attempts=attempt)
        except _Retry as exc:
            last = exc.reason
            if attempt > policy.retries:
                break
            wait = (
                exc.wait
                if exc.wait is not None
                else min(policy.max_backoff, policy.backoff * 2 ** (attempt - 1))
            )
            wait *= 1.0 + 0.25 * random.random()  # jitter: many builders do not retry in step
            log.info("%s: %s, retry %d in %.1f s", url, exc.reason, attempt, wait)
            time.sleep(wait)
            continue
        target = expected_structure(folder, pdb_id)
        folder.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.part")
        tmp.write_bytes(data)
        os.replace(tmp, target)
        return FetchResult(
            pdb_id, str(target), _sha256(data), fetched=True, url=url, attempts=attempt
        )
    return FetchResult(
        pdb_id,
        None,
        error=f"{url}: gave up after {policy.retries + 1} attempts ({last})",
        url=url,
        attempts=policy.retries + 1,
    )


def fetch_entries(
    pdb_ids: Iterable[str],
    folder: str | Path,
    mirror: str | None = None,
    policy: FetchPolicy = FetchPolicy(),
    progress: bool = False,
) -> dict[str, FetchResult]:
    """Fetch every missing entry of ``pdb_ids`` into ``folder`` with at most
    ``policy.concurrency`` downloads at once; ``{pdb_id: FetchResult}`` in id order."""
    from tqdm.auto import tqdm  # noqa: PLC0415 (only when fetching)

    ids = sorted(set(pdb_ids))
    results: dict[str, FetchResult] = {}
    todo = [p for p in ids if find_structure(Path(folder), p) is None]
    for p in ids:
        if p not in todo:
            results[p] = fetch_entry(p, Path(folder), mirror, policy)
    if todo:
        log.info("fetching %d entries from %s into %s", len(todo), mirror_url(mirror), folder)
        with (
            ThreadPoolExecutor(max_workers=max(1, int(policy.concurrency))) as pool,
            tqdm(total=len(todo), desc="fetch", unit="entry", disable=not progress) as bar,
        ):
            for result in pool.map(lambda p: fetch_entry(p, Path(folder), mirror, policy), todo):
                results[result.pdb_id] = result
                if result.error:
                    log.warning("%s: %s", result.pdb_id, result.error)
                bar.update()
    return {p: results[p] for p in ids}
