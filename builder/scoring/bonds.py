"""Hydrogen-bond answers (T4, T9): the lenient parser of model output, the strict parser of gold
answers, the docs/spec.md section 7 set rule and the canonical text form."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from functools import lru_cache

# --------------------------------------------------------------------------------------------
# Parsed values
# --------------------------------------------------------------------------------------------

#: T4 bond key: (residue name, protein atom, ligand atom), upper case.
#: T9 bond key: (residue name, residue number or None, protein atom, chain or None, ligand atom);
#: None marks a field the prediction left out (it then matches any value). Every field but the
#: chain is upper case; the chain keeps its case, as in PDB files, where ``A`` and ``a`` are two
#: chains (a reply's chain is matched to the gold's case only when no two gold chains differ by
#: case alone: :func:`align_chain_case`).


@dataclass(frozen=True)
class BondAnswer:
    """A parsed T4/T9 answer: ``present`` is False for ``No`` / ``None``; ``bonds`` the set of
    bond keys (empty for ``No``/``None``, possibly empty for a bare T4 ``Yes``)."""

    present: bool
    bonds: frozenset


# --------------------------------------------------------------------------------------------
# Hydrogen-bond lists (T4, T9)
# --------------------------------------------------------------------------------------------

#: Residue names the lenient bond parser recognises (plus, when scoring, those of the gold answer).
KNOWN_RESIDUES = frozenset(
    {
        "ALA",
        "ARG",
        "ASN",
        "ASP",
        "CYS",
        "GLN",
        "GLU",
        "GLY",
        "HIS",
        "ILE",
        "LEU",
        "LYS",
        "MET",
        "PHE",
        "PRO",
        "SER",
        "THR",
        "TRP",
        "TYR",
        "VAL",
        "MSE",
        "SEC",
        "PYL",
        "ASX",
        "GLX",
        "UNK",
        "HID",
        "HIE",
        "HIP",
        "HSD",
        "HSE",
        "HSP",
        "CYX",
        "ASH",
        "GLH",
        "LYN",
        "CSO",
        "SEP",
        "TPO",
        "PTR",
        "MLY",
        "KCX",
        "LLP",
        "CME",
        "CSD",
        "OCS",
        "HYP",
    }
)
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
#: A negative answer: ``No``/``None`` ending its line (text on later lines is read as after a full
#: stop: "No\nThere are no other bonds." is a "No"), or followed by punctuation or a bond word.
_NO_RE = re.compile(
    r"(?<![A-Za-z])(?i:no|none)(?![A-Za-z])"
    r"(?=[ \t]*\n|\s*(?:$|[.,;:!)\]]|"
    r"(?i:hydrogen|h-?bonds?|h\s+bonds?|bonds?|interactions?|polar|contacts?)(?![A-Za-z])))"
)


#: Words that make a "no ... bonds" sentence a remark about other bonds ("no bonds from the
#: backbone", "no hydrogen bonds with other residues") rather than a withdrawal of listed bonds.
_REMARK_RE = re.compile(
    r"(?i)(?<![A-Za-z])(?:other|others|additional|further|more|else|besides|apart|except|backbone|main[- ]chain|"
    r"side[- ]chains?|remaining|beyond|also)(?![A-Za-z])"
)


def _is_remark(text: str, m: re.Match) -> bool:
    """True when the sentence around the negation ``m`` qualifies it (see _REMARK_RE)."""
    start = max(
        text.rfind(".", max(0, m.start() - 300), m.start()),
        text.rfind("\n", max(0, m.start() - 300), m.start()),
    )
    start = start + 1 if start >= 0 else max(0, m.start() - 300)
    ends = [
        i
        for i in (text.find(".", m.end(), m.end() + 300), text.find("\n", m.end(), m.end() + 300))
        if i >= 0
    ]
    end = min(ends) if ends else min(len(text), m.end() + 300)
    return _REMARK_RE.search(text, start, end) is not None


def _bond_key(m: re.Match, named_residue: bool) -> tuple:
    res = m.group("res").upper()
    atom = m.group("atom").upper()
    lig = m.group("lig").upper()
    if named_residue:
        return (res, atom, lig)
    num = m.group("num") or m.group("num2")
    chain = m.group("chain")
    return (res, num.upper() if num else None, atom, chain or None, lig)


def parse_bonds(text: str, residues: frozenset, *, named_residue: bool) -> BondAnswer | None:
    """The bond answer of ``text``: the bonds of one named residue (``No`` / ``Yes: ...``; T4)
    when ``named_residue``, else every bond of the pocket (``None`` / a list; T9)."""
    matches = list(_bond_re(residues).finditer(text))
    spans = [(m.start(), m.end()) for m in matches]

    starts = [a for a, _ in spans]  # finditer spans: sorted, not overlapping

    def outside(m: re.Match) -> bool:
        i = bisect.bisect_right(starts, m.start()) - 1
        return i < 0 or m.start() >= spans[i][1]

    first_bond = spans[0][0] if spans else len(text)
    events: list[tuple[int, str]] = [(m.start(), "bond") for m in matches]
    events += [
        (m.start(), "no")
        for m in _NO_RE.finditer(text)
        if outside(m) and not (m.start() > first_bond and _is_remark(text, m))
    ]
    if named_residue:
        events += [(m.start(), "yes") for m in _YES_RE.finditer(text) if outside(m)]
    if not events:
        return None
    last = max(events)[1]
    if last == "no":
        return BondAnswer(False, frozenset())
    return BondAnswer(True, frozenset(_bond_key(m, named_residue) for m in matches))


def gold_bonds(answer: str, *, named_residue: bool) -> BondAnswer | None:
    """Strict parse of a builder-written T4 (``named_residue``) or T9 answer; None when it is not
    in that format."""
    text = " ".join(answer.split())
    if named_residue:
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
        if named_residue:
            if len(fields) != 2:
                return None
            keys.add((fields[0].upper(), fields[1].upper(), lig.upper()))
        else:
            if len(fields) != 4:
                return None
            res, num, atom, chain = fields
            keys.add((res.upper(), num.upper(), atom.upper(), chain, lig.upper()))
    return BondAnswer(True, frozenset(keys))


def align_chain_case(pred: BondAnswer, gold: BondAnswer) -> BondAnswer:
    """``pred`` with each T9 chain written in the gold's case where that is unambiguous: a reply
    writing ``a`` for the pocket's only chain ``A`` names it, but in a pocket with chains ``A`` and
    ``a`` (PDB chain ids are case-sensitive) each reply chain must match exactly."""
    folded: dict[str, set[str]] = {}
    for key in gold.bonds:
        if len(key) == 5 and key[3] is not None:
            folded.setdefault(key[3].casefold(), set()).add(key[3])
    if not folded:
        return pred
    keys = set()
    for key in pred.bonds:
        if len(key) == 5 and key[3] is not None:
            same = folded.get(key[3].casefold(), set())
            if len(same) == 1 and key[3] not in same:
                key = (*key[:3], next(iter(same)), key[4])
        keys.add(key)
    return BondAnswer(pred.present, frozenset(keys))


def _bond_matches(pred: tuple, gold: tuple) -> bool:
    return all(p is None or p == g for p, g in zip(pred, gold))


def count_matched(pred: frozenset, gold: frozenset, strict: bool = False) -> int:
    """|P ∩ G| where a predicted field left out (None) matches anything; each item used once.
    ``strict`` (the ``paper`` profile): an item matches only when it gives every field."""
    exact = pred & gold
    if strict:
        return len(exact)
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


def set_score(n_pred: int, n_gold: int, n_match: int) -> float:
    """SPEC 7 set rule for a non-empty true set."""
    if n_pred > 2 * n_gold:
        return 0.0
    if n_match == n_gold and n_pred > n_gold:
        return 0.5
    return n_match / n_gold


def format_bond_answer(value: BondAnswer, *, named_residue: bool) -> str:
    if named_residue:
        if not value.present:
            return "No"
        body = "; ".join(
            f"{k[0]} {k[1]}, {k[2]}" for k in sorted(value.bonds, key=lambda k: [str(f) for f in k])
        )
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
