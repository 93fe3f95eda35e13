"""What looks like an access key, so that no message quotes one (argparse's errors of every
``misi-bench`` parser, ``misi-bench eval``'s stored settings)."""

from __future__ import annotations

import re

#: What replaces a secret in any text.
REDACTED = "[redacted]"
#: Text that looks like an access key: a known vendor prefix, or a long run of letters, digits,
#: ``-`` and ``_`` mixing upper case, lower case and digits (hashes and UUIDs are one case).
KEY_LIKE_RE = re.compile(
    r"(?<![\w-])(?:(?:sk|pk|rk)[-_][\w-]{8,}|hf_[A-Za-z0-9]{8,}|gh[pousr]_[A-Za-z0-9]{8,}"
    r"|github_pat_\w{8,}|xox[abprs]-[\w-]{8,}|AKIA[0-9A-Z]{12,}|AIza[\w-]{20,}|glpat-[\w-]{8,}"
    r"|(?=[\w-]*[a-z])(?=[\w-]*[A-Z])(?=[\w-]*\d)[\w-]{24,})(?![\w-])"
)


def looks_like_key(text: str) -> bool:
    """True when ``text`` holds something shaped like an access key (:data:`KEY_LIKE_RE`)."""
    return bool(KEY_LIKE_RE.search(text))


def hide_keys(text: str) -> str:
    """``text`` with every key-shaped word replaced by :data:`REDACTED` (for messages that
    quote what a user typed, e.g. argparse's errors)."""
    return KEY_LIKE_RE.sub(REDACTED, text)
