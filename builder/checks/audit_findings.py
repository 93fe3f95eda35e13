"""The findings of the dataset audit (``audit``): per question (:class:`RowAudit`) and per
task (:class:`TaskAudit`), and how a question's findings fold into its task's."""

from __future__ import annotations

from dataclasses import dataclass, field

from .audit_checks import MARGIN_BLOCKS, margin_summary

#: The least share of answer-bearing labels (per task) legible in at least one view for the
#: audit to pass (docs/measurements.md: every such label of the samples' and the held-out
#: set's T4, T8 and T9 pictures is legible with the ``leader`` layout; the floor leaves room for
#: a few labels of unusually crowded pockets, and fails the 30-40 % of the old layout).
LEGIBLE_LABEL_FLOOR = 0.95


@dataclass
class TaskAudit:
    """Findings of one task: ids of defects, margins of the uniqueness check, legibility counts."""

    questions: int = 0
    reproduced: int = 0
    mismatched: list[str] = field(default_factory=list)
    checked_unique: int = 0
    unique: int = 0
    ambiguous: list[str] = field(default_factory=list)
    margins: list[int] = field(default_factory=list)
    answers_with_labels: int = 0
    legible: int = 0
    illegible: list[str] = field(default_factory=list)
    labels_needed: int = 0
    labels_legible: int = 0
    view_labels: dict[str, list[int]] = field(default_factory=dict)
    hbond_answers: int = 0
    rotamer_dependent: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def label_share(self) -> float | None:
        """Share of answer-bearing labels legible in at least one view (None: none checked)."""
        return round(self.labels_legible / self.labels_needed, 4) if self.labels_needed else None

    def summary(self) -> dict:
        out: dict = {
            "questions": self.questions,
            "reproduced": self.reproduced,
            "mismatched": self.mismatched,
            "errors": self.errors,
        }
        if self.checked_unique:
            out.update(
                unique=self.unique,
                checked_unique=self.checked_unique,
                unique_share=round(self.unique / self.checked_unique, 4),
                ambiguous=self.ambiguous,
                margin_blocks=margin_summary(self.margins),
            )
        if self.answers_with_labels:
            out.update(
                answers_with_labels=self.answers_with_labels,
                legible=self.legible,
                legible_share=round(self.legible / self.answers_with_labels, 4),
                illegible=self.illegible,
            )
        if self.labels_needed:
            out.update(
                answer_labels=self.labels_needed,
                answer_labels_legible=self.labels_legible,
                answer_label_share=self.label_share,
                answer_label_share_by_view={
                    v: round(n / total, 4) for v, (n, total) in self.view_labels.items()
                },
            )
        if self.hbond_answers:
            out.update(
                hbond_answers=self.hbond_answers,
                rotamer_dependent=self.rotamer_dependent,
                rotamer_dependent_share=round(len(self.rotamer_dependent) / self.hbond_answers, 4),
            )
        return out


@dataclass
class RowAudit:
    """What one question contributes to its task's findings (``None``: check not run or not
    applicable). ``counted``: the question's images could be planned (else only ``error``)."""

    id: str
    counted: bool = False
    reproduced: bool | None = None
    margin: int | None = None
    legible: bool | None = None
    labels_needed: int = 0
    labels_legible: int = 0
    view_labels: dict[str, tuple[int, int]] = field(default_factory=dict)
    rotamer_dependent: bool | None = None
    error: str | None = None


def add_row(result: TaskAudit, row: RowAudit) -> None:
    """Fold one question's findings into its task's (in question order: lists keep that order)."""
    result.questions += row.counted
    if row.reproduced is not None:
        if row.reproduced:
            result.reproduced += 1
        else:
            result.mismatched.append(row.id)
    if row.margin is not None:
        result.checked_unique += 1
        result.margins.append(row.margin)
        if row.margin >= MARGIN_BLOCKS:
            result.unique += 1
        else:
            result.ambiguous.append(f"{row.id} (margin {row.margin})")
    if row.legible is not None:
        result.answers_with_labels += 1
        if row.legible:
            result.legible += 1
        else:
            result.illegible.append(row.id)
    result.labels_needed += row.labels_needed
    result.labels_legible += row.labels_legible
    for view, (n, total) in row.view_labels.items():
        cell = result.view_labels.setdefault(view, [0, 0])
        cell[0] += n
        cell[1] += total
    if row.rotamer_dependent is not None:
        result.hbond_answers += 1
        if row.rotamer_dependent:
            result.rotamer_dependent.append(row.id)
    if row.error is not None:
        result.errors.append(row.error)
