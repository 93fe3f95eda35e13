"""One short look at a Hub dataset repo before reading it (``score --dataset owner/name``), so
that an offline machine or a wrong name is one line after a few seconds, not a long retry loop
or a traceback."""

from __future__ import annotations

import os

from ..core.errors import MisiError

HUB_TIMEOUT_S = 10.0  # one short try before the Hub is declared unreachable
_OFFLINE = ("1", "on", "true", "yes")


def probe_dataset_repo(repo_id: str, timeout_s: float = HUB_TIMEOUT_S) -> None:
    """Return when ``repo_id`` is a dataset the Hub shows (or ``HF_HUB_OFFLINE`` is set, so the
    cached copy is used); raise :class:`MisiError` with one line otherwise."""
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in _OFFLINE:
        return
    try:
        from huggingface_hub import HfApi  # noqa: PLC0415
        from huggingface_hub.errors import HfHubHTTPError  # noqa: PLC0415
    except ImportError:  # datasets brings huggingface_hub; without it datasets says why
        return
    try:
        HfApi().dataset_info(repo_id, timeout=timeout_s)
    except HfHubHTTPError as exc:
        status = getattr(getattr(exc, "response", None), "status_code", None)
        raise MisiError(
            f"--dataset {repo_id}: not a dataset the Hub shows (HTTP {status or '?'}; "
            "a private repo needs `huggingface-cli login`)"
        ) from None
    except Exception as exc:  # noqa: BLE001 (any failure of the one try is one line)
        raise MisiError(
            f"--dataset {repo_id}: the Hub did not answer within {timeout_s:g} s "
            f"({type(exc).__name__}); pass a local build folder, or set HF_HUB_OFFLINE=1 to "
            "use a cached copy"
        ) from None
