"""The checks as declared objects and the post-build steps (issue 50).

Which checks a task takes is declared once (``builder.checks.declared``: the answer kind's
defaults, the room's own, the room's declines with their reasons); a declared check whose hook
the room lacks is reported "not applicable (the room gives no ... hook)", never counted as
passed; "all unique" is said only when the uniqueness check ran on every task. The build's
stages after the units are a list of steps run by one loop (``builder.dataset.pipeline``), with
the failure rules of a staged release.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from misi_bench.builder.checks import audit, declared
from misi_bench.builder.checks.audit_findings import LEGIBLE_LABEL_FLOOR, TaskAudit
from misi_bench.builder.checks.validate import ValidationReport
from misi_bench.builder.core.errors import MisiError
from misi_bench.builder.core.registry import TASK_NAMES
from misi_bench.builder.dataset import card_checks, pipeline
from misi_bench.builder.dataset.config import BuildOptions
from misi_bench.builder.scoring.kinds import kind_of
from misi_bench.builder.tasks import room_of
from misi_bench.builder.tasks.room import Declined


def _uniqueness_task() -> str:
    return next(t for t in TASK_NAMES if "uniqueness" in kind_of(t).audit)


def test_every_check_is_declared_once_with_what_it_needs():
    names = [c.name for c in declared.CHECKS]
    assert len(names) == len(set(names)) and set(declared.CHECK_BY_NAME) == set(names)
    assert set(declared.AUDIT_CHECKS) == {"reproduction", "uniqueness", "legibility", "rotamers"}
    assert set(audit.ROW_CHECKS) == set(declared.AUDIT_CHECKS)  # each audit check runs on a row
    for check in declared.CHECKS:
        assert check.stage in declared.STAGES and check.needs and check.about and check.undeclared
        assert check.hook is None or hasattr(room_of(TASK_NAMES[0]), check.hook)


def test_a_declared_check_whose_hook_is_missing_is_not_applicable_with_its_reason():
    task = _uniqueness_task()
    bare = dataclasses.replace(room_of(task), answer_space=None)
    assert declared.CHECK_BY_NAME["uniqueness"].applies_to(task).applies
    found = declared.CHECK_BY_NAME["uniqueness"].applies_to(task, bare)
    assert not found.applies and found.reason == "the room gives no answer_space hook"
    assert "uniqueness" in declared.declared(task, bare)  # still declared: reported, not dropped


def test_a_declined_check_says_the_rooms_reason_and_is_not_declared():
    task = _uniqueness_task()
    room = dataclasses.replace(
        room_of(task), declines=(Declined("uniqueness", "options are not pictures"),)
    )
    assert "uniqueness" not in declared.declared(task, room)
    found = declared.CHECK_BY_NAME["uniqueness"].applies_to(task, room)
    assert found == declared.Applicability(False, "options are not pictures")


def test_statuses_say_ran_failed_not_applicable_or_not_run():
    task = _uniqueness_task()
    bonds = next(t for t in TASK_NAMES if "uniqueness" not in declared.declared(t))
    outcomes = {(task, "answers"): "ran", (task, "uniqueness"): "failed"}
    found = declared.statuses([task, bonds], outcomes)
    assert list(found[task]) == [c.name for c in declared.CHECKS]
    assert found[task]["answers"] == "ran" and found[task]["uniqueness"] == "failed"
    assert found[task]["reproduction"] == "not run (the build ran no audit)"
    assert found[bonds]["uniqueness"].startswith("not applicable (")
    lines = declared.status_lines({bonds: found[bonds], task: found[task]})
    # registry order and CHECKS order, whatever the order of the block's keys
    order = sorted([task, bonds], key=TASK_NAMES.index)
    assert [line.split(":", 1)[0] for line in lines] == order


def test_all_unique_is_said_only_when_uniqueness_ran_on_every_task():
    ran = {"uniqueness": "ran"}
    na = {"uniqueness": "not applicable (the answer is not one picture among candidates)"}
    assert declared.uniqueness_words({"a": ran, "b": ran}) == ", all unique"
    assert declared.uniqueness_words({"a": ran, "b": na}) == ", unique where checked (a)"
    assert declared.uniqueness_words({"b": na}) == ""
    assert declared.uniqueness_words({"a": {"uniqueness": "failed"}}) == ""


def test_the_audit_records_each_checks_outcome_per_task():
    task = _uniqueness_task()
    report = audit.AuditReport("f", "test", ("reproduction", "uniqueness", "legibility"))
    report.tasks[task] = TaskAudit(questions=2, reproduced=1, mismatched=["q1"])
    found = report.outcomes()
    assert found[(task, "reproduction")] == "failed"
    assert found[(task, "uniqueness")] == "not run (no sampled question had an answer space)"
    assert (task, "legibility") not in found  # does not apply: declared.status says why
    report.tasks[task] = TaskAudit(
        questions=2, reproduced=2, checked_unique=2, unique=1, ambiguous=["q2 (margin 3)"]
    )
    assert report.outcomes()[(task, "uniqueness")] == "failed"
    report.tasks[task] = TaskAudit(questions=2, reproduced=2, checked_unique=2, unique=2)
    assert report.outcomes()[(task, "uniqueness")] == "ran"
    labelled = next(t for t in TASK_NAMES if "legibility" in declared.declared(t))
    report.tasks = {labelled: TaskAudit(questions=1, labels_needed=10, labels_legible=9)}
    share = 9 / 10
    assert report.outcomes()[(labelled, "legibility")] == (
        "failed" if share < LEGIBLE_LABEL_FLOOR else "ran"
    )
    report.tasks = {labelled: TaskAudit()}
    assert report.outcomes()[(labelled, "reproduction")].startswith("not run (no question")


def test_the_validation_records_a_failed_check_per_task():
    task = _uniqueness_task()
    report = ValidationReport()
    report.per_task[task] = {"questions": 3}
    report.fail(f"{task}-x: gold answer scores 0", task, "answers")
    found = report.outcomes()
    assert found[(task, "answers")] == "failed" and not report.ok
    for (t, check), state in found.items():
        assert t == task and declared.CHECK_BY_NAME[check].stage == "validation"
        assert state == ("failed" if check == "answers" else "ran")


# ---------------------------------------------------------------------------- the steps


@dataclasses.dataclass(frozen=True)
class _Writes:
    """A step that writes one file into the staging folder (then fails, when asked)."""

    name: str
    error: type[Exception] | None = None
    staged: bool = True

    def run(self, state: pipeline.BuildState) -> None:
        state.staged.mkdir(parents=True, exist_ok=True)
        (state.staged / f"{self.name}.txt").write_text(self.name, encoding="utf-8")
        state.manifest.setdefault("ran", []).append(self.name)
        if self.error is OSError:
            raise OSError(28, "No space left on device")
        if self.error is not None:
            raise MisiError(f"{self.name}: refused")


def _state(tmp_path: Path) -> pipeline.BuildState:
    options = BuildOptions.of(None, out=tmp_path / "out")
    return pipeline.BuildState(options, tmp_path / "work", {}, {}, tmp_path / "out/.publish/x")


def test_the_steps_run_in_order_and_a_new_stage_is_one_more_item(tmp_path):
    state = _state(tmp_path)
    steps = (_Writes("merge"), _Writes("validation"), _Writes("extra"))
    assert pipeline.run_steps(steps, state)["ran"] == ["merge", "validation", "extra"]
    assert [s.name for s in pipeline.DEFAULT_STEPS] == [
        "merge",
        "validation",
        "audit",
        "options_only",
        "switch",
    ]
    assert [s.staged for s in pipeline.DEFAULT_STEPS] == [True, True, True, True, False]


def test_a_refusing_step_stops_the_loop_and_keeps_the_rejected_release(tmp_path):
    state = _state(tmp_path)
    steps = (_Writes("merge"), _Writes("validation", MisiError), _Writes("switch"))
    with pytest.raises(MisiError, match="validation: refused"):
        pipeline.run_steps(steps, state)
    assert state.manifest["ran"] == ["merge", "validation"]
    assert (state.staged / "merge.txt").exists()  # kept for inspection, as before


def test_a_full_disk_in_a_staged_step_discards_the_staged_files(tmp_path):
    state = _state(tmp_path)
    with pytest.raises(MisiError, match=r"the merge failed \(No space left on device\)"):
        pipeline.run_steps((_Writes("merge"), _Writes("audit", OSError)), state)
    assert not state.staged.exists()
    state = _state(tmp_path)
    with pytest.raises(OSError):  # the switch's own errors are its own (publish.recover)
        pipeline.run_steps((_Writes("switch", OSError, staged=False),), state)
    assert state.staged.exists()


def test_the_card_section_follows_the_manifests_checks(tmp_path):
    task = _uniqueness_task()
    card = tmp_path / "README.md"
    before = "# card\n\n" + card_checks.HEADING + card_checks.checks_text({}) + "\n\n## Counts\n"
    card.write_text(before, encoding="utf-8")
    checks = declared.statuses([task], {(task, "uniqueness"): "ran"})
    card_checks.update_card_checks(tmp_path, {"checks": checks})
    text = card.read_text(encoding="utf-8")
    assert f"- `{task}`: answers: not run (the build ran no validation)" in text
    assert "uniqueness: ran" in text and text.endswith("\n\n## Counts\n")
    again = json.loads(json.dumps({"checks": checks}, sort_keys=True))  # as read back
    assert card_checks.checks_text(again) == card_checks.checks_text({"checks": checks})
    card_checks.update_card_checks(tmp_path, {"checks": checks})
    assert card.read_text(encoding="utf-8") == text
