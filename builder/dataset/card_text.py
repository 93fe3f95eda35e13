"""The card's build-dependent prose: provenance, the tiny split as built, the size caveat on the
paper's rows, and the Limitations section (all read from the manifest and ``baselines.json``)."""

from __future__ import annotations

from ..checks import blind
from ..core.profiles import LEGACY_PROFILE, PROFILES
from ..core.registry import TASK_BY_NAME, TASK_NAMES, TASK_SPECS
from . import card_tasks
from .card_split import identity_split_note

#: A task whose test split has fewer questions than this gets the small-build caveat: the 95%
#: interval of an accuracy near 50% is then wider than about ±10 points.
SMALL_TEST_QUESTIONS = 100
#: At most this many PDB ids are listed by name in the provenance line.
MAX_LISTED_IDS = 30


def provenance(manifest: dict) -> str:
    """One line saying what the build was made from: the embedded samples, a PDBbind-style folder
    or a list of PDB ids, with the complexes used (by id when few)."""
    source = str(manifest.get("source") or manifest.get("config", {}).get("source", ""))
    ids = sorted(manifest.get("inputs", {}))
    kind = manifest.get("config", {}).get("source")
    if source == "samples":
        what = "the embedded sample complexes of the generator (`builder/data/samples`)"
    elif kind == "ids" or source.startswith("ids:"):
        what = f"PDB entries named by the id list `{source.removeprefix('ids:')}`"
        if manifest.get("structures"):
            what += " (entries read from the PDB archive's files)"
    else:
        what = f"a PDBbind-style folder (`{source}`)"
    listed = ", ".join(i.upper() for i in ids[:MAX_LISTED_IDS])
    more = f" and {len(ids) - MAX_LISTED_IDS} more" if len(ids) > MAX_LISTED_IDS else ""
    return (
        f"Built from {what}: {len(ids)} complexes ({listed}{more})."
        if ids
        else f"Built from {what}."
    )


def tiny_text(manifest: dict) -> str:
    """What the ``tiny`` split is in this build: the rule, and where it is the whole test split."""
    per_task = manifest["config"]["tiny_per_task"]
    counts = manifest["counts"]
    halves = [s.name for s in TASK_SPECS if s.halves is not None and s.name in counts]
    rule = f"`tiny`, up to {per_task} questions per task drawn deterministically from `test`"
    profile = PROFILES.get(manifest.get("profile", LEGACY_PROFILE))
    if halves and profile is not None and profile.balanced_tiny_halves:
        rule += f" (`{'`, `'.join(halves)}`: {per_task} positives and {per_task} negatives)"
    whole = [t for t, c in counts.items() if c.get("test") and c.get("tiny") == c.get("test")]
    if whole and len(whole) == len([t for t, c in counts.items() if c.get("test")]):
        return f"{rule}; in this build every task's test split is smaller, so `tiny` equals `test`"
    if whole:
        return (
            f"{rule}; in this build `tiny` equals `test` for "
            + ", ".join(f"`{t}`" for t in whole)
            + ", whose test split is smaller"
        )
    return rule


def small_tasks(manifest: dict) -> dict[str, int]:
    """Tasks whose test split holds fewer than :data:`SMALL_TEST_QUESTIONS` questions -> n."""
    counts = manifest["counts"]
    order = [t for t in TASK_NAMES if t in counts] + sorted(set(counts) - set(TASK_NAMES))
    return {
        t: int(counts[t].get("test", 0))
        for t in order
        if int(counts[t].get("test", 0)) < SMALL_TEST_QUESTIONS
    }


def size_caveat(manifest: dict) -> str:
    """The qualifier of "comparable" for a small build ('' when every test split is large)."""
    small = small_tasks(manifest)
    if not small:
        return ""
    n_test = manifest["complexes"]["test"]
    return (
        f" Comparable in the questions asked, not in precision: this build has {n_test} test "
        f"complexes, and {len(small)} of its {len(manifest['counts'])} tasks have fewer than "
        f"{SMALL_TEST_QUESTIONS} test questions ({_fewest(small)}), so a score on it is a rough "
        "estimate."
    )


#: Test complexes of the paper's split (Sec. 4: 3,503 train, 490 test).
PAPER_TEST_COMPLEXES = 490


def comparison_grounds(manifest: dict) -> str:
    """What a comparison of this build with the paper's rows rests on, named before the claim:
    the split rule, and the build's size against the paper's (the blind floor follows in the
    caller's sentence)."""
    record = manifest.get("split")
    if isinstance(record, dict) and record.get("rule") == "identity30":
        split = (
            "the split (whole protein families apart: no test complex has a train complex at "
            f"{100 * record['threshold']:.0f}% sequence identity or more, the rule of the "
            "paper's ATOM3D split)"
        )
    elif (manifest.get("config") or {}).get("split_file"):
        split = "the split (the split file this build was given, as it lists the complexes)"
    else:
        split = (
            "the split (a seeded hash of the PDB ids: a test complex may share its protein with "
            "a train complex, unlike the paper's 30%-identity split)"
        )
    questions = sum(int(c.get("test", 0)) for c in (manifest.get("counts") or {}).values())
    size = (
        f"the build's size ({manifest.get('complexes', {}).get('test', 0)} test complexes and "
        f"{questions} test questions; the paper's test split has {PAPER_TEST_COMPLEXES} complexes)"
    )
    return f"{split}, {size} and the blind floor"


def _fewest(small: dict[str, int]) -> str:
    """The fewest test questions of the small tasks and the interval they give."""
    held = [n for n in small.values() if n]
    if not held:
        return "none has any"
    least = min(held)
    missing = f"; {len(small) - len(held)} have none" if len(held) < len(small) else ""
    return f"fewest: {least}; the smallest detectable difference is given above" + missing


def _decoy_leak(out, manifest: dict, leaking: list[str]) -> str:
    """The Limitations bullet of the tasks whose paper decoys leak (registry ``decoy_leak_in``), with
    the build's measured options-only score of the first of them that has one."""
    names = ", ".join(f"T{TASK_BY_NAME[t].number}" for t in leaking)
    decoys = manifest.get("config", {}).get("decoys", "paper")
    data = blind.read_blind(out) if out is not None else None
    measured = ""
    if data:
        gate = blind.options_only_gate(data)
        task = next((t for t in leaking if gate["worst"].get(t)), None)
        if task:
            worst = gate["worst"][task]
            measured = (
                f" On this build the best options-only rule scores {100 * worst['score']:.1f}% on "
                f"T{TASK_BY_NAME[task].number} ({worst['split']} split; chance 25%)."
            )
    if decoys == "paper":
        return (
            f"- **{names} options leak the answer** with the paper's decoys (`--decoys paper`, "
            "this build): the right move is often the option nearest to the other three, so a "
            "rule that reads the options alone beats chance." + measured + " Compare a model "
            "with the options-only row, or build with `--decoys balanced` (docs/decoys.md)."
        )
    return (
        f"- {names} and the image-option tasks use balanced decoys (`--decoys balanced`): the "
        "build fails when an options-only rule beats chance by more than "
        f"{100 * blind.MAX_EXCESS:.0f} points." + measured
    )


def _split_note(manifest: dict) -> list[str]:
    """The Limitations bullet of a build split by hash (no ``--split-file``), or the paragraph of
    an identity-split build (``card_split``)."""
    if manifest.get("config", {}).get("split_file"):
        return []
    if manifest.get("split"):
        return identity_split_note(manifest)
    return [
        "- **Split by hash**: a complex goes to train or test by a hash of the seed and its PDB "
        "id, so homologous proteins (and other entries of one protein) can fall on both sides "
        "and a model trained on the train split may have seen the test proteins. For a split by "
        "sequence identity build with `--split-file` (one PDB id per line in `train.txt`, "
        "`val.txt`, `test.txt`, e.g. ATOM3D's LBA split at 30% identity, which the paper's "
        "counts match; the validation ids are left out; docs/inputs.md#split-files)."
    ]


def limitations(out, manifest: dict) -> str:
    """The card's Limitations section body (markdown bullets)."""
    cfg = manifest.get("config", {})
    hbonds = cfg.get("hbonds", "plip")
    n_test = manifest["complexes"]["test"]
    small = small_tasks(manifest)
    lines = [
        "- **Our renderer, not ChimeraX**: perspective camera fitted to each scene, our own sticks, "
        "colours and label placement; the pictures follow the paper's description, not its "
        "pixels. Model scores on these pictures may differ from scores on the paper's images.",
        "- **Modelled hydrogens**: the pictures hide hydrogens, and where the input has none "
        "their positions are inferred; a bond that depends on a rotatable hydrogen (OH, NH3+) "
        "may change with its rotamer (`misi-bench audit` counts such answers).",
        "- **Zero-shot**: every question stands alone; the paper reports a few-shot setting "
        "without publishing its shots.",
    ]
    tasks = [t for t in TASK_NAMES if t in manifest["counts"]]
    bonded = card_tasks.hbond_tasks(tasks)
    if bonded:
        lines.insert(
            1,
            f"- **Our hydrogen-bond code** (`--hbonds {hbonds}`) decides the "
            f"{card_tasks.join_labels(bonded)} answers; it follows the stated criteria but is not "
            "ChimeraX itself (docs/hbonds.md lists where the modes disagree).",
        )
    profile = manifest.get("profile", LEGACY_PROFILE)
    lines += card_tasks.underdetermined_bullets(tasks, profile)
    leaking = [
        s.name for s in TASK_SPECS if profile in s.decoy_leak_in and s.name in manifest["counts"]
    ]
    if leaking:
        lines.append(_decoy_leak(out, manifest, leaking))
    lines += _split_note(manifest)
    if small:
        lines.append(
            f"- **Small build**: {n_test} test complexes; "
            + ", ".join(f"`{t}` n={n}" for t, n in small.items())
            + f" test questions ({_fewest(small)}): use a full build for comparisons."
        )
    return "\n".join(lines)


def snippets(repo_or_folder: str, version: str | None) -> dict[str, str]:
    """The parts of the card's Load and Evaluate snippets that name the data: the repo (or
    folder) the card describes and, for a tagged release, its tag, so that every command on
    the card of a pushed version reads that version (``misi-bench push`` renders the card
    with the repo and tag being pushed). Keys: ``load_args`` (after the split in
    ``load_dataset``), ``harness_env`` (before ``misi-bench lmms-eval``: the variables every
    harness route reads), ``revision_option`` (after ``misi-bench score --dataset REPO``)."""
    from ..core.constants import DEFAULT_HUB_REPO, REPO_ENV, REVISION_ENV  # noqa: PLC0415

    env = []
    if repo_or_folder != DEFAULT_HUB_REPO:
        env.append(f"{REPO_ENV}={repo_or_folder}")
    if version:
        env.append(f"{REVISION_ENV}={version}")
    return {
        "load_args": f', revision="{version}"' if version else "",
        "harness_env": " ".join(env) + " " if env else "",
        "revision_option": f" --revision {version}" if version else "",
    }


def version_line(repo_or_folder: str, version: str | None) -> str:
    """The card's line naming the release ('' for an untagged build): the tag, how each route
    reads it, and that results files record it (docs/releasing.md)."""
    if not version:
        return ""
    return (
        f"Dataset version: **{version}** (tag `{version}` of `{repo_or_folder}`). To cite a "
        f"score, compute it on this tag: `misi-bench score`, `eval`, `report --dataset` and "
        f"`human` take `--revision {version}`, the harness routes read "
        f"`MISI_BENCH_REVISION={version}`; every results file records the dataset, revision, "
        "commit and config hash it was computed on."
    )
