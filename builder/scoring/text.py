"""Clean-up of model output before parsing: text coercion and the :data:`MAX_CHARS` cap, unicode
(dashes, quotes, zero-width), reasoning blocks, ``<answer>`` tags, LaTeX, markdown; where the answer
is looked for (:func:`sections`) and how list items are grouped (:func:`group_runs`)."""
from __future__ import annotations

import re
import unicodedata

#: Only the last MAX_CHARS characters of a model output are read (bounds the work per answer).
MAX_CHARS = 20_000

# --------------------------------------------------------------------------------------------
# Text clean-up
# --------------------------------------------------------------------------------------------

_DASHES = dict.fromkeys(map(ord, "\u2212\u2010\u2011\u2012\u2013\u2014\u2015\ufe63\uff0d\u2796"), "-")
_QUOTES = dict.fromkeys(map(ord, "\u2032\u2019\u2018\u02bc"), "'")
_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"), None)
_TRANSLATE = {**_DASHES, **_QUOTES, **_ZERO_WIDTH}

_THINK_TAGS = r"(?:think|thinking|reasoning|reason|thought)"
_THINK_CLOSE_RE = re.compile(rf"</\s*{_THINK_TAGS}\s*>|\u25c1/think\u25b7", re.IGNORECASE)
_THINK_ANY_RE = re.compile(rf"</?\s*{_THINK_TAGS}\s*>|\u25c1/?think\u25b7", re.IGNORECASE)
_ANSWER_OPEN_RE = re.compile(r"<\s*answer\s*>", re.IGNORECASE)
_ANSWER_CLOSE_RE = re.compile(r"<\s*/\s*answer\s*>", re.IGNORECASE)
_HTML_TAG_RE = re.compile(r"</?[A-Za-z][A-Za-z0-9]{0,20}\s*/?>")
_BOXED_RE = re.compile(r"\\boxed\s*\{")
_LATEX_RE = re.compile(r"\\(?:text|mathrm|textbf|mathbf|operatorname)\s*\{|\^\s*\{?\s*\\circ\s*\}?|\\circ|\\degree|\\,|\\;|\\!|\\quad|\\ |\\\(|\\\)|\\\[|\\\]|\$|[{}]")
_BOLD_RE = re.compile(r"(?<![\w'*])(\*\*|__)(?=[^\s*_])(.{1,300}?)(?<=[^\s*_])\1(?![\w*])")
_ITALIC_RE = re.compile(r"(?<![\w'*])\*(?=[^\s*])(.{1,300}?)(?<=[^\s*])\*(?![\w*])")
_LINE_PREFIX_RE = re.compile(r"(?m)^[ \t]*(?:#{1,6}[ \t]+|>[ \t]*|[-*+\u2022\u25cf\u25aa][ \t]+|\d{1,3}[.)][ \t]+)+")
_HSPACE_RE = re.compile(r"[^\S\n]+")
_NEWLINES_RE = re.compile(r" ?\n[\s]*")
_MARKER_RE = re.compile(
    r"(?i)(?:final\s+answer|answer\s*(?:is\b|:|=|would\s+be|should\s+be|will\s+be|must\s+be)|answer\s*\n|\\boxed\s*\{)"
)


def _coerce_text(text: object) -> str | None:
    """Model output as a ``str`` (tail-capped at MAX_CHARS), or None when there is none."""
    if text is None:
        return None
    if isinstance(text, (bytes, bytearray, memoryview)):
        text = bytes(text[-4 * MAX_CHARS:]).decode("utf-8", errors="replace")
    elif not isinstance(text, str):
        try:
            text = str(text)
        except Exception:  # noqa: BLE001 (arbitrary objects may have a broken __str__)
            return None
        if not isinstance(text, str):
            return None
    return text[-MAX_CHARS:]


def _strip_reasoning(text: str) -> str:
    """Drop ``<think>...</think>`` (and similar) blocks when an answer follows them."""
    closes = list(_THINK_CLOSE_RE.finditer(text))
    if closes:
        after = text[closes[-1].end():]
        if after.strip():
            return after
    return _THINK_ANY_RE.sub(" ", text)


def clean(text: object) -> str | None:
    """Normalise a model output for parsing: unicode, reasoning blocks, markdown, LaTeX."""
    raw = _coerce_text(text)
    if raw is None:
        return None
    s = unicodedata.normalize("NFKC", raw).translate(_TRANSLATE)[-MAX_CHARS:]
    # Collapse whitespace runs: keeps every later regex free of long ambiguous runs.
    s = _HSPACE_RE.sub(" ", s)
    s = _NEWLINES_RE.sub("\n", s)
    s = _strip_reasoning(s)
    opens = list(_ANSWER_OPEN_RE.finditer(s))
    if opens:  # <answer>...</answer>: read the last one when it is not empty
        rest = s[opens[-1].end():]
        close = _ANSWER_CLOSE_RE.search(rest)
        inner = rest[:close.start()] if close else rest
        if inner.strip():
            s = inner
    s = _BOXED_RE.sub(" Answer: ", s)
    s = _LATEX_RE.sub(" ", s)
    s = _HTML_TAG_RE.sub(" ", s)
    s = s.replace("`", " ").replace("|", " ; ")
    s = _BOLD_RE.sub(r"\2", s)
    s = _ITALIC_RE.sub(r"\1", s)
    s = _LINE_PREFIX_RE.sub("", s)
    return s


def sections(text: str) -> list[tuple[str, bool]]:
    """Where to look for the answer, in order: the text after the last answer marker (flag
    True: an answer right after the marker wins over later text), then the whole text."""
    markers = list(_MARKER_RE.finditer(text))
    if markers:
        tail = text[markers[-1].end():]
        if tail.strip():
            return [(tail, True), (text, False)]
    return [(text, False)]


_GAP_WORDS_RE = re.compile(
    r"(?i)\b(?:and|then|finally|next|followed\s+by|after\s+that|afterwards|first(?:ly)?|second(?:ly)?|"
    r"third|step|also|bond|bonds|h-bond|h-bonds)\b|\d+"
)
_GAP_CHARS = frozenset(" \t\r\n,;:.-–>→/&+*()[]{}'\"")


def is_separator(gap: str) -> bool:
    """True when ``gap`` only separates two items of one list (punctuation, 'and', 'then', ...)."""
    if len(gap) > 200:
        return False
    rest = _GAP_WORDS_RE.sub(" ", gap)
    return all(ch in _GAP_CHARS for ch in rest)


def group_runs(matches: list[re.Match], text: str) -> list[list[re.Match]]:
    """Group consecutive matches separated only by list separators."""
    runs: list[list[re.Match]] = []
    for m in matches:
        if runs and is_separator(text[runs[-1][-1].end():m.start()]):
            runs[-1].append(m)
        else:
            runs.append([m])
    return runs


