"""Bounded reads of prediction files from someone else (issue 31 item 3): every limit is one
line naming the file and the limit, found before anything big is allocated; a formula cell of a
workbook is read as the text that was written, not as its cached value."""

from __future__ import annotations

import json
import time
import tracemalloc
import zipfile

import pytest
from misi_bench.builder.scoring import PredictionFileError, read_predictions
from misi_bench.builder.scoring import predictions as predictions_module
from misi_bench.builder.scoring import xlsx as xlsx_module
from misi_bench.builder.scoring.xlsx import read_xlsx_rows

_NS = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
_R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"


def write_xlsx(path, sheet_rows: str, shared: list[str] | None = None) -> None:
    """A minimal workbook with one sheet whose ``<sheetData>`` is ``sheet_rows`` (the parts a
    spreadsheet program writes, by hand, so that a test can plant what a program would not)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as book:
        book.writestr(
            "xl/workbook.xml",
            f'<workbook {_NS} xmlns:r="{_R}"><sheets>'
            '<sheet name="s" sheetId="1" r:id="rId1"/></sheets></workbook>',
        )
        book.writestr(
            "xl/_rels/workbook.xml.rels",
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            '<Relationship Id="rId1" Target="worksheets/sheet1.xml" Type="x"/></Relationships>',
        )
        if shared is not None:
            items = "".join(f"<si><t>{s}</t></si>" for s in shared)
            book.writestr("xl/sharedStrings.xml", f"<sst {_NS}>{items}</sst>")
        book.writestr(
            "xl/worksheets/sheet1.xml",
            f"<worksheet {_NS}><sheetData>{sheet_rows}</sheetData></worksheet>",
        )


HEADER = '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row>'


def test_crafted_far_row_is_refused_before_allocating(tmp_path):
    """Issue 31: a 1 KB workbook with r="300000000" took 3.8 GB; now it is one line, at once."""
    path = tmp_path / "model_MiSI.xlsx"
    write_xlsx(
        path,
        HEADER + '<row r="300000000"><c r="A300000000" t="s"><v>0</v></c></row>',
        ["id", "prediction"],
    )
    assert path.stat().st_size < 2000
    tracemalloc.start()
    start = time.perf_counter()
    with pytest.raises(PredictionFileError) as err:
        read_predictions(path)
    elapsed = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    text = str(err.value)
    assert str(path) in text and "300000000" in text and str(xlsx_module.MAX_ROWS) in text
    assert "\n" not in text
    assert elapsed < 2 and peak < 20_000_000


def test_far_column_and_wide_sheet_are_refused(tmp_path):
    path = tmp_path / "wide.xlsx"
    write_xlsx(path, HEADER + '<row r="2"><c r="ZZZZ2" t="s"><v>0</v></c></row>', ["id", "p"])
    with pytest.raises(PredictionFileError, match=f"{xlsx_module.MAX_COLUMNS} columns"):
        read_predictions(path)
    # every row as wide as the widest: 1,000,000 rows x 16,000 columns is refused up front
    write_xlsx(
        path,
        '<row r="1"><c r="WZZ1" t="s"><v>0</v></c></row>'
        '<row r="1000000"><c r="A1000000" t="s"><v>0</v></c></row>',
        ["x"],
    )
    with pytest.raises(PredictionFileError, match=f"limit of {xlsx_module.MAX_CELLS} cells"):
        read_predictions(path)


def test_part_size_limit(tmp_path, monkeypatch):
    path = tmp_path / "big.xlsx"
    write_xlsx(path, HEADER + '<row r="2"><c r="A2" t="s"><v>0</v></c></row>', ["id", "p"])
    monkeypatch.setattr(xlsx_module, "MAX_PART_BYTES", 100)
    with pytest.raises(PredictionFileError, match="over the limit of 100") as err:
        read_predictions(path)
    assert str(path) in str(err.value)


def test_formula_cell_is_its_text_not_its_cached_value(tmp_path):
    """openpyxl (so pandas and VLMEvalKit) writes an answer that begins with ``=`` as a formula
    whose cached value a spreadsheet program may fill in ("0"): the answer is the formula."""
    path = tmp_path / "model_MiSI.xlsx"
    write_xlsx(
        path,
        HEADER
        + '<row r="2"><c r="A2" t="s"><v>2</v></c><c r="B2"><f>move x 3</f><v>0</v></c></row>'
        + '<row r="3"><c r="A3" t="s"><v>3</v></c><c r="B3" t="str"><f>A1</f><v>id</v></c></row>',
        ["id", "prediction", "t1-0", "t1-1"],
    )
    got = read_predictions(path)
    assert dict(got.predictions) == {"t1-0": "=move x 3", "t1-1": "=A1"}
    # a shared formula cell has no text of its own: refused, not read as its cached value
    write_xlsx(
        path,
        HEADER + '<row r="2"><c r="A2" t="s"><v>2</v></c><c r="B2"><f t="shared" si="0"/>'
        "<v>0</v></c></row>",
        ["id", "prediction", "t1-0"],
    )
    with pytest.raises(PredictionFileError, match="cell B2 holds a shared formula"):
        read_predictions(path)


def test_formula_cell_matches_openpyxl(tmp_path):
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    book.active.append(["id", "prediction"])
    book.active.append(["t1-0", "=move x 3"])  # openpyxl stores this as a formula
    path = tmp_path / "p.xlsx"
    book.save(path)
    expected = [
        list(r)
        for r in openpyxl.load_workbook(path, read_only=True).active.iter_rows(values_only=True)
    ]
    assert read_xlsx_rows(path) == expected == [["id", "prediction"], ["t1-0", "=move x 3"]]


def test_jsonl_line_and_file_limits(tmp_path, monkeypatch):
    path = tmp_path / "p.jsonl"
    long = json.dumps({"id": "a", "prediction": "x" * 500})
    path.write_text(json.dumps({"id": "b", "prediction": "A"}) + "\n" + long + "\n")
    monkeypatch.setattr(predictions_module, "MAX_LINE_CHARS", 200)
    with pytest.raises(PredictionFileError) as err:
        read_predictions(path)
    assert str(err.value) == (
        f"{path}: line 2 has {len(long)} characters, over the limit of 200 for one entry"
    )
    monkeypatch.setattr(predictions_module, "MAX_FILE_BYTES", 100)
    with pytest.raises(PredictionFileError, match="over the limit of 100 bytes") as err:
        read_predictions(path)
    assert str(path) in str(err.value)
    table = tmp_path / "p.tsv"
    table.write_text("id\tprediction\n" + "a\tA\n" * 30)
    with pytest.raises(PredictionFileError, match="over the limit of 100 bytes"):
        read_predictions(table)


def test_csv_field_limit_is_one_line(tmp_path):
    import csv

    path = tmp_path / "p.csv"
    path.write_text('id,prediction\na,"' + "x" * (csv.field_size_limit() + 10) + '"\n')
    with pytest.raises(PredictionFileError) as err:
        read_predictions(path)
    text = str(err.value)
    assert str(path) in text and str(csv.field_size_limit()) in text and "\n" not in text


def test_deep_json_nesting_is_an_unreadable_entry(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({"id": "a", "prediction": "A"}) + "\n" + "[" * 100_000 + "\n")
    got = read_predictions(path)
    assert dict(got.predictions) == {"a": "A"} and got.bad_entries == ("line 2: not JSON",)
    path.write_text("[" * 100_000)
    with pytest.raises(PredictionFileError, match="no usable prediction"):
        read_predictions(path)


def test_no_prediction_field_names_the_fields(tmp_path):
    """Issue 33: {"id", "response"} entries scored every task 0 and exited 0."""
    path = tmp_path / "p.jsonl"
    path.write_text(
        "".join(json.dumps({"id": f"t1-{i}", "response": "A"}) + "\n" for i in range(3))
    )
    with pytest.raises(PredictionFileError) as err:
        read_predictions(path)
    assert str(err.value) == (
        f"{path}: no entry has a 'prediction' field (the first has the fields "
        "['id', 'response']); each entry needs 'id' and 'prediction'"
    )
