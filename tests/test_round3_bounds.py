"""Issue 49, item 5: bounds. A workbook whose header cell is 250 MB is refused after 4 MiB of it
with one short line (before: 262 MB printed to stderr, 1.26 GB held); every value from a
predictions file quoted in a message is cut. The human app's socket bounds are in
``test_round3_sockets.py``."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile

import pytest
from misi_bench.builder.scoring import xlsx as xlsx_module
from misi_bench.builder.scoring.predictions import PredictionFileError, read_predictions

from test_prediction_bounds import _NS, _R, write_xlsx

HEADER_MB = 250


def _huge_header_workbook(path, megabytes: int) -> None:
    """A workbook whose first header cell (a shared string) is ``megabytes`` MB of text,
    streamed into the zip (the test never holds it whole either)."""
    write_xlsx(path, "", [])  # the small parts
    with zipfile.ZipFile(path, "a", zipfile.ZIP_DEFLATED) as book:
        with book.open("xl/sharedStrings2.xml", "w", force_zip64=True) as fh:
            fh.write(f"<sst {_NS}><si><t>".encode())
            block = b"x" * (1 << 20)
            for _ in range(megabytes):
                fh.write(block)
            fh.write(b"</t></si><si><t>prediction</t></si></sst>")
        sheet = (
            f'<worksheet {_NS} xmlns:r="{_R}"><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c>'
            '<c r="B1" t="s"><v>1</v></c></row></sheetData></worksheet>'
        )
        book.writestr("xl/worksheets/sheet2.xml", sheet)
    # point the workbook at the second sheet and shared strings: rename by rewriting the zip
    src = zipfile.ZipFile(path)
    out = path.with_name("huge.xlsx")
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            name = info.filename
            if name in ("xl/sharedStrings.xml", "xl/worksheets/sheet1.xml"):
                continue
            target = {
                "xl/sharedStrings2.xml": "xl/sharedStrings.xml",
                "xl/worksheets/sheet2.xml": "xl/worksheets/sheet1.xml",
            }.get(name, name)
            with src.open(info) as fin, dst.open(target, "w", force_zip64=True) as fout:
                while chunk := fin.read(1 << 20):
                    fout.write(chunk)
    src.close()
    out.replace(path)


def test_a_250_mb_header_cell_is_one_short_line_and_bounded_memory(tmp_path):
    path = tmp_path / "model_MiSI.xlsx"
    _huge_header_workbook(path, HEADER_MB)
    assert zipfile.ZipFile(path).getinfo("xl/sharedStrings.xml").file_size > HEADER_MB << 20
    code = (
        "import sys\n"
        "from misi_bench.builder.scoring.predictions import read_predictions\n"
        "try:\n"
        f"    read_predictions({str(path)!r})\n"
        "except Exception as exc:\n"
        "    print(type(exc).__name__, exc, file=sys.stderr)\n"
        # VmHWM: this process's own peak (ru_maxrss keeps the forking parent's across exec)
        "print([ln for ln in open('/proc/self/status') if ln.startswith('VmHWM')][0].split()[1])\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.stderr.startswith("PredictionFileError"), proc.stderr[:500]
    assert len(proc.stderr) < 400 and proc.stderr.count("\n") == 1, proc.stderr[:500]
    assert f"over {xlsx_module.MAX_TOKEN_BYTES} bytes" in proc.stderr and str(path) in proc.stderr
    peak_mb = int(proc.stdout.split()[-1]) / 1024
    assert peak_mb < 300, peak_mb  # before: 1.26 GB


def test_a_value_just_under_the_bound_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(xlsx_module, "MAX_TOKEN_BYTES", 256 * 1024)
    path = tmp_path / "p.xlsx"
    long = "y" * 200_000
    write_xlsx(
        path,
        '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row>'
        '<row r="2"><c r="A2" t="s"><v>2</v></c><c r="B2" t="s"><v>3</v></c></row>',
        ["id", "prediction", "q-1", long],
    )
    assert read_predictions(path).predictions == {"q-1": long}
    write_xlsx(
        path,
        '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row>',
        ["id", "prediction" + "z" * 400_000],
    )
    with pytest.raises(PredictionFileError, match="over 262144 bytes"):
        read_predictions(path)


def test_values_quoted_in_messages_are_cut(tmp_path):
    path = tmp_path / "p.xlsx"
    write_xlsx(
        path,
        '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row>',
        ["i" * 100_000, "prediction"],
    )
    with pytest.raises(PredictionFileError) as err:
        read_predictions(path)
    assert len(str(err.value)) < 400 and "(100,000 characters)" in str(err.value)
    obj = tmp_path / "p.json"
    obj.write_text(json.dumps({"k" * 50_000: {"nested": 1}}))
    with pytest.raises(PredictionFileError) as err:
        read_predictions(obj)
    assert len(str(err.value)) < 400
