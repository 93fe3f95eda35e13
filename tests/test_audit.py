"""The dataset audit on real builds: clean on a fresh build, and it catches a planted ambiguous
question and a corrupted stored image; the build records its sampled audit; the pixel solver."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys

import numpy as np
import pytest
from misi_bench.builder.checks import pixel_solver
from misi_bench.builder.checks.audit import audit_dataset
from misi_bench.builder.store.manifest import read_manifest
from misi_bench.builder.store.parquet import read_rows, write_rows
from PIL import Image, ImageDraw

from card_support import front_matter, sections, tables


def _rewrite(folder, task, split, change) -> str:
    """Apply ``change(rows)`` to the first shard of task/split; returns the changed row's id."""
    path = sorted((folder / task).glob(f"{split}-*.parquet"))[0]
    rows = read_rows(path)
    rid = change(rows)
    write_rows(rows, path)
    return rid


@pytest.fixture(scope="module")
def explicit_dir(explicit_build):
    """An `explicit` build (prompts state the camera distance and field of view) with T1 and T3
    (``conftest.explicit_build``)."""
    return explicit_build


@pytest.fixture()
def copy_dir(data_dir, tmp_path):
    out = tmp_path / "copy"
    shutil.copytree(data_dir, out, ignore=shutil.ignore_patterns(".work"))
    return out


@pytest.mark.slow
def test_fresh_build_audits_clean(data_dir):
    report = audit_dataset(data_dir, split="test")
    assert not report.problems
    for task, result in report.tasks.items():
        assert result.questions > 0, task
        assert (
            result.reproduced == result.questions and not result.mismatched and not result.errors
        ), task
    unique_tasks = [t for t, r in report.tasks.items() if r.checked_unique]
    assert set(unique_tasks) == {
        "translation",
        "rotation",
        "zooming",
        "translation_rotation",
        "rotation_rotation",
        "docking",
        "interaction_location",
    }
    assert all(not report.tasks[t].ambiguous for t in unique_tasks)
    assert report.ok, report.format_text()


def test_build_records_sampled_audit(data_dir):
    audit = read_manifest(data_dir)["audit"]
    assert audit["ok"] and audit["sample_per_config"] >= 1
    assert "seconds" not in audit  # the manifest stays byte-identical between runs
    assert {t["questions"] for t in audit["tasks"].values()} <= set(
        range(1, audit["sample_per_config"] + 1)
    )
    assert all(t["reproduced"] == t["questions"] for t in audit["tasks"].values())


def test_audit_catches_a_corrupted_image(copy_dir):
    def corrupt(rows):
        image = Image.open(io.BytesIO(rows[0]["images"][3]["bytes"])).convert("RGB")
        ImageDraw.Draw(image).rectangle((200, 200, 203, 203), fill=(255, 255, 255))
        buf = io.BytesIO()
        image.save(buf, format="PNG")
        rows[0]["images"][3] = {"bytes": buf.getvalue(), "path": None}
        return rows[0]["id"]

    rid = _rewrite(copy_dir, "translation", "test", corrupt)
    report = audit_dataset(copy_dir, configs=["translation"], split="test")
    assert report.tasks["translation"].mismatched == [rid]
    assert not report.ok


def test_audit_catches_a_planted_ambiguous_question(copy_dir):
    """Option B (or A) of a T6 question becomes a copy of the correct option, operations and
    image alike: every image still reproduces, but the question has two right answers."""

    def plant(rows):
        row = rows[0]
        meta = json.loads(row["metadata"])
        gold = "ABCD".index(row["answer"])
        other = (gold + 1) % 4
        meta["option_operations"][other] = meta["option_operations"][gold]
        row["metadata"] = json.dumps(meta, sort_keys=True, separators=(",", ":"))
        first = len(row["images"]) - 4
        row["images"][first + other] = dict(row["images"][first + gold])
        return row["id"]

    rid = _rewrite(copy_dir, "rotation_rotation", "test", plant)
    report = audit_dataset(copy_dir, configs=["rotation_rotation"], split="test")
    result = report.tasks["rotation_rotation"]
    assert result.reproduced == result.questions
    assert result.ambiguous == [f"{rid} (margin 0)"]
    assert min(result.margins) == 0 and not report.ok


def _cli(*args: str) -> subprocess.CompletedProcess:
    code = "import sys; from misi_bench import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=600
    )


def test_audit_command_json_and_exit_code(data_dir):
    out = _cli(
        "audit",
        str(data_dir),
        "--configs",
        "translation",
        "pocket_ligand",
        "--limit",
        "1",
        "--json",
    )
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert set(summary["tasks"]) == {"translation", "pocket_ligand"}
    assert (
        summary["tasks"]["translation"]["questions"] == 1
        and summary["tasks"]["translation"]["unique"] == 1
    )
    assert _cli("audit", str(data_dir / "missing")).returncode == 2


def test_pixel_solver_reads_t1_from_the_pictures(explicit_dir):
    """Registration answers every T1 question of an explicit build exactly; a corrupted 'after'
    image (a blank one) leaves it nothing to answer."""
    data_dir = explicit_dir
    values = pixel_solver.scores(data_dir, "translation")
    assert values and np.mean(values) >= 0.95
    from misi_bench.builder.store.runner import JobRunner

    with JobRunner(2) as pool:  # the merge's runner: same scores, same order
        assert pixel_solver.scores(data_dir, "translation", pool=pool, limit=11) == values[:11]
    blank = io.BytesIO()
    Image.new("RGB", (512, 512)).save(blank, format="PNG")
    from misi_bench.builder.store.parquet import iter_config_rows

    row = next(iter_config_rows(data_dir, "translation", "test"))
    images = [img["bytes"] for img in row["images"]]
    assert pixel_solver.solve("translation", row["question"], images) == row["answer"]
    assert (
        pixel_solver.solve("translation", row["question"], images[:3] + [blank.getvalue()])
        != row["answer"]
    )


def test_pixel_solver_reads_t3_from_the_pictures(explicit_dir):
    """Depth-aware registration answers every T3 question of an explicit build (whose prompts
    state the camera) exactly; with image 4 replaced by image 1 (nothing moved) the pictures no
    longer show the answer."""
    data_dir = explicit_dir
    from misi_bench.builder.store.parquet import iter_config_rows

    rows = [
        row for split in ("test", "train") for row in iter_config_rows(data_dir, "zooming", split)
    ]
    assert rows
    answers = [pixel_solver.predict(row) for row in rows]
    gold = [row["answer"] for row in rows]
    # Render version 4 places labels over a few more stick pixels: one question (1AFS-001, whose
    # score peak sits at 57.5 A) may round to the next integer; every other answer is exact.
    misses = [(a, g) for a, g in zip(answers, gold) if a != g]
    assert len(misses) <= 1, misses
    for got, want in misses:
        assert abs(float(got.split()[-1]) - float(want.split()[-1])) <= 1, (got, want)
    images = [img["bytes"] for img in rows[0]["images"]]
    assert (
        pixel_solver.solve("zooming", rows[0]["question"], images[:3] + images[:1])
        != rows[0]["answer"]
    )
    # The depth reading: every stick colour of image 1 decodes to one base, band and fog level.
    ident, level = pixel_solver.stick_pixels(pixel_solver.decode(images[0]))
    assert (ident >= 0).sum() > 1000 and level.max() > level[level >= 0].min()


def test_card_lists_the_pixel_baseline(data_dir, explicit_dir):
    def cells(folder):
        card = (folder / "README.md").read_text(encoding="utf-8")
        rows = tables(sections(front_matter(card)[1])["Chance levels on this build"])[0]
        row = next(r for r in rows if r["baseline"].startswith("pixel-only registration"))
        return list(row.values())[1:]

    explicit = cells(explicit_dir)  # columns: T1, T3, T4, T9 (the build's tasks)
    # 12 T3 questions: one miss is 8.3 points (render version 4: 1AFS-001's score peak sits at
    # 57.5 Å and rounds to 58 against 57)
    assert float(explicit[0]) >= 95.0 and float(explicit[1]) >= 90.0
    paper = cells(data_dir)  # the default paper build: T1 by a bond ruler, T3 not answerable
    assert float(paper[0]) >= 85.0
    assert paper[1] == "–"  # T2 is not attempted
    assert float(paper[2]) == 0.0


def test_pixel_baseline_is_registered_with_the_scorer():
    from misi_bench.builder import scoring

    assert (
        pixel_solver.KIND in scoring.IMAGE_BASELINES
        and pixel_solver.KIND not in scoring.BASELINE_KINDS
    )


def test_scorer_loads_without_image_code():
    code = "import sys, misi_bench.builder.scoring; print(sorted(m for m in ('PIL', 'numpy.fft') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_audit_report_is_the_same_for_any_worker_count(data_dir):
    kwargs = dict(configs=["translation", "docking", "residue_ligand"], split="test", limit=2)
    one = audit_dataset(data_dir, workers=1, **kwargs).summary()
    two = audit_dataset(data_dir, workers=2, **kwargs).summary()
    one.pop("seconds"), two.pop("seconds")
    assert one == two and one["tasks"]["docking"]["checked_unique"] == 2


def test_audit_chunks_are_the_rows_the_main_process_used_to_read(data_dir):
    """Workers read their own rows (``audit_rows``): the chunks' rows, in order, are the config's
    rows (all, the first ``limit``, or a ``sample``), each chunk one complex in one row group."""
    import pyarrow.parquet as pq
    from misi_bench.builder.checks.audit import select_rows
    from misi_bench.builder.checks.audit_rows import plan_chunks, read_chunk

    for task, split in (("translation", "test"), ("residue_ligand", "train")):
        for limit, sample in ((None, None), (5, None), (None, 4)):
            chunks = list(plan_chunks(data_dir, task, split, limit, sample, max_rows=3))
            rows = [row for chunk in chunks for row in read_chunk(chunk)]
            assert rows == list(select_rows(data_dir, task, split, limit, sample))
            assert rows and all(1 <= len(c.positions) <= 3 for c in chunks)
            for chunk in chunks:
                group = pq.ParquetFile(chunk.path).read_row_group(chunk.group, columns=["pdb_id"])
                assert len({group.column(0)[k].as_py() for k in chunk.positions}) == 1


def test_audit_in_process_reads_shards_as_they_are_now(copy_dir):
    """A one-worker audit forgets its open shards when it ends: a shard rewritten in place
    since (here: one row's image replaced) is read anew by the next audit in the process."""
    kwargs = dict(configs=["zooming"], split="test", workers=1, checks=("reproduction",))
    assert audit_dataset(copy_dir, **kwargs).ok
    (path,) = sorted((copy_dir / "zooming").glob("test-*.parquet"))
    rows = read_rows(path)
    black = io.BytesIO()
    Image.new("RGB", (512, 512)).save(black, format="PNG")
    rows[0]["images"][0]["bytes"] = black.getvalue()
    write_rows(rows, path)
    assert not audit_dataset(copy_dir, **kwargs).ok


def test_audit_rejects_zero_or_negative_workers(data_dir):
    from misi_bench.builder.core.errors import MisiError

    for bad in (0, -3):
        with pytest.raises(MisiError, match="--workers must be a positive number"):
            audit_dataset(data_dir, workers=bad)
    out = _cli("audit", str(data_dir), "--workers", "0")
    assert out.returncode == 2 and "--workers must be a positive number" in out.stderr


def test_fast_block_means_equal_float_means(data_dir):
    """Integer block sums and the non-black-rows reading give exactly the float32 means the
    margins were defined with, on real pictures and on noise at other block sizes."""
    from misi_bench.builder.checks.audit_checks import block_means, decode, image_block_means
    from misi_bench.builder.store.parquet import iter_config_rows

    def reference(pixels, b):
        hb, wb = pixels.shape[0] // b, pixels.shape[1] // b
        return (
            pixels[: hb * b, : wb * b]
            .reshape(hb, b, wb, b, -1)
            .astype(np.float32)
            .mean(axis=(1, 3))
        )

    row = next(iter_config_rows(data_dir, "docking", "test"))
    pictures = [decode(img["bytes"]) for img in row["images"]]
    noise = np.random.default_rng(0).integers(0, 256, (700, 700, 3), dtype=np.uint8)
    noise[:300] = 0
    for pixels in pictures + [noise]:
        b = max(1, round(8 * pixels.shape[0] / 512))
        want = reference(pixels, b)
        assert np.array_equal(block_means(pixels), want)
        assert np.array_equal(image_block_means(Image.fromarray(pixels)), want)
        top = int(np.flatnonzero(pixels.any(axis=(1, 2)))[0]) if pixels.any() else 0
        part = Image.fromarray(pixels[top:])
        assert np.array_equal(image_block_means(part, top, pixels.shape[0]), want)
