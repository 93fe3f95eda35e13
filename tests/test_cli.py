"""The misi-bench command line, run as a user would (console entry point in a subprocess)."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

EXE = shutil.which("misi-bench")


def cli(*args, cwd=None):
    cmd = (
        [EXE, *args]
        if EXE
        else [
            sys.executable,
            "-c",
            "import sys; from misi_bench import main; sys.exit(main(sys.argv[1:]))",
            *args,
        ]
    )
    return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, timeout=600)


def test_inspect_json_lists_hbonds():
    out = cli("inspect", "sample:1a28", "--json", "--hbonds", "plip")
    assert out.returncode == 0, out.stderr
    info = json.loads(out.stdout)
    assert "GLN 725 NE2 A, O3" in info["hbonds"] and info["hbond_mode"] == "plip"
    assert info["n_ligand_atoms"] == 23 and info["pocket_residues"]


def test_inspect_shows_either_hbond_mode():
    """The default is chimerax; its GLN 725 NE2...O3 pair (3.28 Å, C=O...N 87 degrees) fails the
    ketone acceptor's phi limit (110 - 20 degrees) that the flat plip rule does not have."""
    found = {}
    for mode in ("chimerax", "plip"):
        out = cli("inspect", "sample:1hvr", "--json", "--hbonds", mode)
        assert out.returncode == 0, out.stderr
        found[mode] = json.loads(out.stdout)
    default = json.loads(cli("inspect", "sample:1hvr", "--json").stdout)
    assert default["hbond_mode"] == "chimerax" and default["hbonds"] == found["chimerax"]["hbonds"]
    assert found["chimerax"]["hbonds"] != found["plip"]["hbonds"]
    one_a28 = json.loads(cli("inspect", "sample:1a28", "--json").stdout)
    assert "GLN 725 NE2 A, O3" not in one_a28["hbonds"]


def test_inspect_raw_file_with_ligand(raw_refs):
    ref = raw_refs["1a28"]
    out = cli("inspect", str(ref.path), "--ligand", "STR", "--hbonds", "plip")
    assert out.returncode == 0, out.stderr
    assert "GLN 725 NE2 A, O3" in out.stdout


@pytest.mark.parametrize(
    "args, words",
    [
        (["inspect", "/no/such/file.pdb", "--ligand", "STR"], "no such file"),
        (["inspect", "sample:9xyz"], "no such embedded sample"),
        (["inspect", "sample:1a28", "--hbonds", "pymol"], "unknown H-bond mode 'pymol'"),
    ],
)
def test_errors_are_one_line_without_traceback(args, words):
    out = cli(*args)
    assert out.returncode == 2
    assert words in out.stderr and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_bad_ligand_code_names_the_input(raw_refs):
    out = cli("inspect", str(raw_refs["1a28"].path), "--ligand", "ZZZ")
    assert out.returncode == 2 and "1a28" in out.stderr and "no ligand ZZZ" in out.stderr


def test_render_and_preview(tmp_path):
    png = tmp_path / "v.png"
    out = cli(
        "render", "sample:1hvr", "--view", "left", "--ops", "roll y 30, move x 2", "--out", str(png)
    )
    assert out.returncode == 0, out.stderr
    assert Image.open(png).size == (512, 512)
    bad = cli("render", "sample:1hvr", "--ops", "spin x 3", "--out", str(png))
    assert bad.returncode == 2 and "not an operation" in bad.stderr
    sheet = tmp_path / "s.png"
    out = cli("preview", "sample:1hvr", "--out", str(sheet), "--size", "256")
    assert out.returncode == 0, out.stderr
    w, h = Image.open(sheet).size
    assert w >= 3 * 256 and h >= 2 * 256


@pytest.fixture
def built(cli_build):
    """The session's command-line build (``conftest.cli_build``), shared with test_score_cli."""
    return cli_build


def test_build_takes_configs_and_no_other_spelling():
    """``build --configs`` names the tasks; ``--tasks`` (a spelling that never shipped) and
    ``score --config`` are refused with argparse's usage error, not read as the same option."""
    from misi_bench.builder.cli.dataset_commands import build_options
    from misi_bench.builder.cli.main import build_parser

    def options(*flags):
        return build_options(build_parser().parse_args(["build", "--source", "samples", *flags]))

    assert options("--configs", "rotation", "pocket_ligand").config.tasks == (
        "rotation",
        "pocket_ligand",
    )
    for argv in (
        ["build", "--source", "samples", "--tasks", "rotation"],
        ["score", "--dataset", "d", "--predictions", "p", "--config", "rotation"],
    ):
        with pytest.raises(SystemExit) as exc:
            build_parser().parse_args(argv)
        assert exc.value.code == 2


def test_build_writes_default_folder_that_loads_by_name(built):
    import datasets

    assert built.name == "misi-bench" and (built / "manifest.json").exists()
    ds = datasets.load_dataset(str(built), "rotation", split="test")
    assert len(ds) > 0


def test_validate_command(built):
    out = cli("validate", str(built))
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.strip().splitlines()[-1].startswith("ok:")


def test_score_command_gold_missing_unknown_and_malformed(built, tmp_path):
    from misi_bench.builder.store.parquet import iter_config_rows

    rows = list(iter_config_rows(built, "rotation", "test", ["id", "answer"]))
    preds = tmp_path / "p.jsonl"
    lines = [
        json.dumps({"id": r["id"], "prediction": f"Sure. **Answer:** {r['answer']}"})
        for r in rows[1:]
    ]
    lines += [json.dumps({"id": "nope-1", "prediction": "roll x 15"}), "{not json", ""]
    preds.write_text("\n".join(lines) + "\n")
    report_path = tmp_path / "r.json"
    out = cli(
        "score",
        "--dataset",
        str(built),
        "--predictions",
        str(preds),
        "--configs",
        "rotation",
        "--json-out",
        str(report_path),
    )
    assert out.returncode == 0, out.stderr
    table_rows = [
        line for line in out.stdout.splitlines() if line.startswith("|") and "rotation" in line
    ]
    assert table_rows, out.stdout
    report = json.loads(report_path.read_text())
    assert report["missing"] == [rows[0]["id"]]
    assert report["unknown"] == ["nope-1"]
    assert len(report["unreadable_lines"]) == 1
    score = report["report"]["tasks"]["rotation"]["score"]
    assert score == pytest.approx((len(rows) - 1) / len(rows))


def test_score_command_paper_rows(built, tmp_path):
    """--paper-rows chooses the paper's rows (Tables 1 and 2 with ranks, the build's blind rows
    beside them); an unknown name is an error that lists the names."""
    from misi_bench.builder.store.parquet import iter_config_rows

    rows = list(iter_config_rows(built, "rotation", "test", ["id", "answer"]))
    preds = tmp_path / "p.jsonl"
    preds.write_text(
        "".join(json.dumps({"id": r["id"], "prediction": r["answer"]}) + "\n" for r in rows)
    )
    base = ("score", "--dataset", str(built), "--predictions", str(preds), "--configs", "rotation")
    out = cli(*base, "--paper-rows", "o3,GPT-4.1", "--json-out", str(tmp_path / "r.json"))
    assert out.returncode == 0, out.stderr
    assert "| o3 | 3 | 52.29 | 43.82 |" in out.stdout and "| o3 | 2 | 22.00 | 20.00 |" in out.stdout
    assert "| GPT-4.1 | 7 |" in out.stdout and "| human |" not in out.stdout
    assert "| blind: train's most frequent answer (this build) |" in out.stdout
    assert "| rotation | score_radius | 100.00 | score | 100.00 |" in out.stdout  # paper: steps
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["paper_rows"] == ["o3", "GPT-4.1"]
    assert report["report"]["tasks"]["rotation"]["score_steps"] == 1.0
    bad = cli(*base, "--paper-rows", "human,gpt-9")
    assert bad.returncode == 2
    assert "unknown row 'gpt-9'" in bad.stderr and "Claude Sonnet 4.5, o3" in bad.stderr
    none = cli(*base, "--paper-rows", "none")
    assert none.returncode == 0 and "Table 1, weighted score" not in none.stdout


SCORE_SHAPES = [
    # (case, file name, writer of the file content from the rows, expected exit code, stderr text)
    (
        "JSON list",
        "p.json",
        lambda rows: json.dumps([{"id": r["id"], "prediction": r["answer"]} for r in rows]),
        0,
        "",
    ),
    (
        "id -> prediction object",
        "p.json",
        lambda rows: json.dumps({r["id"]: r["answer"] for r in rows}),
        0,
        "",
    ),
    (
        "JSONL with BOM",
        "p.jsonl",
        lambda rows: (
            "\ufeff"
            + "".join(json.dumps({"id": r["id"], "prediction": r["answer"]}) + "\n" for r in rows)
        ),
        0,
        "",
    ),
    ("empty file", "p.jsonl", lambda rows: "", 2, "the predictions file is empty"),
    (
        "non-object lines only",
        "p.jsonl",
        lambda rows: '3\n[1, 2]\n"text"\n',
        2,
        "no usable prediction",
    ),
    (
        "ids of another dataset",
        "p.jsonl",
        lambda rows: json.dumps({"id": "other-1", "prediction": "A"}) + "\n",
        2,
        "none of its 1 ids is a question",
    ),
]


@pytest.mark.parametrize(
    "case,name,content,code,message", SCORE_SHAPES, ids=[c[0] for c in SCORE_SHAPES]
)
def test_score_command_file_shapes(built, tmp_path, case, name, content, code, message):
    from misi_bench.builder.store.parquet import iter_config_rows

    rows = list(iter_config_rows(built, "rotation", "test", ["id", "answer"]))
    preds = tmp_path / name
    preds.write_text(content(rows), encoding="utf-8")
    out = cli(
        "score",
        "--dataset",
        str(built),
        "--predictions",
        str(preds),
        "--configs",
        "rotation",
        "--json-out",
        str(tmp_path / "r.json"),
    )
    assert out.returncode == code, out.stdout[-2000:] + out.stderr[-2000:]
    if code:
        # one error line, last; before it at most the notice that the file records no build
        lines = out.stderr.strip().splitlines()
        assert lines[-1].startswith("misi-bench: error:") and message in lines[-1], out.stderr
        assert all("notice:" in line and "record no build" in line for line in lines[:-1])
        assert "Traceback" not in out.stderr
    else:
        report = json.loads((tmp_path / "r.json").read_text())
        assert report["report"]["tasks"]["rotation"]["score"] == 1.0 and report["missing"] == []


def test_score_command_reports_duplicates_and_null_predictions(built, tmp_path):
    from misi_bench.builder.store.parquet import iter_config_rows

    rows = list(iter_config_rows(built, "rotation", "test", ["id", "answer"]))
    lines = [
        json.dumps({"id": rows[0]["id"], "prediction": "roll x 90"}),
        json.dumps({"id": rows[0]["id"], "prediction": rows[0]["answer"]}),  # the last entry wins
        json.dumps({"id": rows[1]["id"], "prediction": None}),
    ]
    lines += [json.dumps({"id": r["id"], "prediction": r["answer"]}) for r in rows[2:]]
    preds = tmp_path / "p.jsonl"
    preds.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = cli(
        "score",
        "--dataset",
        str(built),
        "--predictions",
        str(preds),
        "--configs",
        "rotation",
        "--json-out",
        str(tmp_path / "r.json"),
    )
    assert out.returncode == 0, out.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["duplicate_ids"] == [rows[0]["id"]]
    assert report["no_prediction"] == [rows[1]["id"]] and report["missing"] == [rows[1]["id"]]
    assert report["report"]["tasks"]["rotation"]["score"] == pytest.approx(
        (len(rows) - 1) / len(rows)
    )
    assert "1 duplicate ids (last entry used)" in out.stdout
    assert "| paper_average |" in out.stdout and "| average_all_tasks |" in out.stdout


def test_lmms_eval_include_path_is_the_last_line():
    out = cli("lmms-eval", "--print-include-path")
    assert out.returncode == 0, out.stderr
    path = Path(out.stdout.strip().splitlines()[-1])
    assert path.is_dir() and (path / "misi" / "misi_rotation.yaml").is_file(), path


def test_python_dash_m_in_a_checkout_runs_the_command(tmp_path):
    """``python -m misi_bench`` from the checkout root runs the command (its version line)."""
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        [sys.executable, "-m", "misi_bench", "--version"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("misi-bench ")
