"""Issue 49, item 6: a NaN task score in ``report`` is refused, naming the file and the cell
(before it was dropped from the averages: a model with T2 = NaN and T1 = 100 % was shown with
an average of 100.00)."""

from __future__ import annotations

import json

import pytest
from misi_bench.builder.core.errors import MisiError
from misi_bench.eval_plugins.report.sources import read_result

from cli_support import one_error_line
from test_round3_disk import _cli


def _files(tmp_path, value: str):
    lmms = tmp_path / "model_results.json"
    lmms.write_text(
        '{"results": {"misi_translation": {"score,none": 1.0}, "misi_rotation": {"score,none": '
        + value
        + '}}, "lmms_eval_version": "0.3"}'
    )
    report = tmp_path / "run.score.json"
    report.write_text(
        '{"report": {"tasks": {"translation": {"score": 1.0, "n": 3}, "rotation": {"score": '
        + value
        + ', "n": 3}}}}'
    )
    table = tmp_path / "m_MiSI_acc.csv"
    table.write_text(f"task,n,score,exact\ntranslation,3,1.0,1.0\nrotation,3,{value},0.1\n")
    return lmms, report, table


@pytest.mark.parametrize("value", ["NaN", '"nan"', '"NaN"'])
def test_a_nan_task_is_refused_naming_the_file_and_cell(tmp_path, value):
    lmms, report, table = _files(tmp_path, value)
    with pytest.raises(MisiError, match=r"model_results\.json: results\.misi_rotation\.score,none"):
        read_result(lmms)
    with pytest.raises(
        MisiError, match=r"(?i)run\.score\.json: tasks\.rotation\.score holds .?nan"
    ):
        read_result(report)
    with pytest.raises(MisiError, match=r"m_MiSI_acc\.csv: row rotation, column score holds"):
        read_result(table)


def test_report_of_a_nan_task_exits_with_one_line(tmp_path):
    _, report, _ = _files(tmp_path, "NaN")
    json.loads(report.read_text())  # Python's json reads NaN, as every reader here does
    out = tmp_path / "r.html"
    proc = _cli("report", str(report), "--out", str(out))
    one_error_line(proc, "run.score.json", "tasks.rotation.score holds nan", code=None)
    assert not out.exists()
