"""Fuzz lane over the prediction readers (issue 31 item 6), bounded in time (``max_examples``,
``deadline``) and in the fast lane: whatever the bytes, a reader either returns what the file
holds or raises :class:`PredictionFileError` with one line naming the file; never another
exception, never a hang."""

from __future__ import annotations

import io
import json
import zipfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from misi_bench.builder.scoring import PredictionFileError, parse_predictions, read_predictions

FUZZ = settings(
    max_examples=80,
    deadline=2000,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    derandomize=True,
)

ids = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12).filter(
    lambda s: s.strip() and s == s.strip()
)
texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=12,
)


def _one_clear_line(err: PredictionFileError, path: str) -> None:
    text = str(err)
    assert text.startswith(path) and "\n" not in text


@FUZZ
@given(st.binary(max_size=400))
def test_any_bytes_as_jsonl(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("fz") / "p.jsonl"
    path.write_bytes(data)
    try:
        got = read_predictions(path)
    except PredictionFileError as err:
        _one_clear_line(err, str(path))
    else:
        assert got.n_entries >= 1
        assert all(isinstance(v, str) for v in got.predictions.values())


@FUZZ
@given(st.lists(json_values, max_size=6), st.sampled_from(["lines", "list"]))
def test_any_json_entries(entries, layout):
    text = (
        "".join(json.dumps(e) + "\n" for e in entries) if layout == "lines" else json.dumps(entries)
    )
    try:
        got = parse_predictions(text, "fuzz.jsonl")
    except PredictionFileError as err:
        _one_clear_line(err, "fuzz.jsonl")
    else:
        assert set(got.predictions).isdisjoint(got.no_prediction)


@FUZZ
@given(st.dictionaries(ids, st.none() | texts, min_size=1, max_size=8))
def test_well_formed_jsonl_reads_back_exactly(entries):
    text = "".join(json.dumps({"id": k, "prediction": v}) + "\n" for k, v in entries.items())
    got = parse_predictions(text, "ok.jsonl")
    assert dict(got.predictions) == {k: v for k, v in entries.items() if v is not None}
    assert set(got.no_prediction) == {k for k, v in entries.items() if v is None}


@FUZZ
@given(st.binary(max_size=300), st.sampled_from([".tsv", ".csv"]))
def test_any_bytes_as_table(tmp_path_factory, data, suffix):
    path = tmp_path_factory.mktemp("fz") / f"p{suffix}"
    path.write_bytes(b"id\tprediction\n" + data if suffix == ".tsv" else b"id,prediction\n" + data)
    try:
        read_predictions(path)
    except PredictionFileError as err:
        _one_clear_line(err, str(path))


_NS = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
_REL = (
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Target="worksheets/sheet1.xml" Type="x"/></Relationships>'
)
_BOOK = (
    f'<workbook {_NS} xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/'
    'relationships"><sheets><sheet name="s" sheetId="1" r:id="rId1"/></sheets></workbook>'
)
cell_refs = st.from_regex(r"\A[A-Z]{1,4}[0-9]{1,10}\Z") | st.text(max_size=6)
cells = st.builds(
    lambda ref, kind, value, formula: (
        f'<c r="{ref}"{kind}>' + (f"<f>{formula}</f>" if formula else "") + f"<v>{value}</v></c>"
    ),
    cell_refs.map(lambda s: s.replace('"', "").replace("<", "").replace("&", "")),
    st.sampled_from(["", ' t="s"', ' t="b"', ' t="str"', ' t="inlineStr"', ' t="e"']),
    st.sampled_from(["0", "1", "2", "-1", "1e5", "x", "99999999999", ""]),
    st.sampled_from(["", "A1", "move x 3"]),
)
rows = st.builds(
    lambda r, cs: f'<row r="{r}">' + "".join(cs) + "</row>",
    st.sampled_from(["1", "2", "3", "0", "-4", "x", "5000", "1048577", "300000000"]),
    st.lists(cells, max_size=4),
)


@FUZZ
@given(st.lists(rows, max_size=5), st.booleans())
def test_any_sheet_xml(tmp_path_factory, sheet_rows, truncate):
    sheet = f"<worksheet {_NS}><sheetData>{''.join(sheet_rows)}</sheetData></worksheet>"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as book:
        book.writestr("xl/workbook.xml", _BOOK)
        book.writestr("xl/_rels/workbook.xml.rels", _REL)
        book.writestr(
            "xl/sharedStrings.xml", f"<sst {_NS}><si><t>id</t></si><si><t>prediction</t></si></sst>"
        )
        book.writestr("xl/worksheets/sheet1.xml", sheet)
    data = buf.getvalue()
    path = tmp_path_factory.mktemp("fz") / "p.xlsx"
    path.write_bytes(data[: len(data) // 2] if truncate else data)
    try:
        read_predictions(path)
    except PredictionFileError as err:
        _one_clear_line(err, str(path))
