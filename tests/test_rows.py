"""The typed row record (builder.core.rows): exact round trips of real rows, refusals naming the
field, the Parquet schema declared once, and metadata typed per answer kind."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from misi_bench.builder.core import rows
from misi_bench.builder.core.registry import ANSWER_KINDS, TASK_SPECS
from misi_bench.builder.core.rows import (
    COLUMN_NAMES,
    Row,
    RowError,
    metadata_type,
    parse_metadata,
)


def _stored_rows(folder):
    for path in sorted(folder.glob("*/*.parquet")):
        yield from pq.read_table(path).to_pylist()


def test_every_row_of_a_real_build_round_trips(data_dir):
    """Every stored row of a real build (all tasks, all splits) parses into the record, fits its
    task's metadata type with no field that neither the type nor the room's ``metadata_fields``
    declares, and writes back equal, metadata text included."""
    from misi_bench.builder.tasks import room_of

    tasks = set()
    for row in _stored_rows(data_dir):
        record = Row.from_row(row)
        assert record.to_row() == row, row["id"]
        assert record.metadata.to_json() == row["metadata"]
        assert isinstance(record.metadata, metadata_type(row["task"]))
        assert set(record.metadata.extra) <= set(room_of(row["task"]).metadata_fields), (
            row["task"],
            record.metadata.extra,
        )
        tasks.add(row["task"])
    assert tasks == {spec.name for spec in TASK_SPECS}


def test_the_shards_schema_is_the_records_columns(data_dir):
    path = next(data_dir.glob("*/*.parquet"))
    assert tuple(pq.read_schema(path).names) == COLUMN_NAMES


def _one_row(data_dir, task):
    return next(r for r in _stored_rows(data_dir) if r["task"] == task)


def _with_meta(row, **change):
    meta = json.loads(row["metadata"])
    for key, value in change.items():
        if value is None:
            del meta[key]
        else:
            meta[key] = value
    return {**row, "metadata": json.dumps(meta, sort_keys=True, separators=(",", ":"))}


@pytest.mark.parametrize(
    ("task", "change", "field"),
    [
        ("translation", {"operations": None}, "metadata.operations: missing"),
        ("translation", {"operations": "move x 2"}, "metadata.operations: expected a list"),
        (
            "rotation_rotation",
            {"option_operations": [["roll x 1"], [2]]},
            "option_operations[1][0]",
        ),
        ("residue_ligand", {"residue": {"chain": "A", "name": "SER"}}, "metadata.residue.number"),
        ("pocket_ligand", {"camera": {"distance": 1, "fov_deg": 30, "size": "512"}}, "camera.size"),
        ("docking", {"task": "zooming"}, "metadata.task"),
    ],
)
def test_a_malformed_metadata_field_is_refused_by_name(data_dir, task, change, field):
    row = _with_meta(_one_row(data_dir, task), **change)
    with pytest.raises(RowError, match=f"^row '{row['id']}': .*") as caught:
        Row.from_row(row)
    assert field in str(caught.value)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"answer": 3}, "column answer: expected str"),
        ({"options": "A"}, "column options: expected a list"),
        ({"images": [{"bytes": "png", "path": None}]}, "column images[0]"),
        ({"shadow": "x"}, "column shadow: not a column"),
        ({"metadata": "{not json"}, "metadata: not JSON"),
    ],
)
def test_a_malformed_column_is_refused_by_name(data_dir, change, field):
    row = {**_one_row(data_dir, "zooming"), **change}
    with pytest.raises(RowError, match=field.replace("[", r"\[")):
        Row.from_row(row)
    missing = dict(_one_row(data_dir, "zooming"))
    del missing["question"]
    with pytest.raises(RowError, match="column question: missing"):
        Row.from_row(missing)


def test_metadata_is_typed_per_answer_kind():
    for spec in TASK_SPECS:  # the kind's type, or the fields every row carries
        want = rows.METADATA_TYPES.get(spec.answer_kind, rows.QuestionMeta)
        assert metadata_type(spec.name) is want and issubclass(want, rows.QuestionMeta)
    assert set(rows.METADATA_TYPES) <= set(ANSWER_KINDS)  # no type for a kind no task names
    with pytest.raises(RowError, match="not in the registry"):
        metadata_type("no_such_task")
    with pytest.raises(RowError, match="^metadata.task: task 'no_such_task' is not in the"):
        parse_metadata('{"task":"no_such_task"}')
    with pytest.raises(RowError, match="^metadata.task: expected the task's name, got None"):
        parse_metadata("{}")


def test_an_undeclared_field_is_kept_for_its_room_and_round_trips():
    text = (
        '{"applies_to":"ligand","camera":{"distance":90.1,"fov_deg":30,"size":512},"k":0,'
        '"note":{"b":[1,2.5]},"operations":["move x 2"],"params_version":"1","pdb_id":"1a28",'
        '"profile":"paper","seed":0,"split":"test","task":"translation","template_version":"1"}'
    )
    meta = parse_metadata(text)
    assert meta.extra == {"note": {"b": [1, 2.5]}} and meta.build_profile == "paper"
    assert meta.to_json() == text  # ints stay ints (fov_deg 30), floats stay floats
    with pytest.raises(RowError, match="option 'E'"):
        parse_metadata(
            text.replace('"task":"translation"', '"task":"rotation_rotation"')
            .replace('"applies_to":"ligand",', '"correct":"A",')
            .replace('"operations"', '"option_operations":[["move x 2"]],"operations"')
        ).option_of("E")
