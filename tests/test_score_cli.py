"""``misi-bench score`` as a user runs it (issue 33 items 1, 2, 5; issue 30 item 7): one-line
refusals for unusable inputs, --strict, --per-item, prediction folders (lmms-eval
--log_samples, VLMEvalKit work dirs, eval runs), the build's config hash, one % scale."""

from __future__ import annotations

import json

import pytest

from test_cli import cli


@pytest.fixture
def built(cli_build):
    """The session's command-line build (``conftest.cli_build``: four samples; rotation,
    interaction_location, pocket_ligand), shared with test_cli."""
    return cli_build


def rows_of(built, config):
    from misi_bench.builder.store.parquet import iter_config_rows

    rows = list(iter_config_rows(built, config, "test", ["id", "answer"]))
    assert len(rows) >= 2
    return rows


def score(built, *args):
    return cli("score", "--dataset", str(built), "--no-baselines", *args)


def one_error_line(out, *words):
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2, out.stdout[-1500:] + out.stderr[-1500:]
    assert lines[-1].startswith("misi-bench: error:") and "Traceback" not in out.stderr
    for word in words:
        assert word in lines[-1], lines[-1]
    return lines[-1]


def test_unusable_inputs_are_one_line(built, tmp_path):
    rows = rows_of(built, "rotation")
    wrong_key = tmp_path / "resp.jsonl"
    wrong_key.write_text("".join(json.dumps({"id": r["id"], "response": "A"}) + "\n" for r in rows))
    one_error_line(
        score(built, "--predictions", str(wrong_key)),
        "no entry has a 'prediction' field",
        "'response'",
    )
    one_line = tmp_path / "one.json"
    one_line.write_text(json.dumps({"qid": rows[0]["id"], "answer": "roll x 15"}))
    line = one_error_line(
        score(built, "--predictions", str(one_line), "--configs", "rotation"),
        "none of its 2 keys",
        "'answer', 'qid'",
        "{id: prediction} object",
        str(built),
    )
    build = json.loads((built / "manifest.json").read_text())["config_hash"]
    assert f"(build {build})" in line
    assert "first id" not in line
    ok = tmp_path / "ok.jsonl"
    ok.write_text(
        "".join(json.dumps({"id": r["id"], "prediction": r["answer"]}) + "\n" for r in rows)
    )
    one_error_line(
        score(built, "--predictions", str(ok), "--configs", "rotaton"), "did you mean rotation?"
    )
    one_error_line(
        cli("score", "--dataset", str(tmp_path / "nope"), "--predictions", str(ok)),
        f"--dataset {tmp_path / 'nope'}: no such folder",
    )
    one_error_line(
        score(built, "--predictions", str(tmp_path / "none.jsonl")),
        "none.jsonl: cannot read predictions (no such file or folder)",
    )
    empty = tmp_path / "empty_dir"
    empty.mkdir()
    one_error_line(score(built, "--predictions", str(empty)), "a folder without prediction files")


def test_strict_missing_and_per_item(built, tmp_path):
    rows = rows_of(built, "rotation")
    preds = tmp_path / "p.jsonl"
    preds.write_text(
        json.dumps({"id": rows[0]["id"], "prediction": "Answer: **roll x 15** I think"})
        + "\n"
        + "".join(json.dumps({"id": r["id"], "prediction": r["answer"]}) + "\n" for r in rows[2:])
    )
    per_item = tmp_path / "items.jsonl"
    out = score(
        built,
        "--predictions",
        str(preds),
        "--configs",
        "rotation",
        "--per-item",
        str(per_item),
        "--json-out",
        str(tmp_path / "r.json"),
    )
    assert out.returncode == 0, out.stderr
    assert "have no prediction and score 0" in out.stderr.strip().splitlines()[-1]
    assert "--strict" in out.stderr.strip().splitlines()[-1]
    items = [json.loads(line) for line in per_item.read_text().splitlines()]
    assert [i["id"] for i in items] == [r["id"] for r in rows]
    first = items[0]
    assert first["gold"] == rows[0]["answer"] and first["prediction"].startswith("Answer:")
    assert first["read_as"] == "roll x 15" and first["missing"] is False
    assert 0 <= first["score"] < 1 and "exact" in first["parts"]
    assert items[1]["missing"] is True and items[1]["score"] == 0 and items[1]["read_as"] is None
    assert all(i["score"] == 1.0 for i in items[2:])
    manifest = json.loads((built / "manifest.json").read_text())
    assert {i["config_hash"] for i in items} == {manifest["config_hash"]}
    report = json.loads((tmp_path / "r.json").read_text())
    assert [i["read_as"] for i in report["per_item"]] == [i["read_as"] for i in items]
    assert report["config_hash"] == manifest["config_hash"]
    # one % scale: the model's table is in % like the paper's rows
    task_score = report["report"]["tasks"]["rotation"]["score"]
    assert f"| rotation | {len(rows)} | {100 * task_score:.2f} |" in out.stdout
    assert "| task | n | score % | exact % |" in out.stdout
    strict = score(built, "--predictions", str(preds), "--configs", "rotation", "--strict")
    one_error_line(strict, f"1 of {len(rows)} questions have no prediction", "--strict")


def test_prediction_recorded_for_another_build_warns(built, tmp_path):
    rows = rows_of(built, "rotation")
    preds = tmp_path / "p.jsonl"
    preds.write_text(
        "".join(
            json.dumps({"id": r["id"], "prediction": r["answer"], "config_hash": "0" * 16}) + "\n"
            for r in rows
        )
    )
    out = score(
        built,
        "--predictions",
        str(preds),
        "--configs",
        "rotation",
        "--json-out",
        str(tmp_path / "r.json"),
    )
    assert out.returncode == 0, out.stderr
    warn = [line for line in out.stderr.splitlines() if "recorded for build" in line]
    assert len(warn) == 1 and "0" * 16 in warn[0] and str(built) in warn[0]
    manifest = json.loads((built / "manifest.json").read_text())
    same = tmp_path / "same.jsonl"
    same.write_text(preds.read_text().replace("0" * 16, manifest["config_hash"]))
    out = score(
        built,
        "--predictions",
        str(same),
        "--configs",
        "rotation",
        "--json-out",
        str(tmp_path / "r.json"),
    )
    assert out.returncode == 0 and "recorded for build" not in out.stderr


def test_lmms_eval_log_samples_folder(built, tmp_path):
    """A folder of lmms-eval --log_samples files (nested under the model name, as lmms-eval
    writes them), one per config, each matched to its own config's rows; an older run's file of
    the same config is passed over with a note."""
    folder = tmp_path / "results" / "org__model"
    folder.mkdir(parents=True)
    expected = {}
    for config in ("rotation", "pocket_ligand"):
        rows = rows_of(built, config)
        lines = [
            {"doc_id": i, "target": r["answer"], "filtered_resps": [r["answer"]]}
            for i, r in enumerate(rows)
        ]
        (folder / f"20260102_samples_misi_{config}.jsonl").write_text(
            "".join(json.dumps(x) + "\n" for x in lines)
        )
        expected[config] = len(rows)
    (folder / "20250101_samples_misi_rotation.jsonl").write_text(
        json.dumps({"doc_id": 0, "target": "nothing", "filtered_resps": ["A"]}) + "\n"
    )
    (folder / "20260102_results.json").write_text('{"results": {}}')
    out = score(
        built, "--predictions", str(tmp_path / "results"), "--json-out", str(tmp_path / "r.json")
    )
    assert out.returncode == 0, out.stderr
    assert "passed over 1 older file(s) (20250101_samples_misi_rotation.jsonl)" in out.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    tasks = report["report"]["tasks"]
    assert {t: tasks[t]["n"] for t in tasks} == expected
    assert all(tasks[t]["score"] == 1.0 for t in tasks) and report["missing"] == []
    assert report["prediction_file_shape"] == "lmms-eval-folder"
    # --configs narrows a folder to those configs' files
    out = score(
        built,
        "--predictions",
        str(tmp_path / "results"),
        "--configs",
        "pocket_ligand",
        "--json-out",
        str(tmp_path / "r2.json"),
    )
    assert out.returncode == 0, out.stderr
    assert "config rotation is not selected" in out.stderr
    narrowed = json.loads((tmp_path / "r2.json").read_text())["report"]["tasks"]
    assert list(narrowed) == ["pocket_ligand"] and narrowed["pocket_ligand"]["score"] == 1.0
    # a second model's run beside the first: refused with both names, not mixed in by date
    other = tmp_path / "results" / "org__other"
    other.mkdir()
    (other / "20270101_samples_misi_rotation.jsonl").write_text(
        json.dumps({"doc_id": 0, "target": "x", "filtered_resps": ["A"]}) + "\n"
    )
    for where, model in ((folder, "org/model"), (other, "org/other")):
        config = {"model": "qwen2_5_vl", "model_args": f"pretrained={model}"}
        name = "20260102_results.json" if where == folder else "20270101_results.json"
        (where / name).write_text(json.dumps({"config": config}))
    out = score(built, "--predictions", str(tmp_path / "results"))
    one_error_line(out, "holds the logs of 2 models", "(org/model)", "(org/other)")


def test_vlmevalkit_work_dir(built, tmp_path):
    rows = rows_of(built, "rotation")
    work = tmp_path / "outputs" / "MyModel"
    work.mkdir(parents=True)
    # VLMEvalKit keeps the dataset's columns in its table, the build's config_hash among them
    table = "index\tid\tprediction\tconfig_hash\n" + "".join(
        f"{i}\t{r['id']}\t{r['answer']}\tfeedc0de\n" for i, r in enumerate(rows)
    )
    (work / "MyModel_MiSI_rotation.tsv").write_text(table)
    (work / "MyModel_MiSI_rotation_score.tsv").write_text("index\tscore\n0\t1\n")
    (work / "MyModel_MiSI_rotation_tiny.tsv").write_text("index\tid\tprediction\n0\tx\tA\n")
    out = score(
        built,
        "--predictions",
        str(tmp_path / "outputs"),
        "--configs",
        "rotation",
        "--json-out",
        str(tmp_path / "r.json"),
    )
    assert out.returncode == 0, out.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["report"]["tasks"]["rotation"]["score"] == 1.0 and report["missing"] == []
    assert report["prediction_file_shape"] == "vlmevalkit-folder"
    assert "another split than test (MyModel_MiSI_rotation_tiny.tsv)" in out.stderr
    assert (
        report["prediction_builds"] == ["feedc0de"] and "recorded for build feedc0de" in out.stderr
    )


def test_inspect_unknown_sample_lists_the_samples():
    from misi_bench.builder.chemistry.samples import sample_refs

    out = cli("inspect", "sample:9xyz")
    line = one_error_line(out, "sample:9xyz: no such embedded sample")
    assert all(r.pdb_id in line for r in sample_refs())


def test_one_version_label_for_version_card_and_manifest(built):
    """Issue 33: `--version`, the card and the manifest showed three unlabelled versions; now
    each shows :func:`version_label` (package, builder, templates, each named)."""
    from misi_bench.builder.core.constants import BUILDER_VERSION, PACKAGE_VERSION, version_label

    manifest = json.loads((built / "manifest.json").read_text())
    assert manifest["misi_bench_version"] == PACKAGE_VERSION
    assert manifest["builder_version"] == BUILDER_VERSION
    templates = manifest["config"]["template_version"]
    label = version_label(PACKAGE_VERSION, BUILDER_VERSION, templates)
    assert label in (built / "README.md").read_text()
    out = cli("--version")
    assert out.returncode == 0 and out.stdout.count("\n") == 1
    assert out.stdout.startswith(version_label(PACKAGE_VERSION, BUILDER_VERSION, templates))
    assert "(paper)" in out.stdout and "(explicit)" in out.stdout


def test_unreachable_hub_is_one_line_after_a_short_wait(tmp_path):
    """A Hub repo id on a machine that cannot reach the Hub: one line, not a retry loop. The
    Hub endpoint is pointed at a closed local port (no remote service is involved)."""
    import os
    import subprocess
    import sys
    import time

    preds = tmp_path / "p.jsonl"
    preds.write_text(json.dumps({"id": "a", "prediction": "A"}) + "\n")
    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_OFFLINE"}
    env.update(HF_ENDPOINT="http://127.0.0.1:9", HF_HOME=str(tmp_path / "hf"))
    start = time.monotonic()
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from misi_bench import main; sys.exit(main(sys.argv[1:]))",
            "score",
            "--dataset",
            "someone/some-bench",
            "--predictions",
            str(preds),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert time.monotonic() - start < 60
    one_error_line(out, "--dataset someone/some-bench: the Hub did not answer", "HF_HUB_OFFLINE=1")
