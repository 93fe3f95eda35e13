"""Bombs in files from someone else (issue 39), each fed as a real file: a gzip "pocket" of a
real complex that unpacks far past the limit (a recorded skip; the build goes on), a raw
entry download that is such a bomb, a 242 KB workbook of 62 M cells in one row, a predictions
file of too many entries or too many bytes, and a predictions file of thousands of unknown ids
(the summary lists twenty and a count). Each refusal is one line naming the file and the limit,
found before the bomb is held (``tracemalloc`` peaks)."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import tracemalloc
import zipfile
import zlib
from pathlib import Path

import pytest
from misi_bench.builder.chemistry import files
from misi_bench.builder.chemistry.structure import read_pdbbind_dir
from misi_bench.builder.core.errors import InputTooLarge
from misi_bench.builder.dataset.archive import check_entry_bytes
from misi_bench.builder.dataset.build import build_dataset
from misi_bench.builder.scoring import PredictionFileError, read_predictions
from misi_bench.builder.scoring import predictions as predictions_module
from misi_bench.builder.scoring import xlsx as xlsx_module

from cli_support import CLI
from test_prediction_bounds import write_xlsx


def _gzip_bomb(head: bytes, unpacked: int) -> bytes:
    """``head`` (a real file's text) followed by REMARK lines until ``unpacked`` bytes, gzipped
    (a real pocket file in front: the reader sees a real structure until it sees the bomb)."""
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)  # a gzip stream
    parts = [comp.compress(head)]
    filler = b"REMARK 999 padding" + b" " * 61 + b"\n"
    block = filler * (1 << 14)
    for _ in range(max(1, (unpacked - len(head)) // len(block))):
        parts.append(comp.compress(block))
    parts.append(comp.flush())
    return b"".join(parts)


def _peak(fn) -> tuple[object, int]:
    tracemalloc.start()
    try:
        try:
            result = fn()
        except Exception as exc:  # noqa: BLE001 (the refusal is the result under test)
            result = exc
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _sample_dir(sample_refs, pdb_id="1a28") -> Path:
    return next(r.path for r in sample_refs if r.pdb_id == pdb_id)


def test_a_gzip_bomb_pocket_is_refused_while_unpacking(sample_refs, tmp_path, monkeypatch):
    """A real pocket gzipped with 64 MB of padding (limit set to 8 MB for the test, 512 MB in
    use): refused with InputTooLarge after unpacking just past the limit, never held whole."""
    monkeypatch.setattr(files, "MAX_FILE_BYTES", 8 * 1024 * 1024)
    folder = tmp_path / "1a28"
    shutil.copytree(_sample_dir(sample_refs), folder)
    pocket = folder / "1a28_pocket.pdb"
    bomb = _gzip_bomb(pocket.read_bytes(), 64 * 1024 * 1024)
    pocket.write_bytes(bomb)
    assert len(bomb) < 300_000
    err, peak = _peak(lambda: read_pdbbind_dir(folder))
    assert isinstance(err, InputTooLarge), err
    text = str(err)
    assert str(pocket) in text and "unpacks to over 8,388,608 bytes" in text and "\n" not in text
    assert peak < 3 * 8 * 1024 * 1024  # the limit and a chunk, not the 64 MB
    # the same file gzipped without padding is read as before
    pocket.write_bytes(gzip.compress((_sample_dir(sample_refs) / "1a28_pocket.pdb").read_bytes()))
    assert read_pdbbind_dir(folder).pdb_id == "1a28"


def test_a_build_with_a_bomb_records_a_skip_and_goes_on(sample_refs, tmp_path, monkeypatch):
    monkeypatch.setattr(files, "MAX_FILE_BYTES", 8 * 1024 * 1024)
    root = tmp_path / "pdbbind"
    for ref in sample_refs[:4]:
        shutil.copytree(ref.path, root / ref.pdb_id)
    bombed = sample_refs[1].pdb_id
    pocket = next((root / bombed).glob("*_pocket.pdb"))
    pocket.write_bytes(_gzip_bomb(pocket.read_bytes(), 32 * 1024 * 1024))
    manifest = build_dataset(
        source=root, out=tmp_path / "out", tasks=["rotation"], workers=1, progress=False
    )
    assert "unpacks to over" in manifest["skipped_complexes"][bombed]
    assert manifest["complexes"]["total"] == 4
    assert sum(manifest["counts"]["rotation"].values()) > 0


def test_a_downloaded_bomb_is_refused_by_the_archive_check(monkeypatch):
    monkeypatch.setattr("misi_bench.builder.dataset.archive.MAX_FILE_BYTES", 32 * 1024 * 1024)
    bomb = _gzip_bomb(b"data_1ABC\n#\n", 64 * 1024 * 1024)
    problem, peak = _peak(lambda: check_entry_bytes(bomb))
    assert "unpacks to over 33,554,432 bytes" in problem
    assert peak < 8 * 1024 * 1024  # chunks are thrown away: a few chunks, not the limit
    assert check_entry_bytes(gzip.compress(b"data_1ABC\n#\n")) is None


def _row_bomb(path: Path, cells: int) -> None:
    """A workbook whose one row holds ``cells`` empty cells (62 M: 242 KB zipped)."""
    ns = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
    write_xlsx(path, "", ["id", "prediction"])
    with zipfile.ZipFile(path, "a", zipfile.ZIP_DEFLATED, compresslevel=9) as book:
        with book.open("xl/worksheets/sheet2.xml", "w") as fh:
            fh.write(f"<worksheet {ns}><sheetData><row>".encode())
            chunk = b"<c/>" * (1 << 18)
            for _ in range(cells // (1 << 18)):
                fh.write(chunk)
            fh.write(b"</row></sheetData></worksheet>")
    # point the workbook's relation at the bomb sheet (a second, valid part)
    data = {}
    with zipfile.ZipFile(path) as book:
        for name in book.namelist():
            data[name] = book.read(name)
    rels = data["xl/_rels/workbook.xml.rels"].replace(b"sheet1.xml", b"sheet2.xml")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as book:
        for name, blob in data.items():
            if name != "xl/worksheets/sheet1.xml":
                book.writestr(name, rels if name.endswith(".rels") else blob)


def test_a_workbook_of_62m_cells_in_one_row_is_refused_while_streaming(tmp_path):
    """Issue 39: 242 KB, 62 M cells in one row took 5.8 GB. Now the row is refused after its
    16,385th cell, a few MB in."""
    path = tmp_path / "model_MiSI.xlsx"
    _row_bomb(path, 62_000_000)
    assert path.stat().st_size < 400_000
    err, peak = _peak(lambda: read_predictions(path))
    assert isinstance(err, PredictionFileError), err
    text = str(err)
    assert str(path) in text and f"more than {xlsx_module.MAX_COLUMNS} cells" in text
    assert "\n" not in text and peak < 20_000_000


def test_cells_and_shared_strings_past_the_total_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(xlsx_module, "MAX_CELLS", 1000)
    path = tmp_path / "many.xlsx"
    rows = "".join(
        f'<row r="{i}"><c t="s"><v>0</v></c><c t="s"><v>1</v></c></row>' for i in range(1, 600)
    )
    write_xlsx(path, rows, ["id", "prediction"])
    with pytest.raises(PredictionFileError, match="over 1000 cells"):
        read_predictions(path)
    write_xlsx(path, '<row r="1"><c t="s"><v>0</v></c></row>', [f"s{i}" for i in range(1001)])
    with pytest.raises(PredictionFileError, match="more than 1000 shared strings"):
        read_predictions(path)
    rich = "<si>" + "<r><t>x</t></r>" * (xlsx_module.MAX_CELL_PARTS + 1) + "</si>"
    path.unlink()
    write_xlsx(path, '<row r="1"><c t="s"><v>0</v></c></row>', [])
    data = {}
    with zipfile.ZipFile(path) as book:
        data = {n: book.read(n) for n in book.namelist()}
    data["xl/sharedStrings.xml"] = (
        f'<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">{rich}</sst>'
    ).encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as book:
        for name, blob in data.items():
            book.writestr(name, blob)
    with pytest.raises(PredictionFileError, match=f"over {xlsx_module.MAX_CELL_PARTS} elements"):
        read_predictions(path)


def test_predictions_past_the_entry_and_byte_limits_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(predictions_module, "MAX_ENTRIES", 1000)
    path = tmp_path / "many.jsonl"
    path.write_text(
        "".join(json.dumps({"id": f"x-{i}", "prediction": "A"}) + "\n" for i in range(1500))
    )
    with pytest.raises(PredictionFileError, match="more than 1,000 entries") as err:
        read_predictions(path)
    assert str(path) in str(err.value)
    path.write_text("not json\n" * 1500)  # unreadable lines count too: none is kept past it
    with pytest.raises(PredictionFileError, match="more than 1,000 entries"):
        read_predictions(path)
    table = tmp_path / "many.tsv"  # a table streamed row by row, refused past the limit too
    table.write_text("id\tprediction\n" + "".join(f"x-{i}\tA\n" for i in range(1500)))
    with pytest.raises(PredictionFileError, match="more than 1,000 (rows|entries)"):
        read_predictions(table)
    monkeypatch.setattr(predictions_module, "MAX_FILE_BYTES", 10_000)
    big = tmp_path / "big.jsonl"
    big.write_bytes(b" " * 10_001)
    with pytest.raises(PredictionFileError, match="over the limit of 10000 bytes") as err:
        read_predictions(big)
    assert str(big) in str(err.value) and "\n" not in str(err.value)


def test_large_json_lines_are_streamed_and_a_large_list_refused(tmp_path, monkeypatch):
    """Over MAX_WHOLE_JSON_BYTES a JSON Lines file is read a line at a time (memory: what is
    kept, not the file), and a JSON list is refused (it can only be parsed whole)."""
    monkeypatch.setattr(predictions_module, "MAX_WHOLE_JSON_BYTES", 100_000)
    path = tmp_path / "long.jsonl"
    pad = "x" * 2000
    lines = [json.dumps({"id": f"q-{i}", "prediction": "A", "raw": pad}) for i in range(2000)]
    path.write_text("\ufeff" + "\n".join(lines) + "\n")
    assert path.stat().st_size > 4_000_000
    got, peak = _peak(lambda: read_predictions(path))
    assert got.shape == "jsonl" and len(got.predictions) == 2000 and got.predictions["q-7"] == "A"
    assert peak < 2_000_000  # the 4 MB file was never held whole
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps([json.loads(x) for x in lines]))
    with pytest.raises(PredictionFileError, match="write JSON Lines instead"):
        read_predictions(listed)
    monkeypatch.setattr(predictions_module, "MAX_LINE_CHARS", 1000)
    with pytest.raises(
        PredictionFileError, match="line 1 has over 1000 characters, over the limit of 1000"
    ):
        read_predictions(path)


def test_thousands_of_unknown_ids_print_twenty_and_a_count(data_dir, tmp_path):
    rows = [json.dumps({"id": f"nope-{i:05d}", "prediction": "A"}) for i in range(5000)]
    import pyarrow.parquet as pq

    shard = sorted((Path(data_dir) / "translation").glob("test-*.parquet"))[0]
    real = pq.read_table(shard, columns=["id"]).column("id").to_pylist()[0]
    rows.append(json.dumps({"id": real, "prediction": "A"}))
    path = tmp_path / "preds.jsonl"
    path.write_text("\n".join(rows) + "\n")
    proc = subprocess.run(
        [*CLI, "score", "--dataset", str(data_dir), "--predictions", str(path)]
        + ["--configs", "translation", "--no-baselines"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "5000 predictions with unknown ids" in proc.stdout
    summary = json.loads(proc.stdout[proc.stdout.index("\n{") :])
    assert summary["unknown_count"] == 5000 and len(summary["unknown"]) == 20
    assert proc.stdout.count("nope-") == 20 and len(proc.stdout) < 200_000
