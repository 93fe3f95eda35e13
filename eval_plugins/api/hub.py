"""The Hub revision of the questions of ``misi-bench eval``: which commit a repo and revision are,
and a clear, quick error when the Hub cannot be reached."""

from __future__ import annotations

import logging
import os

from ...builder.core.errors import MisiError

log = logging.getLogger(__name__)

#: Seconds to wait for the Hub to say which commit a revision is (offline: fail fast).
HUB_TIMEOUT_S = 10.0


def _unreachable(exc: BaseException) -> bool:
    """Whether ``exc`` (or its cause) says the Hub could not be reached at all."""
    names = {"ConnectionError", "ConnectError", "ConnectTimeout", "Timeout", "ReadTimeout"}
    names |= {"TimeoutException", "NameResolutionError", "MaxRetryError", "NewConnectionError"}
    seen = 0
    while exc is not None and seen < 8:
        if type(exc).__name__ in names or isinstance(exc, (ConnectionError, TimeoutError)):
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


def hub_commit(repo: str, revision: str | None) -> str:
    """The Hub commit of ``repo`` at ``revision``, or the revision name when the Hub cannot say
    (offline mode, a private repo). A Hub that cannot be reached, outside offline mode, is one
    clear error after at most :data:`HUB_TIMEOUT_S` instead of the loader's retries."""
    try:
        from huggingface_hub import HfApi  # noqa: PLC0415

        sha = HfApi().dataset_info(repo, revision=revision, timeout=HUB_TIMEOUT_S).sha
        if sha:
            return sha
    except Exception as exc:  # offline, no huggingface_hub, private repo...: keep the name
        offline = os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")
        if _unreachable(exc) and not offline:
            raise MisiError(
                f"{repo}: cannot reach the Hugging Face Hub ({type(exc).__name__}); pass "
                "--dataset with a local build folder, or set HF_HUB_OFFLINE=1 to use a cached copy"
            ) from None
        log.log(
            logging.DEBUG if offline else logging.INFO,
            "could not resolve %s@%s to a commit (%s); keying the run on the name",
            repo,
            revision,
            exc,
        )
    return revision or "main"
