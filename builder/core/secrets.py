"""Secrets kept out of every message and stored line: what looks like an access key
(argparse's errors of every ``misi-bench`` parser, ``misi-bench eval``'s stored settings), and
the :class:`Redactor` that replaces known secrets in any spelling (``eval``'s run folder and log,
the human app's log).

One mechanism, not one pattern per spelling: a text is first *normalised* (:func:`normalised`),
undoing what endpoints, proxies and clients do to a secret they echo, repeated to a fixed point:
zero-width characters dropped, escapes decoded (URL-encoding, also twice or more; JSON and
Python escapes, ``\\n`` included; HTML character references), runs of hex bytes with separators
(``73:6b:2d``, ``0x73 0x6b``) decoded, and wrapped lines joined (MIME / ``openssl base64`` line
breaks, a key split over two lines). The secret is then searched in the normalised text, in
any case, plainly, as contiguous hex and as base64 at any offset (:func:`base64_pieces`); each
hit is mapped back to the characters of the original text it came from, and those are replaced
by :data:`REDACTED`. Standard library only.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Iterable
from urllib.parse import parse_qsl, unquote, urlsplit

#: What replaces a secret in any text.
REDACTED = "[redacted]"
#: Text that looks like an access key: a known vendor prefix, or a long run of letters, digits,
#: ``-`` and ``_`` mixing upper case, lower case and digits (hashes and UUIDs are one case).
KEY_LIKE_RE = re.compile(
    r"(?<![\w-])(?:(?:sk|pk|rk)[-_][\w-]{8,}|hf_[A-Za-z0-9]{8,}|gh[pousr]_[A-Za-z0-9]{8,}"
    r"|github_pat_\w{8,}|xox[abprs]-[\w-]{8,}|AKIA[0-9A-Z]{12,}|AIza[\w-]{20,}|glpat-[\w-]{8,}"
    r"|(?=[\w-]*[a-z])(?=[\w-]*[A-Z])(?=[\w-]*\d)[\w-]{24,})(?![\w-])"
)
#: Shorter secrets are not searched for in texts (they would mangle ordinary words).
MIN_SECRET = 4
#: Shortest base64 piece searched for (a 4-character secret's piece is 3-4 characters).
MIN_BASE64 = 6
#: Rounds of normalisation at most (each undoes one layer of encoding).
MAX_ROUNDS = 8


def looks_like_key(text: str) -> bool:
    """True when ``text`` holds something shaped like an access key (:data:`KEY_LIKE_RE`)."""
    return bool(KEY_LIKE_RE.search(text))


def hide_keys(text: str) -> str:
    """``text`` with every key-shaped word replaced by :data:`REDACTED` (for messages that
    quote what a user typed, e.g. argparse's errors)."""
    return KEY_LIKE_RE.sub(REDACTED, text)


# --------------------------------------------------------------------------------------------
# Normalisation: each step is a pattern and what each match becomes, as (text, span) pieces
# --------------------------------------------------------------------------------------------

#: Characters that show nothing: zero-width space/joiners, word joiner, BOM, soft hyphen.
_INVISIBLE_RE = re.compile("[\u200b-\u200f\u2060-\u2064\ufeff\u00ad\u034f\u180e]+")
#: One escaped character: %XX, \uXXXX, \xXX, a backslash before a quote, slash or backslash,
#: \n \r \t, a decimal or hex HTML character reference.
_ESCAPE_RE = re.compile(
    r"%([0-9a-fA-F]{2})|\\+u([0-9a-fA-F]{4})|\\+x([0-9a-fA-F]{2})|\\+([\"\\/])|\\+([nrt])"
    r"|&#0*([0-9]{1,7});?|&#[xX]0*([0-9a-fA-F]{1,6});?"
)
_CONTROL = {"n": "\n", "r": "\r", "t": "\t"}
#: Four or more hex bytes with a separator between each (``73:6b``, ``73 6b``, ``0x73,0x6b``).
_HEX_RUN_RE = re.compile(
    r"(?<![0-9A-Za-z])(?:0[xX])?[0-9a-fA-F]{2}(?:[\s:.,;_-]{1,3}(?:0[xX])?[0-9a-fA-F]{2}){3,}"
    r"(?![0-9A-Za-z])"
)
_HEX_BYTE_RE = re.compile(r"(?:0[xX])?([0-9a-fA-F]{2})")
#: A line break with the blanks (and quoting marks) around it: wrapped lines are joined.
_WRAP_RE = re.compile(r"[ \t]*(?:\r\n|\r|\n)[ \t>]*")

Pieces = list[tuple[str, tuple[int, int]]]


def _unescape(m: re.Match) -> Pieces:
    pct, u4, x2, quoted, control, dec, hexa = m.groups()
    if quoted:
        char = quoted
    elif control:
        char = _CONTROL[control]
    elif dec:
        char = chr(min(int(dec), 0x10FFFF))
    else:
        char = chr(min(int(pct or u4 or x2 or hexa, 16), 0x10FFFF))
    return [(char, m.span())]


def _hex_bytes(m: re.Match) -> Pieces:
    base = m.start()
    return [
        (chr(int(b.group(1), 16)), (base + b.start(), base + b.end()))
        for b in _HEX_BYTE_RE.finditer(m.group())
    ]


def _drop(m: re.Match) -> Pieces:
    return []


_STEPS: tuple[tuple[re.Pattern, Callable[[re.Match], Pieces]], ...] = (
    (_INVISIBLE_RE, _drop),
    (_ESCAPE_RE, _unescape),
    (_HEX_RUN_RE, _hex_bytes),
    (_WRAP_RE, _drop),
)


def _may_match(pattern: re.Pattern, text: str) -> bool:
    """A cheap test that a step has nothing to do (most texts: no escape, no line break)."""
    if pattern is _INVISIBLE_RE:
        return not text.isascii()
    if pattern is _ESCAPE_RE:
        return "%" in text or "\\" in text or "&#" in text
    if pattern is _WRAP_RE:
        return "\n" in text or "\r" in text
    return True


def _step_plain(text: str, pattern: re.Pattern, fn) -> str:
    return pattern.sub(lambda m: "".join(t for t, _ in fn(m)), text)


def normalised(text: str) -> str:
    """``text`` with every layer of spelling this module knows undone, to a fixed point (at
    most :data:`MAX_ROUNDS` rounds): what a secret search looks at."""
    for _ in range(MAX_ROUNDS):
        before = text
        for pattern, fn in _STEPS:
            if _may_match(pattern, text):
                text = _step_plain(text, pattern, fn)
        if text == before:
            break
    return text


def _step_mapped(text: str, starts: list[int], ends: list[int], pattern, fn):
    """One normalisation step that keeps, for each output character, the span of the original
    text it came from (``starts[i]``, ``ends[i]``)."""
    out: list[str] = []
    new_starts: list[int] = []
    new_ends: list[int] = []
    pos = 0
    for m in pattern.finditer(text):
        a, b = m.span()
        out.append(text[pos:a])
        new_starts += starts[pos:a]
        new_ends += ends[pos:a]
        for piece, (pa, pb) in fn(m):
            out.append(piece)
            new_starts += [starts[pa]] * len(piece)
            new_ends += [ends[pb - 1]] * len(piece)
        pos = b
    out.append(text[pos:])
    new_starts += starts[pos:]
    new_ends += ends[pos:]
    return "".join(out), new_starts, new_ends


def _normalised_mapped(text: str) -> tuple[str, list[int], list[int]]:
    starts, ends = list(range(len(text))), list(range(1, len(text) + 1))
    for _ in range(MAX_ROUNDS):
        before = text
        for pattern, fn in _STEPS:
            text, starts, ends = _step_mapped(text, starts, ends, pattern, fn)
        if text == before:
            break
    return text, starts, ends


def hide_matches(text: str, pattern: re.Pattern, replacement: str = REDACTED) -> str:
    """``text`` with the group ``value`` of every match of ``pattern`` in its normalised form
    replaced (on the original characters it came from): ``%74oken=abc`` is ``token=abc``."""
    if not pattern.search(text) and not pattern.search(normalised(text)):
        return text
    norm, starts, ends = _normalised_mapped(text)
    spans = [
        (starts[m.start("value")], ends[m.end("value") - 1])
        for m in pattern.finditer(norm)
        if m.end("value") > m.start("value")
    ]
    for a, b in reversed(sorted(set(spans))):
        text = text[:a] + replacement + text[b:]
    return text


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


def _find_all(haystack: str, needle: str) -> Iterable[int]:
    i = haystack.find(needle)
    while i >= 0:
        yield i
        i = haystack.find(needle, i + 1)


class Redactor:
    """Replaces every spelling of the given secrets in texts and JSON-like objects (see the
    module's docstring: normalised text, the secret in any case, as hex, as base64 at any
    offset, mapped back onto the original characters)."""

    def __init__(self, secrets: Iterable[str | None] = ()):
        lowered: set[str] = set()
        pieces: set[str] = set()
        for secret in secrets:
            if not secret or len(secret) < MIN_SECRET:
                continue
            lowered |= {secret.lower(), secret.encode("utf-8").hex()}
            if " " in secret:
                lowered.add(secret.lower().replace(" ", "+"))
            pieces |= base64_pieces(secret)
        self._lowered = sorted(lowered, key=len, reverse=True)
        self._pieces = sorted(pieces - lowered, key=len, reverse=True)
        #: the plain forms, for a secret cut at the end of a quote
        self._forms = self._lowered + self._pieces

    @classmethod
    def for_endpoint(cls, api_key: str | None, base_url: str, extra: Iterable[str] = ()):
        """The run's redactor: the API key, the base URL's credentials and ``extra`` (the
        secrets of ``--extra-body``)."""
        return cls([api_key, *url_secrets(base_url), *extra])

    def __bool__(self) -> bool:
        return bool(self._forms)

    def _hits(self, text: str) -> bool:
        low = text.lower()
        return any(f in low for f in self._lowered) or any(p in text for p in self._pieces)

    def _spans(self, value: str) -> list[tuple[int, int]]:
        text, starts, ends = _normalised_mapped(value)
        low = text.lower()
        spans = [
            (starts[i], ends[i + len(form) - 1])
            for haystack, forms in ((low, self._lowered), (text, self._pieces))
            for form in forms
            for i in _find_all(haystack, form)
        ]
        merged: list[tuple[int, int]] = []
        for a, b in sorted(spans):
            if merged and a <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
            else:
                merged.append((a, b))
        return merged

    def text(self, value: str, cut: bool = False) -> str:
        """``value`` with every secret replaced; ``cut``: ``value`` was cut short, so a tail
        that is the start of a secret (a secret cut in two) is replaced too."""
        if not self._forms:
            return value
        if self._hits(value) or self._hits(normalised(value)):
            for a, b in reversed(self._spans(value)):
                value = value[:a] + REDACTED + value[b:]
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
