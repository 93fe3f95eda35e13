"""The questions of one split of a build folder and one participant's answers.

Questions come in the paper's task order (T1..T9), each task's questions in the split's own
order, so that a person learns one task's conventions before the next. Answers are appended to
``<out>/<participant>.jsonl``, one JSON object per line with ``id`` and ``prediction`` (what
``misi-bench score`` reads) plus ``task``, ``split``, ``participant``, ``seconds`` (time from
showing the question to the answer, measured in the page), ``answered_at`` (UTC, ISO 8601) and
the dataset's ``dataset``, ``revision``, ``commit`` and ``config_hash`` (``core.provenance``).
An answer is final: a question answered once is not shown again, which is also how a session
resumes (restart the app with the same participant and output folder).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import math
import re
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ...builder.core.errors import MisiError
from ...builder.core.profiles import LEGACY_PROFILE, PROFILES, profile_of_metadata
from ...builder.core.provenance import DatasetProvenance
from ...builder.core.registry import CHOICE_FORM, TASK_BY_NAME, TASK_NAMES, TASK_SPECS, TEXT_FORM
from ...builder.core.shards import checked_shards
from ...builder.scoring.kinds import kind_of
from ..common import split_records

log = logging.getLogger(__name__)

#: The answer form of each fill-in task, shown under the text box (the registry's ``form_hint``).
FORMS: dict[str, str] = {
    spec.name: spec.form_hint for spec in TASK_SPECS if kind_of(spec).form == TEXT_FORM
}
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_COLUMNS = [
    "id",
    "task",
    "pdb_id",
    "question",
    "options",
    "image_views",
    "answer_format",
    "metadata",
]


@dataclass(frozen=True)
class Question:
    """One question as the page shows it (never its answer); ``shard`` is its Parquet file."""

    id: str
    task: str
    pdb_id: str
    question: str
    options: tuple[str, ...]
    image_views: tuple[str, ...]
    answer_format: str
    shard: str
    #: The build profile; a ``paper`` question states its own answer form (the paper's), so the
    #: page adds no form line that would tell more than the question does.
    profile: str = LEGACY_PROFILE

    def public(self) -> dict:
        """What the page receives: everything but the answer."""
        return {
            "id": self.id,
            "task": self.task,
            "task_number": TASK_BY_NAME[self.task].number,
            "pdb_id": self.pdb_id,
            "question": self.question,
            "options": list(self.options),
            "image_views": list(self.image_views),
            "answer_format": self.answer_format,
            "choice": kind_of(TASK_BY_NAME[self.task]).form == CHOICE_FORM,
            "form": ""
            if getattr(PROFILES.get(self.profile), "states_answer_form", False)
            else FORMS.get(self.task, ""),
        }


def load_questions(build: str | Path, split: str = "tiny") -> list[Question]:
    """Every question of ``split`` in a build folder, in task order."""
    import pyarrow.parquet as pq  # noqa: PLC0415

    build = Path(build)
    if not (build / "manifest.json").is_file():
        raise MisiError(
            f"{build}: not a build folder (no manifest.json); run `misi-bench build` first"
        )
    out = []
    for task in TASK_NAMES:
        for shard in checked_shards(build, task, split):
            for r in pq.read_table(shard, columns=_COLUMNS).to_pylist():
                out.append(
                    Question(
                        str(r["id"]),
                        r["task"],
                        r["pdb_id"],
                        r["question"],
                        tuple(r["options"] or ()),
                        tuple(r["image_views"] or ()),
                        r["answer_format"],
                        str(shard),
                        profile_of_metadata(r["metadata"]),
                    )
                )
    if not out:
        raise MisiError(f"{build}: no questions in split {split!r}")
    return out


@lru_cache(maxsize=16)
def question_images(shard: str, qid: str) -> tuple[bytes, ...]:
    """The encoded images (PNG as the build writes them) of one question, in prompt order."""
    import pyarrow.parquet as pq  # noqa: PLC0415

    rows = pq.read_table(shard, columns=["id", "images"], filters=[("id", "=", qid)]).to_pylist()
    if not rows:
        raise KeyError(qid)
    images = []
    for image in rows[0]["images"] or []:
        data = image.get("bytes") if isinstance(image, dict) else image
        if not data and isinstance(image, dict) and image.get("path"):
            data = Path(shard).parent.joinpath(image["path"]).read_bytes()
        images.append(bytes(data or b""))
    return tuple(images)


def records(build: str | Path, split: str) -> list[dict]:
    """The scorer's view of the split (id, task, answer, metadata, options), for the final page."""
    return split_records(build, split)


def check_participant(name: str) -> str:
    """The participant name, which is also the file name: letters, digits, ``_.-``, up to 64."""
    name = str(name or "").strip()
    if not _NAME_RE.match(name):
        raise ValueError(
            f"participant name {name!r}: use 1-64 letters, digits, '_', '.' or '-' "
            "(it names the predictions file)"
        )
    return name


class Session:
    """One participant's progress over a question list, backed by an append-only JSONL file."""

    def __init__(
        self,
        questions: list[Question],
        participant: str,
        out: str | Path,
        split: str,
        config_hash: str | None = None,
        provenance: DatasetProvenance | None = None,
    ) -> None:
        self.questions = questions
        self.config_hash = config_hash  # the build, recorded with every answer
        self.provenance = provenance
        self.by_id = {q.id: q for q in questions}
        self.participant = check_participant(participant)
        self.split = split
        self.path = Path(out) / f"{self.participant}.jsonl"
        self.answers: dict[str, dict] = {}
        self._lock = threading.Lock()
        if self.path.exists():
            for n, line in enumerate(self.path.read_text(encoding="utf-8").splitlines(), 1):
                try:
                    item = json.loads(line)
                    seconds = item.get("seconds")
                    if seconds is not None and not (
                        isinstance(seconds, (int, float))
                        and math.isfinite(seconds)
                        and seconds >= 0
                    ):
                        log.warning(
                            "%s line %d: bad seconds %r, kept as unknown", self.path, n, seconds
                        )
                        item["seconds"] = None
                    self.answers.setdefault(str(item["id"]), item)
                except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
                    log.warning("%s line %d: unreadable, ignored", self.path, n)
            log.info(
                "%s: resuming with %d of %d answered",
                self.participant,
                self.n_answered,
                len(questions),
            )

    @property
    def n_answered(self) -> int:
        return sum(1 for q in self.questions if q.id in self.answers)

    @property
    def finished(self) -> bool:
        return self.n_answered == len(self.questions)

    def next_question(self) -> Question | None:
        """The first question not answered yet (None when finished)."""
        return next((q for q in self.questions if q.id not in self.answers), None)

    def record(self, qid: str, prediction: str, seconds: float | None) -> dict:
        """Append one final answer; raises KeyError for an unknown id, ValueError for a repeat."""
        question = self.by_id[qid]
        with self._lock:
            if qid in self.answers:
                raise ValueError(f"question {qid} is already answered")
            item = {
                "id": qid,
                "prediction": str(prediction),
                "task": question.task,
                "split": self.split,
                **({"config_hash": self.config_hash} if self.config_hash else {}),
                "participant": self.participant,
                "seconds": None if seconds is None else round(max(0.0, float(seconds)), 2),
                "answered_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                **self._dataset_fields(),
            }
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(item, ensure_ascii=False) + "\n")
            self.answers[qid] = item
        return item

    def _dataset_fields(self) -> dict:
        """What each answer line records of the dataset (repo or path, revision, commit, config
        hash: ``misi-bench score`` checks the hash against its --dataset's)."""
        if self.provenance is None:
            return {}
        return {**self.provenance.line_fields(), "config_hash": self.provenance.config_hash}

    def state(self) -> dict:
        nxt = self.next_question()
        return {
            "participant": self.participant,
            "split": self.split,
            "total": len(self.questions),
            "answered": self.n_answered,
            "done": nxt is None,
            "file": str(self.path),
            "question": None if nxt is None else nxt.public(),
        }
