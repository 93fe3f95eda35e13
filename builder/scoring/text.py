"""Clean-up of model output before parsing: text coercion and the :data:`MAX_CHARS` cap, unicode
(dashes, quotes, zero-width), reasoning blocks, ``<answer>`` tags, LaTeX, markdown; where the answer
is looked for (:func:`sections`) and how list items are grouped (:func:`group_runs`)."""

from __future__ import annotations

import re
import unicodedata

#: Model output is read in windows of this many characters: the tail of the text and, when the
#: last answer marker lies further back, the text that follows that marker.
MAX_CHARS = 20_000
#: Longer outputs are cut to their last MAX_INPUT_CHARS characters before anything else (bounds
#: memory; every pass over the full text is a linear scan).
MAX_INPUT_CHARS = 2_000_000

# --------------------------------------------------------------------------------------------
# Text clean-up
# --------------------------------------------------------------------------------------------

_DASHES = dict.fromkeys(
    map(ord, "\u2212\u2010\u2011\u2012\u2013\u2014\u2015\ufe63\uff0d\u2796"), "-"
)
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
_LATEX_RE = re.compile(
    r"\\(?:text|mathrm|textbf|mathbf|operatorname)\s*\{|\^\s*\{?\s*\\circ\s*\}?|\\circ|\\degree"
    r"|\\,|\\;|\\!|\\quad|\\ |\\\(|\\\)|\\\[|\\\]|\$|[{}]"
)
_EMPHASIS_RE = re.compile(r"\*\*|__|\*")
_STAR_RUN_RE = re.compile(r"\*{3,}")
_WORDISH = re.compile(r"[\w'*]")
_WORD_OR_STAR = re.compile(r"[\w*]")
_LINE_PREFIX_RE = re.compile(
    r"(?m)^[ \t]*(?:#{1,6}[ \t]+|>[ \t]*|[-*+\u2022\u25cf\u25aa][ \t]+|\d{1,3}[.)][ \t]+)+"
)
_HSPACE_RE = re.compile(r"[^\S\n]+")
_NEWLINES_RE = re.compile(r" ?\n[\s]*")
_MARKER_RE = re.compile(
    r"(?i)(?:final\s+answer|answer\s*(?:is\b|:|=|would\s+be|should\s+be|will\s+be|must\s+be)|answer\s*\n|\\boxed\s*\{)"
)
_TABLE_RULE_RE = re.compile(r"^\s*\|?(?:\s*:?-{2,}:?\s*\|)+\s*(?::?-{2,}:?\s*)?$")
#: Joins the two windows of a long output; its word breaks any list running across the cut.
_WINDOW_GAP = "\n\n[omitted text]\n\n"
#: Candidate places tried per needle when looking for the last marker or tag of a long output.
_MAX_CANDIDATES = 1_000


def _coerce_text(text: object) -> str | None:
    """Model output as a ``str`` (tail-capped at MAX_INPUT_CHARS), or None when there is none."""
    if text is None:
        return None
    if isinstance(text, (bytes, bytearray, memoryview)):
        text = bytes(text[-4 * MAX_INPUT_CHARS :]).decode("utf-8", errors="replace")
    elif not isinstance(text, str):
        try:
            text = str(text)
        except Exception:  # noqa: BLE001 (arbitrary objects may have a broken __str__)
            return None
        if not isinstance(text, str):
            return None
    return text[-MAX_INPUT_CHARS:]


def _strip_reasoning(text: str) -> str:
    """Drop ``<think>...</think>`` (and similar) blocks when an answer follows them."""
    closes = list(_THINK_CLOSE_RE.finditer(text))
    if closes:
        after = text[closes[-1].end() :]
        if after.strip():
            return after
    return _THINK_ANY_RE.sub(" ", text)


def _answer_block(text: str) -> str:
    """The inside of the last non-empty ``<answer>...</answer>`` block, else ``text``."""
    opens = list(_ANSWER_OPEN_RE.finditer(text))
    if opens:
        rest = text[opens[-1].end() :]
        close = _ANSWER_CLOSE_RE.search(rest)
        inner = rest[: close.start()] if close else rest
        if inner.strip():
            return inner
    return text


def _last_match(
    regex: re.Pattern, text: str, low: str, needles: tuple[str, ...]
) -> re.Match | None:
    """The match of ``regex`` that starts last in ``text``, found from the end: candidates are
    the places of ``needles`` in ``low`` (``text`` in lower case, same length); at most
    _MAX_CANDIDATES tried per needle, so the cost stays linear in the text's length."""
    best = None
    for needle in needles:
        end = len(low)
        for _ in range(_MAX_CANDIDATES):
            pos = low.rfind(needle, 0, end)
            if pos < 0 or (best is not None and pos <= best.start()):
                break
            m = regex.match(text, pos)
            if m:
                best = m
                break
            end = pos
    return best


def _lower(text: str) -> str:
    """``text`` in lower case, same length (U+0130 is the one character whose lower case is two)."""
    return text.replace("\u0130", "i").lower()


def _long_text(raw: str) -> str:
    """At most about 2 x MAX_CHARS characters of a long output: after the last closing
    reasoning tag (when text follows it) and inside the last ``<answer>`` block, the text after
    the last answer marker (when that marker is not within the tail) joined to the tail."""
    close = _last_match(_THINK_CLOSE_RE, raw, _lower(raw), ("</", "\u25c1/think"))
    if close is not None and raw[close.end() :].strip():
        raw = raw[close.end() :]
    raw = _answer_block(raw)
    if len(raw) <= MAX_CHARS:
        return raw
    marker = _last_match(_MARKER_RE, raw, _lower(raw), ("final", "answer", "\\boxed"))
    tail_start = len(raw) - MAX_CHARS
    if marker is None or marker.start() >= tail_start:
        return raw[tail_start:]
    head = raw[marker.start() : min(marker.start() + MAX_CHARS, tail_start)]
    return head + _WINDOW_GAP + raw[tail_start:]


def _strip_emphasis(text: str) -> str:
    """Remove markdown bold/italic markers (``**``, ``__``, ``*``) that open and close on one line,
    in one linear pass; a ``*`` inside an atom name (``C5'*``) is kept."""
    if "*" not in text and "__" not in text:
        return text
    text = _STAR_RUN_RE.sub(" ", text)  # three or more stars are a rule, not emphasis
    drop: list[tuple[int, int]] = []
    pending: dict[str, tuple[int, int, int]] = {}
    line = 0
    last_end = 0
    n = len(text)
    for m in _EMPHASIS_RE.finditer(text):
        a, b, kind = m.start(), m.end(), m.group()
        line += text.count("\n", last_end, a)
        last_end = a
        before = text[a - 1] if a else " "
        after = text[b] if b < n else " "
        inner_stop = "*_" if kind != "*" else "*"
        can_open = not _WORDISH.match(before) and not after.isspace() and after not in inner_stop
        can_close = (
            not before.isspace() and before not in inner_stop and not _WORD_OR_STAR.match(after)
        )
        opener = pending.get(kind)
        if can_close and opener is not None and opener[2] == line and opener[1] < a:
            drop += [(opener[0], opener[1]), (a, b)]
            del pending[kind]
        elif can_open and (opener is None or opener[2] != line):
            pending[kind] = (a, b, line)
    if not drop:
        return text
    drop.sort()
    out, pos = [], 0
    for a, b in drop:
        out.append(text[pos:a])
        pos = b
    out.append(text[pos:])
    return "".join(out)


def _table_rows(text: str) -> str:
    """Markdown table rows as bond items: ``| ASN | 460 | OD1 | A | O1B |`` becomes
    ``ASN 460 OD1 A, O1B ;``. The ligand atom is the column whose header names the ligand, else
    the last column; columns after it (distances...) and the header row are dropped."""
    if text.count("|") < 2:
        return text
    lines = text.split("\n")
    lig_col: int | None = None
    in_table = False  # after a header row: rows need no leading "|"
    for i, line in enumerate(lines):
        if line.count("|") < 2:
            lig_col, in_table = None, False
            continue
        if _TABLE_RULE_RE.match(line):
            lines[i] = ""
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if i + 1 < len(lines) and _TABLE_RULE_RE.match(lines[i + 1]):  # header row
            lig_col = next((k for k, c in enumerate(cells) if "lig" in c.lower()), None)
            lines[i], in_table = "", True
            continue
        if not (in_table or line.lstrip().startswith("|")):
            continue  # "a | b | c" in prose: left to the plain separator rule
        k = lig_col if lig_col is not None and 0 < lig_col < len(cells) else len(cells) - 1
        prot = " ".join(c for c in cells[:k] if c)
        lines[i] = f"{prot}, {cells[k]} ;" if prot and cells[k] else line
    return "\n".join(lines)


def clean(text: object, *, tables: bool = False) -> str | None:
    """Normalise a model output for parsing: unicode, reasoning blocks, ``<answer>`` tags,
    markdown, LaTeX. Long outputs are first cut to the windows of :func:`_long_text`. With
    ``tables`` markdown table rows become bond items (:func:`_table_rows`)."""
    raw = _coerce_text(text)
    if raw is None:
        return None
    if len(raw) > MAX_CHARS:  # linear passes over the full text, then work on the windows only
        raw = _long_text(raw)
    s = unicodedata.normalize("NFKC", raw).translate(_TRANSLATE)
    # Collapse whitespace runs: keeps every later regex free of long ambiguous runs.
    s = _HSPACE_RE.sub(" ", s)
    s = _NEWLINES_RE.sub("\n", s)
    s = _answer_block(_strip_reasoning(s))
    s = _BOXED_RE.sub(" Answer: ", s)
    s = _LATEX_RE.sub(" ", s)
    s = _HTML_TAG_RE.sub(" ", s)
    s = s.replace("`", " ")
    if tables:
        s = _table_rows(s)
    s = s.replace("|", " ; ")
    s = _strip_emphasis(s)
    s = _LINE_PREFIX_RE.sub("", s)
    return s


def sections(text: str) -> list[tuple[str, bool]]:
    """Where to look for the answer, in order: the text after the last answer marker (flag
    True: an answer right after the marker wins over later text), then the whole text."""
    markers = list(_MARKER_RE.finditer(text))
    if markers:
        tail = text[markers[-1].end() :]
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
        if runs and is_separator(text[runs[-1][-1].end() : m.start()]):
            runs[-1].append(m)
        else:
            runs.append([m])
    return runs
