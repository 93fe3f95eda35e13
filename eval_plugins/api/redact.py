"""Secrets of ``misi-bench eval`` kept out of everything it writes or prints.

One :class:`Redactor` per run, made from the API key and the base URL's credentials (its
userinfo and its query values, e.g. ``https://user:token@host/v1?api-key=...``), stands between
the client and the run folder, the reports, the log and the error messages: every error text
the client builds, every line the run folder stores and every log record of the run pass
through :meth:`Redactor.text` / :meth:`Redactor.obj` (``builder/core/secrets.py``: the text is
normalised first, then searched), which replace each secret in any spelling with
:data:`REDACTED`. An endpoint whose error body echoes
the request (several proxies do) therefore cannot put the key on disk or on the screen. The URL
shown anywhere is :func:`public_url` (credentials replaced).
"""

from __future__ import annotations

import logging
import re
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from ...builder.core.secrets import (
    REDACTED,
    Redactor,
    looks_like_key,
    map_strings,
    url_secrets,
)

__all__ = [
    "REDACTED",
    "Redactor",
    "body_secrets",
    "map_strings",
    "public_url",
    "redact_body",
    "url_secrets",
]


def public_url(url: str) -> str:
    """``url`` with its userinfo and query values replaced by ``***`` (safe to store)."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = "***@" + netloc.rsplit("@", 1)[1]
    query = "&".join(f"{k}=***" for k, _ in parse_qsl(parts.query, keep_blank_values=True))
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


#: Names of ``--extra-body`` fields whose values are secrets (matched in any case, as a part).
SECRET_FIELD_RE = re.compile(
    r"key|token(?!iz)|secret|passw|auth(?!or)|credential|cookie|session|signature|bearer", re.I
)


def body_secrets(body) -> list[str]:
    """The secret values of a JSON object (``--extra-body``): every string under a field whose
    name says it is one (:data:`SECRET_FIELD_RE`), and every key-shaped string."""
    found: list[str] = []
    stack = [(body, False)]
    while stack:  # a stack of its own: no depth is too deep
        value, secret = stack.pop()
        if isinstance(value, str):
            if secret or looks_like_key(value):
                found.append(value)
        elif isinstance(value, dict):
            stack += [(v, secret or bool(SECRET_FIELD_RE.search(str(k)))) for k, v in value.items()]
        elif isinstance(value, (list, tuple)):
            stack += [(v, secret) for v in value]
    return found


def redact_body(body):
    """A copy of a JSON object with its :func:`body_secrets` replaced (what run.json and
    report.json store of ``--extra-body``)."""
    return Redactor(body_secrets(body)).obj(body) if body else body


class RedactingFilter(logging.Filter):
    """A handler filter that redacts each record's message (installed for the run's length)."""

    def __init__(self, redactor: Redactor):
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = self.redactor.text(message)
        if clean != message:
            record.msg, record.args = clean, ()
        if record.exc_info and record.exc_info[1] is not None:
            text = self.redactor.text(logging.Formatter().formatException(record.exc_info))
            record.exc_info, record.exc_text = None, text
        return True


class redacted_logging:
    """Context manager: every handler of the root logger redacts while the run lasts."""

    def __init__(self, redactor: Redactor):
        self.filter = RedactingFilter(redactor)
        self.handlers: list[logging.Handler] = []

    def __enter__(self) -> redacted_logging:
        if self.filter.redactor:
            self.handlers = list(logging.getLogger().handlers)
            for handler in self.handlers:
                handler.addFilter(self.filter)
        return self

    def __exit__(self, *exc) -> None:
        for handler in self.handlers:
            handler.removeFilter(self.filter)
