"""The one scorer of MiSI-Bench (SPEC section 7), used by the CLI and every evaluation plugin.

Conventions
-----------
* Every metric is on a **0-1 scale** (per question and in reports, averages included); multiply
  by 100 for the paper's percentages.
* Distances are in ångström, angles in degrees, in the screen frame of SPEC section 1.
* Model output is parsed leniently (:func:`parse_prediction`); an answer that cannot be parsed
  scores 0. Nothing here raises because of a model's output. Gold answers are parsed strictly
  (they are written by the builder) and always score exactly 1.0 against themselves.

Metrics per question (:func:`score_prediction`), keys of the returned dict:

* ``score``: the main metric of SPEC section 7; ``exact``: exact match; ``parsed``: 1.0 when the
  output could be parsed at all (its mean is the parse rate).
* ``translation`` / ``rotation`` (T1, T2): ``score = max(0, 1 - |pred - true| / R)`` with
  R = 8 Å / 180°, 0 when the verb or axis is wrong. ``zooming`` (T3): exact match.
* ``docking`` (T7): ``0.5 * rotation_part + 0.5 * move_part`` (also reported as ``rotation_part``
  and ``move_part``). Rotation: the roll axis must match, ``max(0, 1 - |dA| / 180)``. Move: a
  ``move x`` with the sign of the true one, ``max(0, 1 - |dD| / |D|)``. Angles are not wrapped.
* ``translation_rotation``, ``rotation_rotation``, ``interaction_location``: accuracy.
* ``residue_ligand`` (T4): negatives 1 iff the answer is ``No``; positives and ``pocket_ligand``
  (T9) use the set rule on predicted set P and true set G: 0 if ``|P| > 2|G|``; 0.5 if P strictly
  contains G; else ``|P ∩ G| / |G|``; T9 with G empty scores 1 only for ``None``. T4 rows also
  carry ``polarity`` (1.0 for a positive gold answer, 0.0 for a negative one).
"""
from __future__ import annotations

import json
import logging
import math
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from ..core.registry import (BOND_TASKS, CHOICE_TASKS, HEADLINE_EXCLUDED, OPERATION_TASKS, TASK_ALIASES, TASK_NAMES,
                             canonical_task)
from ..operations.language import Move, Operation, Roll, format_operations, parse_operations

logger = logging.getLogger(__name__)

__all__ = [
    "BASELINE_KINDS",
    "BOND_TASKS",
    "CHOICE_TASKS",
    "HEADLINE_EXCLUDED",
    "MAX_CHARS",
    "OPERATION_TASKS",
    "TASK_ALIASES",
    "TASK_NAMES",
    "BondAnswer",
    "aggregate",
    "baseline_prediction",
    "canonical_task",
    "format_parsed",
    "format_report_markdown",
    "parse_prediction",
    "score_prediction",
    "score_records",
]

#: Only the last MAX_CHARS characters of a model output are read (bounds the work per answer).
MAX_CHARS = 20_000

#: Weighted-score radius R of T1 (Å) and T2 (degrees).
TRANSLATION_RADIUS = 8.0
ROTATION_RADIUS = 180.0
#: Angle scale of T7's rotation part (degrees).
DOCKING_ANGLE_SCALE = 180.0

# --------------------------------------------------------------------------------------------
# Parsed values
# --------------------------------------------------------------------------------------------

#: T4 bond key: (residue name, protein atom, ligand atom), upper case.
#: T9 bond key: (residue name, residue number or None, protein atom, chain or None, ligand atom);
#: None marks a field the prediction left out (it then matches any value).


@dataclass(frozen=True)
class BondAnswer:
    """A parsed T4/T9 answer: ``present`` is False for ``No`` / ``None``; ``bonds`` the set of
    bond keys (empty for ``No``/``None``, possibly empty for a bare T4 ``Yes``)."""

    present: bool
    bonds: frozenset


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


def _clean(text: object) -> str | None:
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


def _sections(text: str) -> list[tuple[str, bool]]:
    """Where to look for the answer, in order: the text after the last answer marker (flag
    True: an answer right after the marker wins over later text), then the whole text."""
    markers = list(_MARKER_RE.finditer(text))
    if markers:
        tail = text[markers[-1].end():]
        if tail.strip():
            return [(tail, True), (text, False)]
    return [(text, False)]


#: An answer that starts within this many characters after an answer marker is taken as is.
_IMMEDIATE_CHARS = 30


_GAP_WORDS_RE = re.compile(
    r"(?i)\b(?:and|then|finally|next|followed\s+by|after\s+that|afterwards|first(?:ly)?|second(?:ly)?|"
    r"third|step|also|bond|bonds|h-bond|h-bonds)\b|\d+"
)
_GAP_CHARS = frozenset(" \t\r\n,;:.-–>→/&+*()[]{}'\"")


def _is_separator(gap: str) -> bool:
    """True when ``gap`` only separates two items of one list (punctuation, 'and', 'then', ...)."""
    if len(gap) > 200:
        return False
    rest = _GAP_WORDS_RE.sub(" ", gap)
    return all(ch in _GAP_CHARS for ch in rest)


def _runs(matches: list[re.Match], text: str) -> list[list[re.Match]]:
    """Group consecutive matches separated only by list separators."""
    runs: list[list[re.Match]] = []
    for m in matches:
        if runs and _is_separator(text[runs[-1][-1].end():m.start()]):
            runs[-1].append(m)
        else:
            runs.append([m])
    return runs


# --------------------------------------------------------------------------------------------
# Operations (T1, T2, T3, T7; options of T8)
# --------------------------------------------------------------------------------------------

_OP_RE = re.compile(
    r"(?<![a-z])(move|roll|translate|shift|rotate|turn)(?![a-z])"
    r"[ \t:(]*(?:(?:along|about|around|on|in)[ \t]+)?(?:the[ \t]+)?"
    r"([xyz])(?![a-z0-9_])(?:[ \t-]*axis(?![a-z]))?"
    r"[ \t:,=]*(?:by[ \t]+)?"
    r"([+-]?)[ \t]?(\d{1,9})(\.\d{1,6})?(?!\d|\.\d)",
    re.IGNORECASE,
)
_MOVE_VERBS = frozenset({"move", "translate", "shift"})


def _op_from_match(m: re.Match) -> Operation | None:
    verb, axis, sign, digits, frac = m.groups()
    if frac and int(frac[1:]) != 0:
        return None  # magnitudes are integers; a fractional one is not a valid command
    value = int(digits) * (-1 if sign == "-" else 1)
    axis = axis.lower()
    return Move(axis, value) if verb.lower() in _MOVE_VERBS else Roll(axis, value)


def _find_ops(text: str) -> list[tuple[re.Match, Operation]]:
    out = []
    for m in _OP_RE.finditer(text):
        op = _op_from_match(m)
        if op is not None:
            out.append((m, op))
    return out


def _op_runs(text: str) -> list[tuple[int, list[Operation]]]:
    """Lists of commands in ``text``: (start position, operations) per list."""
    found = _find_ops(text)
    by_id = {id(m): op for m, op in found}
    return [(run[0].start(), [by_id[id(m)] for m in run]) for run in _runs([m for m, _ in found], text)]


def _pick_run(runs: list, immediate: bool) -> int:
    """Index of the answer run: the one right after an answer marker, else the last one."""
    if immediate and runs[0][0] < _IMMEDIATE_CHARS:
        return 0
    return len(runs) - 1


def _parse_single_op(text: str, immediate: bool = False) -> Operation | None:
    runs = _op_runs(text)
    if not runs:
        return None
    run = runs[_pick_run(runs, immediate)][1]
    nonzero = [op for op in run if op.magnitude != 0]
    return (nonzero or run)[-1]


def _parse_docking(text: str, immediate: bool = False) -> tuple[Operation, ...] | None:
    runs = _op_runs(text)
    if not runs:
        return None
    i = _pick_run(runs, immediate)
    run = [op for op in runs[i][1] if op.magnitude != 0] or list(runs[i][1])
    # a missing roll or move is taken from the nearest other list (earlier ones for the last
    # list, later ones for an answer right after a marker)
    others = runs[i + 1:] if i == 0 and immediate and len(runs) > 1 else list(reversed(runs[:i]))
    for kind in (Roll, Move):
        if not any(isinstance(op, kind) for op in run):
            extra = next((op for _, r in others for op in reversed(r) if isinstance(op, kind) and op.magnitude), None)
            if extra is not None:
                run = [extra, *run] if kind is Roll else [*run, extra]
    return tuple(run)


# --------------------------------------------------------------------------------------------
# Letters (T5, T6, T8)
# --------------------------------------------------------------------------------------------

_LETTER = r"(?:\(\s*([A-Da-d])\s*\)|\[\s*([A-Da-d])\s*\]|([A-D])(?![A-Za-z0-9'])|([a-d])(?=\s*(?:[.)\]:,;!]|$)))"
_LETTER_STRONG_RES = [
    re.compile(
        r"(?i:answer)\s*(?i:is|:|=|would\s+be|should\s+be|will\s+be|must\s+be)?\s*[:=]?\s*"
        r"(?:(?i:option|choice)\s*)?" + _LETTER
    ),
    re.compile(
        r"(?i:correct|right|best)\s+(?i:option|choice|one)\s*(?i:is|:|=|would\s+be|should\s+be)?\s*[:=]?\s*"
        r"(?:(?i:option|choice)\s*)?" + _LETTER
    ),
    re.compile(
        r"(?i:i\s+(?:would\s+|will\s+)?(?:choose|pick|select|go\s+with)|i\s+think\s+it\s+is|i\s+think\s+it's)\s*"
        r"(?:(?i:option|choice)\s*)?" + _LETTER
    ),
    re.compile(
        r"(?:(?i:option|choice)\s*)?" + _LETTER + r"\s*(?i:is\s+(?:the\s+)?(?:correct|right|answer|best))"
    ),
]
_LETTER_WEAK_RE = re.compile(
    r"\(\s*([A-Da-d])\s*\)|(?i:option|choice)\s+([A-Da-d])(?![A-Za-z0-9'])"
    r"|(?<![A-Za-z0-9'])([A-D])(?![A-Za-z0-9'])(?!\s+[a-z])"
)
_IMMEDIATE_LETTER_RE = re.compile(
    r"^[^A-Za-z0-9(\[]{0,6}(?:(?i:is|would\s+be|should\s+be|will\s+be)\s*)?[:=]?\s*(?:(?i:option|choice)\s*)?" + _LETTER
)
_LONE_LETTER_RE = re.compile(r"^\W*(?:(?i:option|choice)\s*)?[(\[]?\s*([A-Da-d])\s*[)\]]?\W*$")


def _first_group(m: re.Match) -> str:
    return next(g for g in m.groups() if g).upper()


def _parse_letter(text: str, options: Sequence[str] | None = None, immediate: bool = False) -> str | None:
    if immediate:
        first = _IMMEDIATE_LETTER_RE.match(text[:200])
        if first:
            return _first_group(first)
    short = text.strip()
    lone = _LONE_LETTER_RE.match(short) if len(short) <= 40 else None
    if lone:
        return lone.group(1).upper()
    strong: list[tuple[int, str]] = []
    for regex in _LETTER_STRONG_RES:
        strong.extend((m.start(), _first_group(m)) for m in regex.finditer(text))
    if strong:
        return max(strong)[1]
    weak = [(m.start(), _first_group(m)) for m in _LETTER_WEAK_RE.finditer(text)]
    weak.extend(_options_in_text(text, options))
    return max(weak)[1] if weak else None


def _options_in_text(text: str, options: Sequence[str] | None) -> list[tuple[int, str]]:
    """Positions where the model wrote out an option's operations instead of its letter."""
    if not options:
        return []
    wanted: dict[tuple, str] = {}
    for i, opt in enumerate(list(options)[:26]):
        if isinstance(opt, str):
            ops = _find_ops(opt)
            if ops:
                wanted.setdefault(tuple(op for _, op in ops), chr(ord("A") + i))
    if not wanted:
        return []
    return [(start, wanted[tuple(run)]) for start, run in _op_runs(text) if tuple(run) in wanted]


# --------------------------------------------------------------------------------------------
# Hydrogen-bond lists (T4, T9)
# --------------------------------------------------------------------------------------------

#: Residue names the lenient bond parser recognises (plus, when scoring, those of the gold answer).
KNOWN_RESIDUES = frozenset({
    "ALA", "ARG", "ASN", "ASP", "CYS", "GLN", "GLU", "GLY", "HIS", "ILE",
    "LEU", "LYS", "MET", "PHE", "PRO", "SER", "THR", "TRP", "TYR", "VAL",
    "MSE", "SEC", "PYL", "ASX", "GLX", "UNK", "HID", "HIE", "HIP", "HSD", "HSE", "HSP",
    "CYX", "ASH", "GLH", "LYN", "CSO", "SEP", "TPO", "PTR", "MLY", "KCX", "LLP", "CME",
    "CSD", "OCS", "HYP",
})
_ATOM = r"[A-Za-z][A-Za-z0-9'\"*]{0,3}"
_LIG = r"[A-Za-z0-9'\"*]{1,8}(?::\d{1,4})?"
_BOND_SEP = r"\s*(?:,|<?-{1,2}>?|\.{2,3}|\u2194|\u2192|/|:)\s*"


@lru_cache(maxsize=64)
def _bond_re(residues: frozenset) -> re.Pattern:
    names = "|".join(sorted((re.escape(r) for r in residues), key=len, reverse=True))
    return re.compile(
        rf"(?<![A-Za-z0-9])(?P<res>(?i:{names}))(?![A-Za-z])"
        rf"(?:(?:[ \t]+(?P<num>-?\d{{1,6}}[A-Za-z]?)|-?(?P<num2>-?\d{{1,6}}[A-Za-z]?))(?![A-Za-z0-9]))?"
        rf"[ \t]+(?P<atom>{_ATOM})(?![A-Za-z0-9'\"*])"
        rf"(?:[ \t]+(?P<chain>[A-Za-z0-9_]{{1,4}})(?![A-Za-z0-9_'\"*]))?"
        rf"{_BOND_SEP}"
        rf"(?P<lig>{_LIG})(?![A-Za-z0-9'\"*]|:\d)"
    )


_YES_RE = re.compile(r"(?<![A-Za-z])(?i:yes)(?![A-Za-z])")
_NO_RE = re.compile(
    r"(?<![A-Za-z])(?i:no|none)(?![A-Za-z])"
    r"(?=\s*(?:$|[.,;:!)\]]|(?i:hydrogen|h-?bonds?|h\s+bonds?|bonds?|interactions?|polar|contacts?)(?![A-Za-z])))"
)


def _bond_key(m: re.Match, task: str) -> tuple:
    res = m.group("res").upper()
    atom = m.group("atom").upper()
    lig = m.group("lig").upper()
    if task == "residue_ligand":
        return (res, atom, lig)
    num = m.group("num") or m.group("num2")
    chain = m.group("chain")
    return (res, num.upper() if num else None, atom, chain.upper() if chain else None, lig)


def _parse_bonds(text: str, task: str, residues: frozenset) -> BondAnswer | None:
    matches = list(_bond_re(residues).finditer(text))
    spans = [(m.start(), m.end()) for m in matches]

    def outside(m: re.Match) -> bool:
        return not any(a <= m.start() < b for a, b in spans)

    events: list[tuple[int, str]] = [(m.start(), "bond") for m in matches]
    events += [(m.start(), "no") for m in _NO_RE.finditer(text) if outside(m)]
    if task == "residue_ligand":
        events += [(m.start(), "yes") for m in _YES_RE.finditer(text) if outside(m)]
    if not events:
        return None
    last = max(events)[1]
    if last == "no":
        return BondAnswer(False, frozenset())
    return BondAnswer(True, frozenset(_bond_key(m, task) for m in matches))


def _gold_bonds(task: str, answer: str) -> BondAnswer | None:
    """Strict parse of a builder-written T4/T9 answer; None when it is not in that format."""
    text = " ".join(answer.split())
    if task == "residue_ligand":
        if text.lower() == "no":
            return BondAnswer(False, frozenset())
        if not text.lower().startswith("yes"):
            return None
        body = text[3:].lstrip(" :")
        if not body:
            return BondAnswer(True, frozenset())
    else:
        if text.lower() == "none":
            return BondAnswer(False, frozenset())
        body = text
    keys = set()
    for item in body.split(";"):
        prot, sep, lig = item.partition(",")
        fields = prot.split()
        lig = lig.strip()
        if not sep or not lig or " " in lig:
            return None
        if task == "residue_ligand":
            if len(fields) != 2:
                return None
            keys.add((fields[0].upper(), fields[1].upper(), lig.upper()))
        else:
            if len(fields) != 4:
                return None
            res, num, atom, chain = (f.upper() for f in fields)
            keys.add((res, num, atom, chain, lig.upper()))
    return BondAnswer(True, frozenset(keys))


def _bond_matches(pred: tuple, gold: tuple) -> bool:
    return all(p is None or p == g for p, g in zip(pred, gold))


def _count_matched(pred: frozenset, gold: frozenset) -> int:
    """|P ∩ G| where a predicted field left out (None) matches anything; each item used once."""
    exact = pred & gold
    rest_pred = sorted(pred - exact, key=lambda k: (sum(f is None for f in k), [str(f) for f in k]))
    rest_gold = sorted(gold - exact, key=lambda k: [str(f) for f in k])
    n = len(exact)
    for p in rest_pred:
        for g in rest_gold:
            if _bond_matches(p, g):
                rest_gold.remove(g)
                n += 1
                break
    return n


def _set_score(n_pred: int, n_gold: int, n_match: int) -> float:
    """SPEC 7 set rule for a non-empty true set."""
    if n_pred > 2 * n_gold:
        return 0.0
    if n_match == n_gold and n_pred > n_gold:
        return 0.5
    return n_match / n_gold


def _format_bond_answer(value: BondAnswer, task: str) -> str:
    if task == "residue_ligand":
        if not value.present:
            return "No"
        body = "; ".join(f"{k[0]} {k[1]}, {k[2]}" for k in sorted(value.bonds, key=lambda k: [str(f) for f in k]))
        return f"Yes: {body}" if body else "Yes"
    if not value.present:
        return "None"

    def one(k: tuple) -> str:
        if len(k) == 3:
            return f"{k[0]} {k[1]}, {k[2]}"
        res, num, atom, chain, lig = k
        prot = " ".join(str(f) for f in (res, num, atom, chain) if f is not None)
        return f"{prot}, {lig}"

    return "; ".join(one(k) for k in sorted(value.bonds, key=lambda k: [str(f) for f in k]))


# --------------------------------------------------------------------------------------------
# Public parsing
# --------------------------------------------------------------------------------------------


def _parse(task: str, text: object, *, residues: frozenset = KNOWN_RESIDUES, options: Sequence[str] | None = None):
    cleaned = _clean(text)
    if cleaned is None or not cleaned.strip():
        return None
    for section, immediate in _sections(cleaned):
        if task in ("translation", "rotation", "zooming"):
            value = _parse_single_op(section, immediate)
        elif task == "docking":
            value = _parse_docking(section, immediate)
        elif task in CHOICE_TASKS:
            value = _parse_letter(section, options, immediate)
        else:
            value = _parse_bonds(section, task, residues)
        if value is not None:
            return value
    return None


def parse_prediction(task: str, text: object, options: Sequence[str] | None = None):
    """Parse a model's output for ``task`` leniently; None when nothing valid is found.

    Returns, by task: ``translation``/``rotation``/``zooming``: one :class:`Move`/:class:`Roll`
    (the last command; in a list like ``move x 3, move y 0`` the last non-zero one);
    ``docking``: a tuple of operations (the last list of commands; a missing roll or move is
    taken from earlier text); choice tasks: a letter ``"A"``..``"D"`` (``options``, when given,
    also lets a written-out option count); ``residue_ligand``/``pocket_ligand``:
    a :class:`BondAnswer`.

    Tolerates case, markdown, prose, ``Answer:`` prefixes, ``<think>`` blocks, unicode minus
    signs, ``+`` signs, units (°, Å, degrees). Magnitudes must be integers (``3`` or ``3.0``).
    Only the last :data:`MAX_CHARS` characters are read. Never raises for any ``text``;
    raises ``ValueError`` for an unknown ``task``.
    """
    task = canonical_task(task)
    try:
        return _parse(task, text, options=options)
    except Exception:
        logger.exception("unexpected error while parsing a %s prediction; scored as unparseable", task)
        return None


def format_parsed(task: str, value) -> str | None:
    """Write a parsed value back in the benchmark's answer format (None stays None)."""
    task = canonical_task(task)
    if value is None:
        return None
    if isinstance(value, BondAnswer):
        return _format_bond_answer(value, task)
    if isinstance(value, (Move, Roll, tuple)):
        return format_operations(value)
    return str(value)


# --------------------------------------------------------------------------------------------
# Scoring
# --------------------------------------------------------------------------------------------


def _metadata_dict(metadata: str | Mapping | None) -> dict:
    if isinstance(metadata, Mapping):
        return dict(metadata)
    if isinstance(metadata, (str, bytes)) and metadata:
        try:
            value = json.loads(metadata)
        except (ValueError, TypeError):
            return {}
        return value if isinstance(value, dict) else {}
    return {}


def _norm_text(text: object) -> str | None:
    if not isinstance(text, str) or len(text) > MAX_CHARS:
        return None
    return " ".join(text.split()).casefold()


def _gold(task: str, answer: str):
    """Strict parse of a gold answer; raises ValueError when the dataset row is malformed."""
    if not isinstance(answer, str) or not answer.strip():
        raise ValueError(f"{task}: gold answer must be a non-empty string, got {answer!r}")
    try:
        if task in ("translation", "rotation", "zooming"):
            ops = parse_operations(answer.strip())
            if len(ops) == 1:
                return ops[0]
        elif task == "docking":
            return parse_operations(answer.strip())
        elif task in CHOICE_TASKS:
            letter = answer.strip().upper()
            if len(letter) == 1 and "A" <= letter <= "Z":
                return letter
        else:
            value = _gold_bonds(task, answer)
            if value is not None:
                return value
    except ValueError:
        pass
    raise ValueError(f"{task}: malformed gold answer {answer!r}")


def _score_single_op(task: str, pred, gold: Operation) -> dict[str, float]:
    if not isinstance(pred, (Move, Roll)) or pred.verb != gold.verb or pred.axis != gold.axis:
        return {"score": 0.0, "exact": 0.0}
    exact = float(pred.magnitude == gold.magnitude)
    if task == "zooming":
        return {"score": exact, "exact": exact}
    radius = TRANSLATION_RADIUS if task == "translation" else ROTATION_RADIUS
    diff = abs(pred.magnitude - gold.magnitude)
    return {"score": max(0.0, 1.0 - diff / radius), "exact": exact}


def _score_docking(pred, gold: tuple[Operation, ...]) -> dict[str, float]:
    gold_roll = next((op for op in gold if isinstance(op, Roll)), None)
    gold_move = next((op for op in gold if isinstance(op, Move)), None)
    ops = list(pred) if isinstance(pred, tuple) else []
    rolls = [op for op in ops if isinstance(op, Roll)]
    moves = [op for op in ops if isinstance(op, Move)]
    rot = 0.0
    if gold_roll is not None and rolls and rolls[-1].axis == gold_roll.axis:
        rot = max(0.0, 1.0 - abs(rolls[-1].angle - gold_roll.angle) / DOCKING_ANGLE_SCALE)
    elif gold_roll is None and not rolls:
        rot = 1.0
    mov = 0.0
    if gold_move is not None and moves:
        pm = moves[-1]
        if pm.axis == gold_move.axis == "x" and pm.distance != 0 and (pm.distance > 0) == (gold_move.distance > 0):
            mov = max(0.0, 1.0 - abs(pm.distance - gold_move.distance) / abs(gold_move.distance))
        elif pm.axis == gold_move.axis and pm.distance == gold_move.distance:
            mov = 1.0  # a gold move that is not a non-zero `move x` (not produced by the builder)
    elif gold_move is None and not moves:
        mov = 1.0
    exact = float(sorted(map(str, ops)) == sorted(map(str, gold)))
    return {"score": 0.5 * rot + 0.5 * mov, "exact": exact, "rotation_part": rot, "move_part": mov}


def _score_bonds(task: str, pred, gold: BondAnswer) -> dict[str, float]:
    out: dict[str, float] = {}
    if task == "residue_ligand":
        out["polarity"] = float(gold.present)
    if not isinstance(pred, BondAnswer):
        return {"score": 0.0, "exact": 0.0, **out}
    if not gold.present or not gold.bonds:
        ok = float(pred.present == gold.present and not pred.bonds)
        return {"score": ok, "exact": ok, **out}
    if not pred.present:
        return {"score": 0.0, "exact": 0.0, **out}
    n_match = _count_matched(pred.bonds, gold.bonds)
    n_pred, n_gold = len(pred.bonds), len(gold.bonds)
    exact = float(n_match == n_gold == n_pred)
    return {"score": _set_score(n_pred, n_gold, n_match), "exact": exact, **out}


def _zero_metrics(task: str, gold) -> dict[str, float]:
    out = {"score": 0.0, "exact": 0.0, "parsed": 0.0}
    if task == "docking":
        out.update(rotation_part=0.0, move_part=0.0)
    if task == "residue_ligand" and isinstance(gold, BondAnswer):
        out["polarity"] = float(gold.present)
    return out


def score_prediction(task: str, prediction, answer: str, metadata: str | dict | None = None,
                     *, options: Sequence[str] | None = None) -> dict[str, float]:
    """Score one model output against the gold ``answer`` of one question (all values 0-1).

    ``metadata`` (the row's JSON text or a dict) may carry ``options`` (the choice list); the
    keyword ``options`` overrides it. Returns at least ``score``, ``exact`` and ``parsed``;
    ``docking`` adds ``rotation_part`` / ``move_part``; ``residue_ligand`` adds ``polarity``.
    Never raises because of ``prediction``; raises ``ValueError`` for an unknown task or a
    malformed gold answer (a dataset bug).
    """
    task = canonical_task(task)
    gold = _gold(task, answer)
    if options is None:
        meta_options = _metadata_dict(metadata).get("options")
        options = meta_options if isinstance(meta_options, (list, tuple)) else None
    try:
        norm = _norm_text(prediction)
        if norm is not None and norm == _norm_text(answer):
            pred = gold  # verbatim gold answer: always exactly 1.0
        else:
            residues = KNOWN_RESIDUES
            if isinstance(gold, BondAnswer) and gold.bonds:
                residues = KNOWN_RESIDUES | frozenset(k[0] for k in gold.bonds)
            pred = _parse(task, prediction, residues=residues, options=options)
        if pred is None:
            return _zero_metrics(task, gold)
        if task in ("translation", "rotation", "zooming"):
            out = _score_single_op(task, pred, gold)
        elif task == "docking":
            out = _score_docking(pred, gold)
        elif task in CHOICE_TASKS:
            ok = float(pred == gold)
            out = {"score": ok, "exact": ok}
        else:
            out = _score_bonds(task, pred, gold)
        out["parsed"] = 1.0
        return out
    except Exception:
        logger.exception("unexpected error while scoring a %s prediction; scored 0", task)
        return _zero_metrics(task, gold)


# --------------------------------------------------------------------------------------------
# Aggregation and reports
# --------------------------------------------------------------------------------------------

_T4_SUBSETS = ("residue_ligand_positive", "residue_ligand_negative")


def _means(rows: list[dict[str, float]]) -> dict[str, float]:
    keys: list[str] = []
    for row in rows:
        keys.extend(k for k in row if k not in keys)
    out: dict[str, float] = {"n": len(rows)}
    for key in keys:
        values = [float(row[key]) for row in rows if key in row]
        out[key] = math.fsum(values) / len(values) if values else float("nan")
    return out


def _mean_or_none(values: list[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def aggregate(rows: Iterable[tuple[str, Mapping[str, float]]]) -> dict:
    """Per-task means of every metric and the two macro averages, all on a 0-1 scale.

    Returns ``{"scale": "0-1", "n": total rows, "tasks": {task: {"n": count, "score": mean,
    "exact": mean, ...}}, "subsets": {"residue_ligand_positive": {...},
    "residue_ligand_negative": {...}}, "average_all": macro mean of the main ``score`` over the
    tasks present, "average_headline": the same without HEADLINE_EXCLUDED}``. Averages are None
    when no task is present. Task names are canonicalised; rows of unknown tasks are reported
    under their own name but left out of the averages.
    """
    by_task: dict[str, list[dict[str, float]]] = {}
    subsets: dict[str, list[dict[str, float]]] = {name: [] for name in _T4_SUBSETS}
    n = 0
    for task, metrics in rows:
        try:
            name = canonical_task(task)
        except ValueError:
            logger.warning("aggregate: unknown task %r (left out of the averages)", task)
            name = str(task)
        metrics = dict(metrics)
        by_task.setdefault(name, []).append(metrics)
        if name == "residue_ligand" and "polarity" in metrics:
            subsets[_T4_SUBSETS[0] if metrics["polarity"] >= 0.5 else _T4_SUBSETS[1]].append(metrics)
        n += 1
    order = [t for t in TASK_NAMES if t in by_task] + sorted(t for t in by_task if t not in TASK_NAMES)
    tasks = {t: _means(by_task[t]) for t in order}
    present = [t for t in TASK_NAMES if t in tasks]
    return {
        "scale": "0-1",
        "n": n,
        "tasks": tasks,
        "subsets": {k: _means(v) for k, v in subsets.items() if v},
        "average_all": _mean_or_none([tasks[t]["score"] for t in present]),
        "average_headline": _mean_or_none([tasks[t]["score"] for t in present if t not in HEADLINE_EXCLUDED]),
        "headline_excluded": list(HEADLINE_EXCLUDED),
    }


def _fmt(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.4f}"


def format_report_markdown(report: Mapping) -> str:
    """A markdown table of an :func:`aggregate` report: one row per task (T4 positive/negative
    rows after T4), then both averages; columns n, score, exact (0-1 scale)."""
    lines = ["| task | n | score | exact |", "|---|---:|---:|---:|"]
    tasks = report.get("tasks", {}) or {}
    subsets = report.get("subsets", {}) or {}
    for name, row in tasks.items():
        lines.append(f"| {name} | {row.get('n', 0)} | {_fmt(row.get('score'))} | {_fmt(row.get('exact'))} |")
        if name == "residue_ligand":
            for sub in _T4_SUBSETS:
                if sub in subsets:
                    r = subsets[sub]
                    lines.append(f"| {sub} | {r.get('n', 0)} | {_fmt(r.get('score'))} | {_fmt(r.get('exact'))} |")
    present = [t for t in TASK_NAMES if t in tasks]
    headline = [t for t in present if t not in HEADLINE_EXCLUDED]
    n_all = sum(tasks[t].get("n", 0) for t in present)
    n_head = sum(tasks[t].get("n", 0) for t in headline)
    ex_all = _mean_or_none([tasks[t]["exact"] for t in present if "exact" in tasks[t]])
    ex_head = _mean_or_none([tasks[t]["exact"] for t in headline if "exact" in tasks[t]])
    lines.append(f"| average_all | {n_all} | {_fmt(report.get('average_all'))} | {_fmt(ex_all)} |")
    lines.append(f"| average_headline | {n_head} | {_fmt(report.get('average_headline'))} | {_fmt(ex_head)} |")
    return "\n".join(lines) + "\n"


def score_records(records: Iterable[Mapping], predictions: Mapping[str, Any]) -> dict:
    """Score dataset rows (keys ``id``, ``task``, ``answer``, optional ``metadata``/``options``)
    against ``predictions`` (id -> model output). Missing predictions score 0 and are listed.

    Returns ``{"report": aggregate(...), "missing": [ids], "unknown": [prediction ids not in
    the records], "per_item": [{"id", "task", "answer", "prediction", "parsed", "missing",
    "metrics"}]}``.
    """
    preds = {str(k): v for k, v in dict(predictions).items()}
    seen: set[str] = set()
    missing: list[str] = []
    per_item: list[dict] = []
    rows: list[tuple[str, dict[str, float]]] = []
    for record in records:
        rid = str(record["id"])
        task = canonical_task(record["task"])
        seen.add(rid)
        options = record.get("options")
        options = list(options) if isinstance(options, (list, tuple, np.ndarray)) and len(options) else None
        has = rid in preds
        if not has:
            missing.append(rid)
        prediction = preds.get(rid)
        metrics = score_prediction(task, prediction, record["answer"], record.get("metadata"), options=options)
        parsed = parse_prediction(task, prediction, options=options) if has else None
        per_item.append({
            "id": rid,
            "task": task,
            "answer": record["answer"],
            "prediction": prediction,
            "parsed": format_parsed(task, parsed),
            "missing": not has,
            "metrics": metrics,
        })
        rows.append((task, metrics))
    unknown = sorted(k for k in preds if k not in seen)
    if missing:
        logger.warning("%d of %d questions have no prediction (scored 0)", len(missing), len(per_item))
    if unknown:
        logger.warning("%d predictions do not match any question id", len(unknown))
    return {"report": aggregate(rows), "missing": missing, "unknown": unknown, "per_item": per_item}


# --------------------------------------------------------------------------------------------
# Chance baselines
# --------------------------------------------------------------------------------------------

BASELINE_KINDS = ("random", "always_no")
_ANGLES = tuple(a for a in range(-90, 91, 15) if a != 0)


def baseline_prediction(kind: str, task: str, record: Mapping, rng: np.random.Generator) -> str:
    """A chance-level answer for one question.

    ``random``: a random letter among the options (A-D when the record lists none) for choice
    tasks; a random command in the task's range for T1 (``move x|y D``, D in -4..4, not 0),
    T2 (``roll x|y|z A``, A in -90..90 step 15, not 0), T3 (``move z D``, D in 40..60) and T7
    (``roll AX A, move x D``, A in ±15..90 step 15, D in -30..30, not 0); ``Yes`` or ``No`` at
    random for T4 (a bare ``Yes`` lists no bond); ``None`` for T9.
    ``always_no``: ``No`` for T4, ``None`` for T9, ``A`` for choice tasks, and an empty answer
    (scores 0) for the command tasks.
    """
    task = canonical_task(task)
    if kind not in BASELINE_KINDS:
        raise ValueError(f"unknown baseline kind {kind!r}; expected one of {', '.join(BASELINE_KINDS)}")
    if kind == "always_no":
        return {"residue_ligand": "No", "pocket_ligand": "None"}.get(task, "A" if task in CHOICE_TASKS else "")
    if task in CHOICE_TASKS:
        options = record.get("options") if isinstance(record, Mapping) else None
        n = len(options) if options is not None and len(options) else 4
        return chr(ord("A") + int(rng.integers(0, min(n, 26))))
    if task == "translation":
        d = int(rng.choice([v for v in range(-4, 5) if v != 0]))
        return str(Move(str(rng.choice(["x", "y"])), d))
    if task == "rotation":
        return str(Roll(str(rng.choice(["x", "y", "z"])), int(rng.choice(_ANGLES))))
    if task == "zooming":
        return str(Move("z", int(rng.integers(40, 61))))
    if task == "docking":
        roll = Roll(str(rng.choice(["x", "y", "z"])), int(rng.choice(_ANGLES)))
        move = Move("x", int(rng.choice([v for v in range(-30, 31) if v != 0])))
        return format_operations((roll, move))
    if task == "residue_ligand":
        return "Yes" if rng.random() < 0.5 else "No"
    return "None"
