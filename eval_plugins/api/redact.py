"""Secrets of ``misi-bench eval`` kept out of everything it writes or prints.

One :class:`Redactor` per run, made from the API key and the base URL's credentials (its
userinfo and its query values, e.g. ``https://user:token@host/v1?api-key=...``), stands between
the client and the run folder, the reports, the log and the error messages: every error text
the client builds, every line the run folder stores and every log record of the run pass
through :meth:`Redactor.text` / :meth:`Redactor.obj`, which replace each secret (also in its
URL-encoded and JSON-escaped forms) with :data:`REDACTED`. An endpoint whose error body echoes
the request (several proxies do) therefore cannot put the key on disk or on the screen. The URL
shown anywhere is :func:`public_url` (credentials replaced).
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Iterable
from urllib.parse import parse_qsl, quote, quote_plus, unquote, urlsplit, urlunsplit

REDACTED = "[redacted]"
#: Shorter values are not searched for in texts (they would mangle ordinary words); they are
#: still never stored, since the URL is only ever shown through :func:`public_url`.
MIN_SECRET = 4


def url_secrets(url: str) -> list[str]:
    """The credentials written into ``url``: userinfo name and password (also as the Basic
    authorization an HTTP client makes of them), query values."""
    parts = urlsplit(url)
    user, password = (unquote(v) if v else "" for v in (parts.username, parts.password))
    out = [v for v in (user, password) if v]
    if user or password:  # what an HTTP client sends for them: Basic base64(user:password)
        out.append(base64.b64encode(f"{user}:{password}".encode()).decode("ascii"))
    out += [v for _, v in parse_qsl(parts.query, keep_blank_values=False)]
    return out


def public_url(url: str) -> str:
    """``url`` with its userinfo and query values replaced by ``***`` (safe to store)."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = "***@" + netloc.rsplit("@", 1)[1]
    query = "&".join(f"{k}=***" for k, _ in parse_qsl(parts.query, keep_blank_values=True))
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


class Redactor:
    """Replaces every form of the given secrets in texts and JSON-like objects."""

    def __init__(self, secrets: Iterable[str | None] = ()):
        forms: set[str] = set()
        for secret in secrets:
            if not secret or len(secret) < MIN_SECRET:
                continue
            forms |= {secret, quote(secret, safe=""), quote_plus(secret), json.dumps(secret)[1:-1]}
        self._forms = sorted(forms, key=len, reverse=True)

    @classmethod
    def for_endpoint(cls, api_key: str | None, base_url: str) -> Redactor:
        return cls([api_key, *url_secrets(base_url)])

    def __bool__(self) -> bool:
        return bool(self._forms)

    def text(self, value: str, cut: bool = False) -> str:
        """``value`` with every secret replaced; ``cut``: ``value`` was cut short, so a tail
        that is the start of a secret (a secret cut in two) is replaced too."""
        for form in self._forms:
            if form in value:
                value = value.replace(form, REDACTED)
        if cut:
            for form in self._forms:
                for n in range(min(len(form) - 1, len(value)), MIN_SECRET - 1, -1):
                    if value.endswith(form[:n]):
                        return value[:-n] + REDACTED
        return value

    def obj(self, value):
        """A copy of a JSON-like object (dicts, lists, strings) with every secret replaced."""
        if not self._forms:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.obj(k): self.obj(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.obj(v) for v in value]
        return value


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
