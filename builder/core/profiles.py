"""Build profiles: which questions a build asks and how their answers are scored (SPEC 6, 7).

* ``paper`` (the default): every prompt gives what the paper's prompt for that task gives
  (arXiv 2512.10867v2, Appendix C, Figs. 9-17), no more and no less, in our own words; sampling,
  counts and the ``tiny`` split follow the paper (Sections 4-5, Appendix A); a T9 bond item must
  name residue, number, atom, chain and ligand atom to match. The paper's published rows are
  shown beside results of these builds.
* ``explicit``: the prompts state everything a careful solver needs (camera distance and field
  of view where a task needs them, answer ranges, the H-bond rule); its parameters and scoring
  are those of builds made before profiles existed, and its rows are byte-identical to them.
  The paper's rows are shown beside its results only as "not comparable".

A built row names its profile in its metadata JSON (``"profile"``); a row without the key is an
``explicit`` row (builds older than profiles, and every ``explicit`` build, whose rows are kept
byte-identical). The scorer, the harnesses and the report read the profile from there.
Pure data and helpers; standard library only.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from .errors import MisiError

PAPER = "paper"
EXPLICIT = "explicit"
#: The profile of a row or build that does not name one (every build made before profiles):
#: a rule for reading stored rows, not a default of any function.
LEGACY_PROFILE = EXPLICIT
#: The profile a build gets when none is asked for: read only by the entry points (the CLI's
#: ``--profile``, ``BuildConfig``, the Hugging Face loader's config); every lower layer (task
#: contexts, task data, prompts, view order, question ids) takes the profile explicitly.
DEFAULT_PROFILE = PAPER


@dataclass(frozen=True)
class Profile:
    """One profile: ``name``; ``summary`` (one line for the card and ``--help``);
    ``strict_bond_items`` (a predicted T4/T9 bond item matches only when it gives every field of
    the answer format; otherwise a left-out residue number or chain matches any);
    ``paper_comparable`` (the paper's published rows may be shown beside a result);
    ``id_suffix`` (appended to the question index of a row id, so that prediction files of one
    profile cannot be scored against a build of the other by accident);
    ``names_itself`` (row metadata, the build config and its hash name the profile; False keeps
    them byte-identical to builds made before profiles, which read as :data:`LEGACY_PROFILE`);
    ``magnitude_rule`` (the headline's reading of a T1/T2 magnitude error and T7's rotation part:
    ``steps`` of the allowed values or ``radius``, the task's ``score_radius``);
    ``states_answer_form`` (every prompt states its answer form, so no front-end adds a form line
    of its own); ``balanced_tiny_halves`` (the ``tiny`` split of a task with halves draws its
    per-task count from each half: the paper's 50 positive and 50 negative T4 questions);
    ``card_text`` (the dataset card's paragraph on the profile)."""

    name: str
    summary: str
    strict_bond_items: bool
    paper_comparable: bool
    id_suffix: str
    names_itself: bool
    magnitude_rule: str
    states_answer_form: bool
    balanced_tiny_halves: bool
    card_text: str


PROFILES: dict[str, Profile] = {
    PAPER: Profile(
        PAPER,
        "prompts give what the paper's prompts give (Appendix C), no more and no less; "
        "paper's sampling, counts, tiny split and answer formats",
        strict_bond_items=True,
        paper_comparable=True,
        id_suffix="p",
        names_itself=True,
        magnitude_rule="steps",
        states_answer_form=True,
        balanced_tiny_halves=True,
        card_text="The questions give what the paper's prompts give (its Appendix C), no more and "
        "no less, in our own words; sampling, counts per complex, the `tiny` split (T4: 50 "
        "positives and 50 negatives) and the answer formats follow the paper. The paper's rows "
        "below are comparable.",
    ),
    EXPLICIT: Profile(
        EXPLICIT,
        "prompts state everything a careful solver needs (camera distance, field of "
        "view, answer ranges, the H-bond rule); not comparable with the paper's rows",
        strict_bond_items=False,
        paper_comparable=False,
        id_suffix="",
        names_itself=False,
        magnitude_rule="radius",
        states_answer_form=False,
        balanced_tiny_halves=False,
        card_text="The questions state everything a careful solver needs: the camera distance and "
        "field of view (T1, T3), answer ranges, the H-bond rule, view definitions. Easier than "
        "the paper's questions, and **not comparable** with the paper's rows. Build the paper's "
        "questions with `misi-bench build --profile paper` (the default).",
    ),
}
PROFILE_NAMES: tuple[str, ...] = tuple(PROFILES)


def check_profile(name: object) -> str:
    """The profile name itself; :class:`MisiError` (one line) for anything else."""
    if isinstance(name, str) and name in PROFILES:
        return name
    raise MisiError(f"unknown profile {name!r}; expected one of {', '.join(PROFILE_NAMES)}")


def get_profile(name: object) -> Profile:
    return PROFILES[check_profile(name)]


def profile_of_metadata(metadata: object) -> str:
    """The profile a row's metadata (JSON text or dict) names; :data:`LEGACY_PROFILE` when it
    names none or cannot be read. An unknown name is returned as it is (callers check it)."""
    if isinstance(metadata, (str, bytes)) and metadata:
        return _profile_of_text(metadata)
    if isinstance(metadata, Mapping):
        value = metadata.get("profile", LEGACY_PROFILE)
        return value if isinstance(value, str) else LEGACY_PROFILE
    return LEGACY_PROFILE


@lru_cache(maxsize=4096)
def _profile_of_text(text: str | bytes) -> str:
    """:func:`profile_of_metadata` of a row's JSON text, parsed once per text (a row is read by
    every baseline rule and random draw)."""
    try:
        return profile_of_metadata(json.loads(text))
    except (ValueError, TypeError):
        return LEGACY_PROFILE


def profile_of_rows(rows: Iterable[Mapping], where: str = "dataset") -> str:
    """The one profile of dataset rows (each with ``metadata``); :class:`MisiError` when they
    mix profiles or name an unknown one. Rows that name none are ``explicit`` rows."""
    seen = {profile_of_metadata(r.get("metadata")) for r in rows}
    for name in seen:
        if name not in PROFILES:
            raise MisiError(
                f"{where}: rows of unknown profile {name!r}; expected one of {', '.join(PROFILE_NAMES)}"
            )
    if len(seen) > 1:
        raise MisiError(
            f"{where}: rows of several profiles ({', '.join(sorted(seen))}); score one build at a time"
        )
    return seen.pop() if seen else LEGACY_PROFILE


def question_id(task: str, pdb_id: str, index: int, profile: str) -> str:
    """The id of question ``index`` of ``task`` on ``pdb_id`` in a build of ``profile``:
    ``translation-1abc-000`` (explicit) or ``translation-1abc-000p`` (paper)."""
    return f"{task}-{pdb_id}-{int(index):03d}{get_profile(profile).id_suffix}"


def profile_of_id(qid: str) -> str:
    """The profile a question id was made for (by its suffix; see :func:`question_id`)."""
    tail = str(qid).rsplit("-", 1)[-1]
    for profile in PROFILES.values():
        if (
            profile.id_suffix
            and tail.endswith(profile.id_suffix)
            and tail[: -len(profile.id_suffix)].isdigit()
        ):
            return profile.name
    return LEGACY_PROFILE


def id_for_profile(qid: str, profile: str) -> str:
    """The id the same question has in a build of ``profile`` (the id with the other profile's
    suffix replaced by this one's)."""
    qid = str(qid)
    own = get_profile(profile_of_id(qid)).id_suffix
    base = qid[: -len(own)] if own else qid
    return base + get_profile(profile).id_suffix


def mismatch_message(
    predictions_profile: str, dataset_profile: str, what: str, dataset: str
) -> str:
    """The one line that refuses to score predictions of one profile against the other's build."""
    return (
        f"{what}: the predictions were made for a {predictions_profile!r} build, but {dataset} is a "
        f"{dataset_profile!r} build; score them against a build of the same profile "
        f"(misi-bench build --profile {predictions_profile})"
    )
