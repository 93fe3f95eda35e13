"""Reading commands and option letters out of a model's reply (one section of it at a time).

The answer kinds (:mod:`.kinds`) call these: :func:`parse_single_op` (one ``move``/``roll``
command), :func:`parse_pair` (a ``roll, move`` pair), :func:`parse_letter` (an option letter, or a
written-out option). Each returns None when the section holds no answer and :data:`INVALID` when
the answer given is not a valid command (it scores 0). Bond lists are read in :mod:`.bonds`."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..operations.language import Move, Operation, Roll
from .text import group_runs

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
#: An answer that starts within this many characters after an answer marker is taken as is.
_IMMEDIATE_CHARS = 30
_MOVE_VERBS = frozenset({"move", "translate", "shift"})


def _op_from_match(m: re.Match) -> Operation | None:
    verb, axis, sign, digits, frac = m.groups()
    if frac and int(frac[1:]) != 0:
        return None  # magnitudes are integers; a fractional one is not a valid command
    value = int(digits) * (-1 if sign == "-" else 1)
    axis = axis.lower()
    return Move(axis, value) if verb.lower() in _MOVE_VERBS else Roll(axis, value)


#: A command was given as the answer but is not valid (a non-integer magnitude): the answer is
#: that invalid command (it scores 0); earlier, withdrawn commands are not read instead.
INVALID = object()


def _find_ops(text: str, keep_invalid: bool = False) -> list[tuple[re.Match, Operation | None]]:
    """Commands in ``text``; with ``keep_invalid`` a command with a fractional magnitude is
    kept as None (it still ends a list and can be the answer)."""
    out = []
    for m in _OP_RE.finditer(text):
        op = _op_from_match(m)
        if op is not None or keep_invalid:
            out.append((m, op))
    return out


def _op_runs(text: str) -> list[tuple[int, list[Operation | None]]]:
    """Lists of commands in ``text``: (start position, operations) per list (None: invalid)."""
    found = _find_ops(text, keep_invalid=True)
    by_id = {id(m): op for m, op in found}
    return [
        (run[0].start(), [by_id[id(m)] for m in run])
        for run in group_runs([m for m, _ in found], text)
    ]


def _pick_run(runs: list, immediate: bool) -> int:
    """Index of the answer run: the one right after an answer marker, else the last one."""
    if immediate and runs[0][0] < _IMMEDIATE_CHARS:
        return 0
    return len(runs) - 1


def parse_single_op(text: str, immediate: bool = False):
    runs = _op_runs(text)
    if not runs:
        return None
    run = runs[_pick_run(runs, immediate)][1]
    if None in run:
        return INVALID
    nonzero = [op for op in run if op.magnitude != 0]
    return (nonzero or run)[-1]


def parse_pair(text: str, immediate: bool = False):
    runs = _op_runs(text)
    if not runs:
        return None
    i = _pick_run(runs, immediate)
    if None in runs[i][1]:
        return INVALID
    run = [op for op in runs[i][1] if op.magnitude != 0] or list(runs[i][1])
    # a missing roll or move is taken from the nearest other list (earlier ones for the last
    # list, later ones for an answer right after a marker)
    others = runs[i + 1 :] if i == 0 and immediate and len(runs) > 1 else list(reversed(runs[:i]))
    for kind in (Roll, Move):
        if not any(isinstance(op, kind) for op in run):
            extra = next(
                (
                    op
                    for _, r in others
                    for op in reversed(r)
                    if isinstance(op, kind) and op.magnitude
                ),
                None,
            )
            if extra is not None:
                run = [extra, *run] if kind is Roll else [*run, extra]
    return tuple(run)


# --------------------------------------------------------------------------------------------
# Letters (T5, T6, T8)
# --------------------------------------------------------------------------------------------

#: Words after a letter that show it is the chosen option, not the article "A" / "a".
_LETTER_FOLLOWERS = (
    r"(?:because|since|as|is|was|seems|looks|would|should|and|or|for|due|given|then)\b"
)
_LETTER = (
    r"(?:\(\s*([A-Da-d])\s*\)|\[\s*([A-Da-d])\s*\]"
    rf"|([A-D])(?![A-Za-z0-9'])(?!(?<=A)\s+(?!{_LETTER_FOLLOWERS})[a-z])"
    rf"|([a-d])(?=\s*(?:[.)\]:,;!]|$)|\s+{_LETTER_FOLLOWERS}))"
)
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
        r"(?:(?i:option|choice)\s*)?"
        + _LETTER
        + r"\s*(?i:is\s+(?:the\s+)?(?:correct|right|answer|best))"
    ),
]
_LETTER_WEAK_RE = re.compile(
    r"\(\s*([A-Da-d])\s*\)|(?i:option|choice)\s+([A-Da-d])(?![A-Za-z0-9'])"
    r"|(?<![A-Za-z0-9'])([A-D])(?![A-Za-z0-9'])(?!\s+[a-z])"
)
_IMMEDIATE_LETTER_RE = re.compile(
    r"^[^A-Za-z0-9(\[]{0,6}(?:(?i:is|would\s+be|should\s+be|will\s+be)\s*)?[:=]?\s*(?:(?i:option|choice)\s*)?"
    + _LETTER
)
_LONE_LETTER_RE = re.compile(r"^\W*(?:(?i:option|choice)\s*)?[(\[]?\s*([A-Da-d])\s*[)\]]?\W*$")


def _first_group(m: re.Match) -> str:
    return next(g for g in m.groups() if g).upper()


def parse_letter(
    text: str, options: Sequence[str] | None = None, immediate: bool = False
) -> str | None:
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
    """Positions where the model wrote out an option instead of its letter: the option's
    commands (T8: ``move x -3, move y 2``) or, for options that are not commands, the option's
    text as a whole word sequence (T5/T6: ``image 9``, case and spacing ignored)."""
    if not options:
        return []
    wanted: dict[tuple, str] = {}
    texts: dict[str, str] = {}
    for i, opt in enumerate(list(options)[:26]):
        if not isinstance(opt, str):
            continue
        ops = _find_ops(opt)
        if ops:
            wanted.setdefault(tuple(op for _, op in ops), chr(ord("A") + i))
        elif 2 < len(opt.strip()) <= 200:
            texts.setdefault(_norm_option(opt), chr(ord("A") + i))
    found = (
        [(start, wanted[tuple(run)]) for start, run in _op_runs(text) if tuple(run) in wanted]
        if wanted
        else []
    )
    if texts:
        alternatives = "|".join(
            r"\s+".join(map(re.escape, t.split())) for t in sorted(texts, key=len, reverse=True)
        )
        regex = re.compile(rf"(?<![A-Za-z0-9])(?:{alternatives})(?![A-Za-z0-9])", re.IGNORECASE)
        found += [(m.start(), texts[_norm_option(m.group())]) for m in regex.finditer(text)]
    return found


def _norm_option(text: str) -> str:
    return " ".join(text.split()).casefold()
