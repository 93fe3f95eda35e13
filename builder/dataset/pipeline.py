"""The post-build stages as a list of steps, run by one loop (:func:`run_steps`).

After the units have run, a build merges them into a staging folder, checks the staged release
and switches it in: :data:`DEFAULT_STEPS` = merge, validation, audit, options-only gate,
switch. Each step is an object with a ``name``, a ``staged`` flag (it writes only into the
staging folder, so an ``OSError`` there discards the staged files and leaves the current
release as it was) and ``run(state)``; a step that finds a defect raises :class:`MisiError`
and the loop stops there (the rejected release stays in the staging folder, the current one is
untouched). A new stage is one more item of the list, not an edit of the loop.

The check steps record what each check found per task (``BuildState.outcomes``) and write the
task-by-check statuses (``builder.checks.declared``) into the staged manifest and card as they
go, so a release, and a rejected one, says which checks ran, failed or did not apply (and why).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ..checks import blind
from ..checks.audit import LEGIBLE_LABEL_FLOOR, audit_dataset
from ..checks.build_warnings import log_validity_warnings, reading_warnings
from ..checks.declared import FAILED, RAN, applying, not_run, statuses
from ..checks.validate import validate_dataset
from ..core.errors import MisiError
from ..store.manifest import write_manifest
from ..store.progress import enabled as progress_enabled
from .card_checks import update_card_checks
from .card_examples import update_card_legibility
from .config import BuildOptions
from .identity_build import identity_record
from .merge import merge_units
from .publish import discard, switch

log = logging.getLogger(__name__)


@dataclass
class BuildState:
    """What the steps of one build's merge share: its options, work folder, complexes and
    splits (set once), and what the steps add: the staged manifest and each check's outcome per
    task (``(task, check) -> ran | failed | not run (why)``)."""

    options: BuildOptions
    work: Path
    refs: dict
    splits: dict
    staged: Path
    manifest: dict = field(default_factory=dict)
    outcomes: dict = field(default_factory=dict)

    def record_checks(self) -> None:
        """Write the task-by-check statuses into the staged manifest and card."""
        self.manifest["checks"] = statuses(self.manifest["counts"], self.outcomes)
        write_manifest(self.staged, self.manifest)
        update_card_checks(self.staged, self.manifest)


class Step(Protocol):
    """One post-build stage. ``staged``: it writes only into the staging folder."""

    name: str
    staged: bool

    def run(self, state: BuildState) -> None: ...


def run_steps(steps: tuple[Step, ...], state: BuildState) -> dict:
    """Run ``steps`` in order on ``state``; returns the manifest. An ``OSError`` (a full disk)
    in a staged step discards the staged files and becomes one :class:`MisiError` naming the
    folder; any other failure stops the loop as it is."""
    out = state.options.out
    for step in steps:
        log.debug("build step %s", step.name)
        try:
            step.run(state)
        except OSError as exc:
            if not step.staged:
                raise
            discard(state.staged)
            raise MisiError(
                f"{out}: the merge failed ({exc.strerror or exc}); the previous build in {out} "
                "is unchanged"
            ) from exc
    return state.manifest


@dataclass(frozen=True)
class Merge:
    """The units' rows into shards, manifest, blind baselines and card, in the staging folder."""

    name: str = "merge"
    staged: bool = True

    def run(self, state: BuildState) -> None:
        cfg, workers = state.options.config, state.options.workers
        record = identity_record(cfg, state.refs, state.splits, state.options.out)
        state.manifest = merge_units(
            state.staged, state.work, cfg, state.refs, state.splits, workers=workers, split=record
        )
        for line in reading_warnings(state.manifest):
            log.warning("reading: %s", line)
        (state.work.parent / "done").write_text(cfg.config_hash + "\n", encoding="utf-8")
        state.record_checks()


@dataclass(frozen=True)
class Validate:
    """Every answer derived again (``checks.validate``); a problem rejects the release."""

    name: str = "validation"
    staged: bool = True

    def run(self, state: BuildState) -> None:
        options = state.options
        if not options.validate:
            return
        report = validate_dataset(
            state.staged, source=options.config.source, workers=options.workers
        )
        state.manifest["validation"] = {
            "ok": report.ok,
            "checked": report.checked,
            "problems": report.problems[:50],
        }
        state.outcomes.update(report.outcomes())
        state.record_checks()
        if not report.ok:
            raise MisiError(
                f"{options.out}: validation failed: {report.problems[:3]}; nothing was published "
                f"(the rejected build is in {state.staged})"
            )


@dataclass(frozen=True)
class Audit:
    """The sampled audit (``checks.audit``): a picture that does not reproduce, or a task whose
    answer-bearing labels are legible below ``LEGIBLE_LABEL_FLOOR``, rejects the release."""

    name: str = "audit"
    staged: bool = True

    def run(self, state: BuildState) -> None:
        options, staged, manifest = state.options, state.staged, state.manifest
        if not options.audit:
            return
        cfg = options.config
        manifest["audit"], found = audit_sample(
            staged, manifest, cfg.tasks, cfg.source, options.audit_sample, options.workers
        )
        state.outcomes.update(found)
        state.record_checks()
        update_card_legibility(staged, manifest)
        broken = [
            i for t in manifest["audit"]["tasks"].values() for i in t["mismatched"] + t["errors"]
        ]
        if broken:
            raise MisiError(
                f"{options.out}: audit: stored images do not reproduce: {broken[:3]} (see "
                f"{staged / 'manifest.json'}); nothing was published"
            )
        _legibility_check(staged, manifest)


@dataclass(frozen=True)
class OptionsOnlyGate:
    """The options-only check (``blind.options_only_gate``). A ``balanced`` build records it under
    ``manifest["audit"]["options_only"]`` and fails when a rule beats chance by more than
    ``blind.MAX_EXCESS``; a ``paper`` build only logs it."""

    name: str = "options_only"
    staged: bool = True

    def run(self, state: BuildState) -> None:
        if not state.options.audit:
            return
        out, manifest, cfg = state.staged, state.manifest, state.options.config
        data = blind.read_blind(out)
        tasks = applying(manifest["counts"], "options_only")
        if not data:
            state.outcomes.update(
                ((t, "options_only"), not_run("no blind baselines")) for t in tasks
            )
            state.record_checks()
            return
        gate = blind.options_only_gate(data)
        for task, worst in gate["worst"].items():
            log.info(
                "options only, %s: best rule %s scores %.1f%% on %s (chance 25%%)",
                task,
                worst["rule"],
                100 * worst["score"],
                worst["split"],
            )
        log_validity_warnings(out, manifest)  # the ones above chance again, as WARNING lines
        balanced = cfg.decoys != "paper"
        failed = {p.split(" ", 1)[0] for p in gate["problems"]} if balanced else set()
        for task in tasks:
            found = FAILED if task in failed else RAN
            if task not in gate["worst"]:
                found = not_run("the options-only rules read none of its options")
            state.outcomes[(task, "options_only")] = found
        if balanced:
            manifest["audit"]["options_only"] = gate
            manifest["audit"]["ok"] = manifest["audit"]["ok"] and gate["ok"]
        state.record_checks()
        if balanced and not gate["ok"]:
            raise MisiError(
                f"{out}: audit: options-only rules beat chance in a balanced build: "
                f"{gate['problems'][:3]}"
            )


@dataclass(frozen=True)
class Switch:
    """The checked release swapped in for the current one (``publish.switch``)."""

    name: str = "switch"
    staged: bool = False

    def run(self, state: BuildState) -> None:
        switch(state.options.out, state.staged)


#: The post-build stages of ``build_dataset``, in order.
DEFAULT_STEPS: tuple[Step, ...] = (Merge(), Validate(), Audit(), OptionsOnlyGate(), Switch())


def _legibility_check(out: Path, manifest: dict) -> None:
    """Fail the build when a task's share of answer-bearing labels legible in at least one view
    (the sampled audit's ``answer_label_share``) is below ``audit.LEGIBLE_LABEL_FLOOR``."""
    low = {
        task: t["answer_label_share"]
        for task, t in manifest["audit"]["tasks"].items()
        if t.get("answer_label_share") is not None and t["answer_label_share"] < LEGIBLE_LABEL_FLOOR
    }
    if low:
        raise MisiError(
            f"{out}: audit: answer-bearing labels legible in too few pictures: "
            + ", ".join(f"{t} {100 * v:.1f}%" for t, v in low.items())
            + f" (floor {100 * LEGIBLE_LABEL_FLOOR:.0f}%; see {out / 'manifest.json'}); "
            "nothing was published"
        )


def audit_sample(
    out: Path, manifest: dict, tasks, source, sample: int, workers: int = 1
) -> tuple[dict, dict]:
    """Reproduction, uniqueness, legibility and rotamer checks on ``sample`` questions per
    config (test split; train when a config has no test question): the summary (no timings,
    so that the manifest stays byte-identical between runs) and each check's outcome per task."""
    summary: dict = {"sample_per_config": int(sample), "tasks": {}, "problems": [], "ok": True}
    outcomes: dict = {}
    seconds = 0.0
    for split in ("test", "train"):
        configs = [
            t
            for t in tasks
            if manifest["counts"][t].get(split)
            and t not in summary["tasks"]
            and (split == "test" or not manifest["counts"][t].get("test"))
        ]
        if not configs:
            continue
        report = audit_dataset(
            out,
            configs=configs,
            split=split,
            checks=("reproduction", "uniqueness", "legibility", "rotamers"),
            progress=progress_enabled(),
            sample=sample,
            source=source,
            workers=max(1, int(workers)),
            split_check=False,  # the merge has just made (and enforced) this check
        )
        part = report.summary()
        for task, value in part["tasks"].items():
            summary["tasks"][task] = {"split": split, **value}
        summary["problems"] += part["problems"]
        summary["ok"] = summary["ok"] and part["ok"]
        outcomes.update(report.outcomes())
        seconds += report.seconds
    log.info(
        "audit of %d sampled questions: %.1f s",
        sum(t["questions"] for t in summary["tasks"].values()),
        seconds,
    )
    ambiguous = [i for t in summary["tasks"].values() for i in t.get("ambiguous", [])]
    if ambiguous:
        log.warning(
            "audit: %d sampled questions are ambiguous: %s",
            len(ambiguous),
            ", ".join(ambiguous[:10]),
        )
    return summary, outcomes
