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
import logging
import re
from collections.abc import Iterable
from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit

from ...builder.core.secrets import REDACTED, looks_like_key

__all__ = ["REDACTED", "Redactor", "body_secrets", "public_url", "redact_body", "url_secrets"]
#: Shorter values are not searched for in texts (they would mangle ordinary words); they are
#: still never stored, since the URL is only ever shown through :func:`public_url`.
MIN_SECRET = 4
#: Shortest base64 piece searched for (a 4-character secret's piece is 3-4 characters).
MIN_BASE64 = 6


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


def _char_pattern(ch: str) -> str:
    """Every way one character of a secret is spelled in the texts we see: itself, a JSON or
    Python escape (``\u0073``, ``\x73``, a backslash before it), URL-encoding (``%73``, ``+``
    for a space), an HTML character reference. Matched case-insensitively (so also the
    secret in another case, and hex digits in either)."""
    code = ord(ch)
    forms = [
        re.escape(ch),
        rf"\\+u{code:04x}",
        rf"%{code:02x}",
        rf"&#0*{code};",
        rf"&#x0*{code:x};",
    ]
    if code < 256:
        forms.append(rf"\\+x{code:02x}")
    if ch in '"\\/':
        forms.append(r"\\+" + re.escape(ch))
    if ch == " ":
        forms.append(r"\+")
    return "(?:" + "|".join(forms) + ")"


#: One escaped character in any of the spellings :func:`_char_pattern` knows.
_ESCAPE_RE = re.compile(
    r"%([0-9a-fA-F]{2})|\\+u([0-9a-fA-F]{4})|\\+x([0-9a-fA-F]{2})|\\+([\"\\/])"
    r"|&#0*([0-9]{1,7});|&#[xX]0*([0-9a-fA-F]{1,6});"
)


def _unescape(match: re.Match) -> str:
    pct, u4, x2, quoted, dec, hexa = match.groups()
    if quoted:
        return quoted
    if dec:
        return chr(min(int(dec), 0x10FFFF))
    return chr(int(pct or u4 or x2 or hexa, 16))


def decoded(text: str) -> str:
    """``text`` lower-cased with every escaped character :func:`_char_pattern` knows decoded
    (one pass): a secret spelled any of those ways in ``text`` is in it plainly, so a plain
    search tells whether the (slower) spelled pattern has work to do."""
    if "%" in text or "\\" in text or "&#" in text:
        text = _ESCAPE_RE.sub(_unescape, text)
    return text.lower()


def base64_pieces(secret: str) -> set[str]:
    """The base64 text (standard and URL-safe alphabets) that ``secret`` becomes inside any
    base64-encoded text, whatever bytes come before it (a ``Basic`` or ``Bearer`` header, a
    JSON document echoed as base64): for each of the three byte offsets modulo 3, the
    characters that the secret's bytes alone determine."""
    data = secret.encode("utf-8")
    out: set[str] = set()
    for pad in range(3):
        code = base64.b64encode(b"\0" * pad + data).decode("ascii").rstrip("=")
        piece = code[-(-8 * pad // 6) : 8 * (pad + len(data)) // 6]
        if len(piece) >= MIN_BASE64:
            out |= {piece, piece.replace("+", "-").replace("/", "_")}
    return out


class Redactor:
    """Replaces every form of the given secrets in texts and JSON-like objects: the secret in
    any case and any mix of JSON/Python escapes, URL-encoding and HTML references, as hex,
    and as base64 at any offset of an encoded text."""

    def __init__(self, secrets: Iterable[str | None] = ()):
        spelled: set[str] = set()
        pieces: set[str] = set()
        for secret in secrets:
            if not secret or len(secret) < MIN_SECRET:
                continue
            spelled |= {secret, secret.encode("utf-8").hex()}
            pieces |= base64_pieces(secret)
        spelled_list = sorted(spelled, key=len, reverse=True)
        self._pieces = sorted(pieces - spelled, key=len, reverse=True)
        #: the plain forms, for a secret cut at the end of a quote
        self._forms = spelled_list + self._pieces
        lowered = {form.lower() for form in spelled_list}
        self._lowered = sorted(lowered | {f.replace(" ", "+") for f in lowered if " " in f})
        self._spelled = (
            re.compile("|".join("".join(map(_char_pattern, s)) for s in spelled_list), re.I)
            if spelled_list
            else None
        )

    @classmethod
    def for_endpoint(cls, api_key: str | None, base_url: str, extra: Iterable[str] = ()):
        """The run's redactor: the API key, the base URL's credentials and ``extra`` (the
        secrets of ``--extra-body``: :func:`body_secrets`)."""
        return cls([api_key, *url_secrets(base_url), *extra])

    def __bool__(self) -> bool:
        return bool(self._forms)

    def text(self, value: str, cut: bool = False) -> str:
        """``value`` with every secret replaced; ``cut``: ``value`` was cut short, so a tail
        that is the start of a secret (a secret cut in two) is replaced too."""
        if not self._forms:
            return value
        if self._spelled is not None:
            plain = decoded(value)  # fast: the (slow) spelled pattern runs only on a hit
            if any(form in plain for form in self._lowered):
                value = self._spelled.sub(REDACTED, value)
        for piece in self._pieces:
            if piece in value:
                value = value.replace(piece, REDACTED)
        if cut:
            lowered = value.lower()
            for form in self._forms:
                low = form.lower()
                for n in range(min(len(form) - 1, len(value)), MIN_SECRET - 1, -1):
                    if value.endswith(form[:n]) or lowered.endswith(low[:n]):
                        return value[:-n] + REDACTED
        return value

    def obj(self, value):
        """A copy of a JSON-like object (dicts, lists, strings) with every secret replaced."""
        if not self._forms:
            return value
        return map_strings(value, self.text)


def map_strings(value, fn):
    """A copy of a JSON-like object with ``fn`` applied to every string, keys included; walked
    with a stack of its own (a reply nested 100,000 deep costs memory, never a RecursionError)."""
    root = [value]
    stack: list = [(root, 0)]
    while stack:
        parent, slot = stack.pop()
        item = parent[slot]
        if isinstance(item, str):
            parent[slot] = fn(item)
        elif isinstance(item, dict):
            out = {}
            for k, v in item.items():
                key = fn(k) if isinstance(k, str) else k
                out[key] = v
                stack.append((out, key))
            parent[slot] = out
        elif isinstance(item, (list, tuple)):
            copy = list(item)
            parent[slot] = copy
            stack += [(copy, i) for i in range(len(copy))]
    return root[0]


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
