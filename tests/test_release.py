"""Releases a paper can cite (issue 40 items 1 and 2): a score computed against a tagged release
names it (dataset, revision, commit, config hash, version) and is computed again from that tag.

The Hub cannot be reached from the test machines, so the release is pushed to, and read back
from, ``test_hub.HubDouble``: a PROTOCOL DOUBLE of the Hub on 127.0.0.1 (not the Hub). Nothing
in the clients is mocked: ``misi-bench push`` uploads through the real ``huggingface_hub``, and
``misi-bench score``/``report``/``human``/``export-sft`` run as a user runs them, in a
subprocess whose ``HF_ENDPOINT`` points at the double, reading through the real
``huggingface_hub`` and ``datasets`` code paths.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from misi_bench.builder.core.provenance import DatasetProvenance
from misi_bench.builder.dataset import hub

from test_hub import REPO, TOKEN, HubDouble, make_fake_folder

TAG = "v0.1.0"
CONFIGS = ["rotation", "pocket_ligand"]


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    """A real build (4 embedded complexes, two configs) pushed to the double as ``TAG``; then a
    different build pushed to ``main`` on top of it, so only the tag still holds the release."""
    from huggingface_hub import constants
    from misi_bench.builder.dataset.build import build_dataset

    root = tmp_path_factory.mktemp("release")
    folder = root / "misi-bench"
    build_dataset(source="samples", out=folder, tasks=CONFIGS, limit=4, progress=False)
    with pytest.MonkeyPatch.context() as mp, HubDouble() as double:
        mp.delenv("HF_HUB_OFFLINE", raising=False)
        mp.setattr(constants, "HF_HUB_OFFLINE", False)
        mp.setenv("NO_PROXY", "127.0.0.1,localhost")
        pushed = hub.push_dataset(
            folder, REPO, tag=TAG, token=TOKEN, endpoint=double.endpoint, allow_small=True
        )
        later = make_fake_folder(root / "later")  # other ids and answers: a later main
        hub.push_dataset(later, REPO, token=TOKEN, endpoint=double.endpoint)
        assert double.repos[REPO].branches["main"] != pushed.commit_oid
        yield double, folder, pushed.commit_oid, root


def run(double, root: Path, *args: str, env: dict | None = None):
    """``misi-bench ARGS`` in a subprocess talking to the double (a fresh Hub cache per root)."""
    environ = {
        k: v
        for k, v in os.environ.items()
        if k not in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "MISI_BENCH_REVISION")
    }
    environ.update(
        HF_ENDPOINT=double.endpoint,
        HF_HOME=str(root / "hf_home"),
        HF_HUB_DISABLE_TELEMETRY="1",
        NO_PROXY="127.0.0.1,localhost",
        **(env or {}),
    )
    code = "import sys; from misi_bench import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env=environ,
        timeout=600,
    )


def gold_predictions(folder: Path, path: Path, wrong_every: int = 3) -> Path:
    """Predictions for the test questions of ``folder``: the gold answer, except every
    ``wrong_every``-th question answered with a constant (so the score is neither 0 nor 1)."""
    from misi_bench.builder.store.parquet import iter_config_rows

    lines = []
    for config in CONFIGS:
        for k, row in enumerate(iter_config_rows(folder, config, "test", ["id", "answer"])):
            pred = "None" if k % wrong_every == 0 else row["answer"]
            lines.append(json.dumps({"id": row["id"], "prediction": pred}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_score_from_the_tag_names_the_release_and_reproduces_the_local_score(release):
    double, folder, commit, root = release
    manifest = json.loads((folder / "manifest.json").read_text())
    preds = gold_predictions(folder, root / "preds.jsonl")

    local = run(double, root, "score", "--dataset", str(folder), "--predictions", str(preds),
                "--json-out", str(root / "local.json"))  # fmt: skip
    assert local.returncode == 0, local.stderr[-2000:]
    tagged = run(double, root, "score", "--dataset", REPO, "--revision", TAG,
                 "--predictions", str(preds), "--json-out", str(root / "tagged.json"),
                 "--per-item", str(root / "items.jsonl"))  # fmt: skip
    assert tagged.returncode == 0, tagged.stderr[-2000:]

    ours, theirs = (json.loads((root / f"{n}.json").read_text()) for n in ("local", "tagged"))
    assert theirs["report"] == ours["report"]  # the same number, computed from the tag
    assert theirs["baselines"] == ours["baselines"]  # and the same baselines beside it
    assert theirs["baselines"].get("text_only")  # fitted on the tag's train split
    assert 0 < theirs["report"]["average_all_tasks"] < 1
    assert theirs["dataset"] == {
        "dataset": REPO,
        "revision": TAG,
        "commit": commit,
        "config_hash": manifest["config_hash"],
        "version": TAG,  # the pushed manifest states its tag
    }
    assert theirs["config_hash"] == manifest["config_hash"]
    assert ours["dataset"]["dataset"] == str(folder.resolve())
    assert ours["dataset"]["revision"] is None and ours["dataset"]["version"] is None
    label = DatasetProvenance.from_json(theirs["dataset"]).label()
    assert f"dataset: {label}" in tagged.stdout and TAG in label and commit[:12] in label

    items = [json.loads(line) for line in (root / "items.jsonl").read_text().splitlines()]
    assert len(items) == ours["report"]["n"] > 0
    assert {(i["dataset"], i["revision"], i["commit"], i["config_hash"]) for i in items} == {
        (REPO, TAG, commit, manifest["config_hash"])
    }


@pytest.mark.slow  # two CLI subprocesses; fast sibling: the tag reproduction test above
def test_default_branch_and_environment_revision(release):
    """Without --revision the Hub's main (a later push) is read, and the release's ids are not
    its questions; $MISI_BENCH_REVISION, the variable the harness task files read, picks the tag
    for score too."""
    double, folder, commit, root = release
    preds = gold_predictions(folder, root / "preds-env.jsonl")
    main = run(double, root, "score", "--dataset", REPO, "--predictions", str(preds),
               "--no-baselines")  # fmt: skip
    assert main.returncode == 2 and "none of its" in main.stderr.splitlines()[-1]
    env = run(double, root, "score", "--dataset", REPO, "--predictions", str(preds),
              "--no-baselines", "--json-out", str(root / "env.json"),
              env={"MISI_BENCH_REVISION": TAG})  # fmt: skip
    assert env.returncode == 0, env.stderr[-2000:]
    got = json.loads((root / "env.json").read_text())["dataset"]
    assert (got["revision"], got["commit"]) == (TAG, commit)


def test_cross_build_check_runs_for_a_hub_dataset(release):
    """Predictions recorded for another build are flagged against the Hub revision's manifest,
    as for a local folder."""
    double, folder, _commit, root = release
    manifest = json.loads((folder / "manifest.json").read_text())
    preds = gold_predictions(folder, root / "preds-other.jsonl")
    lines = [json.loads(line) for line in preds.read_text().splitlines()]
    preds.write_text("".join(json.dumps({**x, "config_hash": "0123456789abcdef"}) + "\n"
                             for x in lines))  # fmt: skip
    out = run(double, root, "score", "--dataset", REPO, "--revision", TAG,
              "--predictions", str(preds), "--no-baselines")  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    assert "recorded for build 0123456789abcdef" in out.stderr
    assert f"is build {manifest['config_hash']}" in out.stderr


def test_unknown_revision_and_revision_of_a_folder_are_one_line(release):
    double, folder, _commit, root = release
    preds = gold_predictions(folder, root / "preds-bad.jsonl")
    out = run(double, root, "score", "--dataset", REPO, "--revision", "v9.9.9",
              "--predictions", str(preds), "--no-baselines")  # fmt: skip
    last = out.stderr.strip().splitlines()[-1]
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "--revision v9.9.9" in last and REPO in last and TAG in last  # names the tags it has
    out = run(double, root, "score", "--dataset", str(folder), "--revision", TAG,
              "--predictions", str(preds), "--no-baselines")  # fmt: skip
    last = out.stderr.strip().splitlines()[-1]
    assert out.returncode == 2 and "is a local folder" in last


@pytest.mark.slow  # a serve-mock and an eval subprocess; the fast sibling: the score tests here
def test_eval_run_from_the_tag_records_the_release(release):
    """`eval --dataset REPO --revision TAG` against the gold stand-in model (serve-mock): its
    report.json and per_item.jsonl name the release, and `score` of the run folder against the
    same tag gives the same report."""
    double, folder, commit, root = release
    manifest = json.loads((folder / "manifest.json").read_text())
    code = "import sys, misi_bench; sys.exit(misi_bench.main())"
    mock = subprocess.Popen(
        [sys.executable, "-c", code, "serve-mock", str(folder), "--answers", "gold"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        mock.stdout.readline()
        url = mock.stdout.readline().strip()
        out = run(double, root, "eval", "--base-url", url, "--model", "mock", "--dataset", REPO,
                  "--revision", TAG, "--configs", "rotation", "--out", str(root / "run"),
                  "--no-progress")  # fmt: skip
    finally:
        mock.terminate()
        mock.communicate(timeout=30)
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads((root / "run" / "report.json").read_text())
    want = {"dataset": REPO, "revision": TAG, "commit": commit,
            "config_hash": manifest["config_hash"], "version": TAG}  # fmt: skip
    assert report["dataset"] == want and report["settings"]["revision"] == commit
    assert report["report"]["tasks"]["rotation"]["score"] == 1.0
    assert (
        f"dataset: {REPO}@{TAG} (commit {commit[:12]}" in (root / "run" / "report.md").read_text()
    )
    items = [json.loads(x) for x in (root / "run" / "per_item.jsonl").read_text().splitlines()]
    assert items and {(i["dataset"], i["revision"], i["commit"]) for i in items} == {
        (REPO, TAG, commit)
    }
    again = run(double, root, "score", "--dataset", REPO, "--revision", TAG, "--configs",
                "rotation", "--predictions", str(root / "run"), "--no-baselines",
                "--json-out", str(root / "again.json"))  # fmt: skip
    assert again.returncode == 0, again.stderr[-2000:]
    assert json.loads((root / "again.json").read_text())["report"] == report["report"]


@pytest.mark.slow  # three CLI subprocesses; fast sibling: test_score_reads_the_tags_stored_baselines
def test_report_reads_chance_levels_from_the_tag(release):
    """`report --dataset REPO --revision TAG`: the chance rows come from the tagged release
    (fetched: manifest, baselines, the split's shards), the page's notes name it."""
    double, folder, commit, root = release
    preds = gold_predictions(folder, root / "preds-report.jsonl")
    scored = run(double, root, "score", "--dataset", str(folder), "--predictions", str(preds),
                 "--json-out", str(root / "for-report.json"), "--no-baselines")  # fmt: skip
    assert scored.returncode == 0, scored.stderr[-2000:]
    local = run(double, root, "report", str(root / "for-report.json"), "--dataset", str(folder),
                "--out", str(root / "local.html"), "--no-paper")  # fmt: skip
    tagged = run(double, root, "report", str(root / "for-report.json"), "--dataset", REPO,
                 "--revision", TAG, "--out", str(root / "tagged.html"), "--no-paper")  # fmt: skip
    assert local.returncode == 0 and tagged.returncode == 0, tagged.stderr[-2000:]

    def chance_lines(text: str) -> list[str]:
        return [x for x in text.splitlines() if x.startswith("|") and "random" in x.lower()]

    assert chance_lines(tagged.stdout) and chance_lines(tagged.stdout) == chance_lines(local.stdout)
    page = (root / "tagged.html").read_text()
    assert f"{REPO}@{TAG}" in page and commit[:12] in page
    bad = run(double, root, "report", str(root / "for-report.json"), "--dataset", REPO,
              "--revision", "v7.0.0", "--out", str(root / "bad.html"))  # fmt: skip
    last = bad.stderr.strip().splitlines()[-1]
    assert bad.returncode == 2 and f"{REPO}@v7.0.0" in last and "Traceback" not in bad.stderr


@pytest.mark.slow  # the app in a subprocess; the fast sibling: test_human_routes.py
def test_human_app_on_the_tag_records_the_release_in_each_answer(release):
    """`human REPO --revision TAG` serves the tagged release's questions; each answer line names
    the release, and the file scores against the same tag."""
    import urllib.request

    from misi_bench.eval_plugins.common import gold_by_id

    double, folder, commit, root = release
    manifest = json.loads((folder / "manifest.json").read_text())
    gold = gold_by_id(folder, splits=("tiny",))
    out_dir = root / "human"
    env = {
        k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")
    }
    env.update(HF_ENDPOINT=double.endpoint, HF_HOME=str(root / "hf_home"), NO_PROXY="127.0.0.1")
    code = "import sys, misi_bench; sys.exit(misi_bench.main())"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            code,
            "human",
            REPO,
            "--revision",
            TAG,
            "--port",
            "0",
            "--out",
            str(out_dir),
        ],  # fmt: skip
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        head = [proc.stdout.readline() for _ in range(3)]
        assert f"{REPO}@{TAG}" in head[0], head
        url = head[2].split("serving on ", 1)[1].split(" ", 1)[0]
        base, token = url.split("/?token=")

        def call(path: str, body: dict) -> dict:
            request = urllib.request.Request(
                base + path,
                data=json.dumps(body).encode(),
                headers={"Content-Type": "application/json", "X-Misi-Token": token},
            )
            with urllib.request.urlopen(request, timeout=60) as response:
                return json.loads(response.read())

        state = call("/api/start", {"participant": "tester"})
        qid = state["question"]["id"]
        call("/api/answer", {"participant": "tester", "key": state["key"], "id": qid,
                             "prediction": gold[qid], "seconds": 2.0})  # fmt: skip
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
    lines = [json.loads(x) for x in (out_dir / "tester.jsonl").read_text().splitlines()]
    assert [x["id"] for x in lines] == [qid]
    assert (lines[0]["dataset"], lines[0]["revision"], lines[0]["commit"]) == (REPO, TAG, commit)
    assert lines[0]["config_hash"] == manifest["config_hash"]
    scored = run(double, root, "score", "--dataset", REPO, "--revision", TAG, "--split", "tiny",
                 "--predictions", str(out_dir / "tester.jsonl"), "--no-baselines")  # fmt: skip
    assert scored.returncode == 0 and "recorded for build" not in scored.stderr, scored.stderr


def _code_blocks(card: str, lang: str) -> list[str]:
    return [b.split("\n", 1)[1] for b in card.split("```")[1::2] if b.startswith(lang + "\n")]


def test_pushed_card_snippets_name_the_repo_and_tag_and_run(release):
    """The card of a tagged push: its Load, lmms-eval and score snippets name the repo and tag
    being pushed (not the canonical repo), and the Load snippet, run as written, reads the
    tagged release from the Hub (the double)."""
    from misi_bench.builder.core.constants import DEFAULT_HUB_REPO

    double, folder, _commit, root = release
    card = double.files_at(REPO, TAG)["README.md"].decode()
    load = _code_blocks(card, "python")
    assert load and f'load_dataset("{REPO}", "rotation", split="test", revision="{TAG}")' in load[0]
    shell = "\n".join(_code_blocks(card, "bash"))
    assert f"MISI_BENCH_REPO={REPO} MISI_BENCH_REVISION={TAG} misi-bench lmms-eval" in shell
    assert f"misi-bench score --dataset {REPO} --revision {TAG} --predictions" in shell
    assert DEFAULT_HUB_REPO not in card and f"Dataset version: **{TAG}**" in card
    manifest = json.loads((folder / "manifest.json").read_text())
    script = load[0] + "\nprint('ROWS', len(ds), ds[0]['id'])\n"
    env = {
        k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")
    }
    env.update(HF_ENDPOINT=double.endpoint, HF_HOME=str(root / "hf_home"), NO_PROXY="127.0.0.1")
    ran = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                         timeout=300)  # fmt: skip
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert f"ROWS {manifest['counts']['rotation']['test']} rotation-" in ran.stdout


def test_dry_run_prints_the_staged_card_head_and_warns_for_a_small_sample_build(release, capsys):
    """`push --dry-run` stages the card a push would send and prints its head and snippets
    (repo and tag of this push), warns that the build is the sample set with fewer test
    complexes than the threshold, and sends nothing."""
    import argparse

    double, folder, _commit, _root = release
    before = len(double.requests)
    args = argparse.Namespace(folder=str(folder), repo="me/misi", tag="v2.0.0", revision=None,
                              private=False, dry_run=True)  # fmt: skip
    assert hub.cli_push(args) == 0
    out = capsys.readouterr().out
    assert len(double.requests) == before  # a dry run contacts nothing
    assert "# MiSI-Bench: microscopic spatial intelligence" in out
    assert "Dataset version: **v2.0.0** (tag `v2.0.0` of `me/misi`)" in out
    assert 'load_dataset("me/misi", "rotation", split="test", revision="v2.0.0")' in out
    assert "MISI_BENCH_REPO=me/misi MISI_BENCH_REVISION=v2.0.0 misi-bench lmms-eval" in out
    assert "misi-bench score --dataset me/misi --revision v2.0.0" in out
    warnings = [x for x in out.splitlines() if x.startswith("WARNING: ")]
    manifest = json.loads((folder / "manifest.json").read_text())
    n_test = manifest["complexes"]["test"]
    assert n_test < hub.MIN_RELEASE_TEST_COMPLEXES
    assert any("embedded sample set" in w for w in warnings), warnings
    assert any(f"{n_test} test complexes (fewer than 100" in w for w in warnings), warnings
    assert "v2.0.0" not in (folder / "README.md").read_text()  # the folder is never edited


def test_release_warnings_threshold():
    """Only the sample set and builds under the threshold are warned about."""
    big = {"source": "/data/pdbbind", "complexes": {"train": 3000, "test": 400}}
    assert hub.release_warnings(big, "v1.0.0") == []
    small = {**big, "complexes": {"train": 30, "test": hub.MIN_RELEASE_TEST_COMPLEXES - 1}}
    (note,) = hub.release_warnings(small, "v1.0.0")
    assert note.startswith("release v1.0.0 has 99 test complexes")
    edge = {**big, "complexes": {"train": 30, "test": hub.MIN_RELEASE_TEST_COMPLEXES}}
    assert hub.release_warnings(edge, None) == []
    (note,) = hub.release_warnings({**big, "source": "samples"}, None)
    assert "this push is the embedded sample set (3400 complexes)" in note


def test_human_session_lines_carry_the_provenance(release, tmp_path):
    """Fast sibling of the app test: a session given the dataset's record writes it into each
    answer line, and `score` reads the line's config hash as the predictions' build."""
    from misi_bench.builder.scoring import read_predictions
    from misi_bench.eval_plugins.common import dataset_provenance, gold_by_id
    from misi_bench.eval_plugins.human.session import Session, load_questions

    _double, folder, _commit, _root = release
    record = dataset_provenance(str(folder))
    questions = load_questions(folder, "tiny")
    session = Session(questions, "tester", tmp_path, "tiny", provenance=record)
    first = questions[0]
    session.record(first.id, gold_by_id(folder, splits=("tiny",))[first.id], 1.0)
    (line,) = [json.loads(x) for x in (tmp_path / "tester.jsonl").read_text().splitlines()]
    assert line["dataset"] == str(folder.resolve()) and line["revision"] is None
    assert line["config_hash"] == record.config_hash is not None
    assert read_predictions(tmp_path / "tester.jsonl").builds == (record.config_hash,)


ROOT = Path(__file__).resolve().parent.parent


def _release_commands() -> list[list[str]]:
    """The command lines of docs/releasing.md's bash blocks (comments and a trailing & cut)."""
    import shlex

    text = (ROOT / "docs" / "releasing.md").read_text(encoding="utf-8")
    lines = []
    for block in _code_blocks(text, "bash"):
        for line in block.splitlines():
            words = shlex.split(line.split(" #", 1)[0].rstrip(" &"))
            if words:
                lines.append(words)
    return lines


def test_every_misi_bench_command_of_the_release_guide_parses():
    """Each `misi-bench ...` line of docs/releasing.md names a command and options that exist
    (the guide was also run end to end against the Hub double; see the report of issue 40)."""
    from misi_bench.builder.cli.main import build_parser
    from misi_bench.eval_plugins.cli import EVAL_COMMANDS

    commands = [w for w in _release_commands() if w[0] == "misi-bench"]
    names = {w[1] for w in commands}
    assert {"build", "validate", "audit", "push", "serve-mock", "eval", "score"} <= names
    for words in commands:
        try:
            args = build_parser(EVAL_COMMANDS).parse_args(words[1:])
        except SystemExit as exc:  # --version prints and exits 0; a bad option exits 2
            assert exc.code == 0 and words[1:] == ["--version"], words
            continue
        assert callable(args.func), words
    pushes = [w for w in commands if w[1] == "push"]
    assert any("--dry-run" in w for w in pushes) and any("--dry-run" not in w for w in pushes)
    assert all("--tag" in w for w in pushes)
    others = {w[0] for w in _release_commands()} - {"misi-bench"}
    assert others <= {"hf", "git", "kill", "python"}, others


def test_changelog_has_an_unreleased_section_and_every_builder_version():
    from misi_bench.builder.core.constants import BUILDER_VERSION

    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = [x for x in text.splitlines() if x.startswith("## ")]
    assert headings[0] == "## Unreleased"
    major, minor, patch = (int(x) for x in BUILDER_VERSION.split("."))
    assert major == 0 and patch == 0  # the history below is 0.1.0 ... 0.N.0
    for k in range(1, minor + 1):
        assert f"**builder 0.{k}.0**" in text, f"CHANGELOG.md: no line for builder 0.{k}.0"


def test_score_reads_the_tags_stored_baselines(release):
    """The build's baselines.json (T5/T6's options-only answers) is read from the tag for a Hub
    --dataset, as from the folder for a local one."""
    double, folder, _commit, root = release
    code = (
        "import json, sys; from misi_bench.builder.dataset.hub_probe import stored_baselines; "
        f"print(json.dumps(stored_baselines({REPO!r}, {TAG!r}), sort_keys=True))"
    )
    env = {
        k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")
    }
    env.update(HF_ENDPOINT=double.endpoint, HF_HOME=str(root / "hf_home"), NO_PROXY="127.0.0.1")
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=120)  # fmt: skip
    assert ran.returncode == 0, ran.stderr[-2000:]
    local = json.loads((folder / "baselines.json").read_text())
    assert local and json.loads(ran.stdout) == local


def test_eval_refuses_a_revision_of_a_local_folder(release, tmp_path):
    from misi_bench.builder.core.errors import MisiError
    from misi_bench.eval_plugins.api.data import QuestionSource

    import misi_bench

    _double, folder, _commit, _root = release
    with pytest.raises(MisiError, match="is a local folder"):
        QuestionSource(str(folder), TAG)
    args = ["eval", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--dataset",
            str(folder), "--revision", TAG, "--out", str(tmp_path / "run")]  # fmt: skip
    assert misi_bench.main(args) == 2
    assert not (tmp_path / "run").exists()
