"""Issue 49, item 3: a publish journal (``.publish/switch.json``) is acted on only when it names
plain release entries inside the folder; a crafted one makes neither ``push`` nor a build into
the folder delete or move anything outside it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from misi_bench.builder.core.errors import MisiError
from misi_bench.builder.dataset import hub
from misi_bench.builder.dataset.build import build_dataset
from misi_bench.builder.dataset.publish import JOURNAL, PUBLISH_DIR, recover


def _victims(tmp_path: Path) -> tuple[Path, Path]:
    outside = tmp_path / "outside"
    (outside / "keep").mkdir(parents=True)
    (outside / "keep" / "data.txt").write_text("precious")
    (outside / "secret.txt").write_text("secret")
    return outside, outside / "secret.txt"


def _state(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _folder(tmp_path: Path, journal: dict, *, staged_link: Path | None = None) -> Path:
    out = tmp_path / "build"
    publish = out / PUBLISH_DIR
    publish.mkdir(parents=True)
    (out / "manifest.json").write_text("{}")
    if staged_link is not None:
        os.symlink(staged_link, publish / journal["staged"])
    (publish / JOURNAL).write_text(json.dumps(journal))
    return out


CRAFTED = {
    "staged outside the folder": {"staged": "../../outside/keep", "old": [], "new": []},
    "staged an absolute path": {"staged": "{outside}/keep", "old": [], "new": []},
    "staged is the old folder": {"staged": "old", "old": [], "new": ["manifest.json"]},
    "old entry outside": {"staged": "abc123", "old": ["../../outside/keep"], "new": []},
    "new entry outside": {"staged": "abc123", "old": [], "new": ["../../outside/secret.txt"]},
    "new entry not a release entry": {"staged": "abc123", "old": [], "new": [".bashrc"]},
    "fields of the wrong type": {"staged": "abc123", "old": "manifest.json", "new": []},
    "an extra field": {"staged": "abc123", "old": [], "new": [], "rm": ["/"]},
}


@pytest.mark.parametrize("form", sorted(CRAFTED))
def test_a_crafted_journal_moves_and_deletes_nothing(tmp_path, form):
    outside, _ = _victims(tmp_path)
    before = _state(outside)
    # every path a journal names stays under tmp_path, so that even the code this test guards
    # against (which deletes what the journal names) can harm nothing else
    journal = json.loads(json.dumps(CRAFTED[form]).replace("{outside}", str(outside)))
    out = _folder(tmp_path, journal)
    with pytest.raises(MisiError, match=r"switch\.json: not a publish journal this tool wrote"):
        recover(out)
    assert _state(outside) == before
    assert (out / "manifest.json").exists()


def test_a_staged_folder_that_is_a_link_outside_is_refused(tmp_path):
    """``staged`` a plain name, but a symbolic link to a folder outside: today its entries (an
    outside file) are moved into the release and the outside folder deleted."""
    outside, secret = _victims(tmp_path)
    (outside / "manifest.json").write_text('{"from": "outside"}')
    before = _state(outside)
    journal = {"staged": "abc123", "old": ["manifest.json"], "new": ["manifest.json"]}
    out = _folder(tmp_path, journal, staged_link=outside)
    with pytest.raises(MisiError, match="is a symbolic link"):
        recover(out)
    assert _state(outside) == before and secret.exists()


def test_push_and_build_refuse_a_crafted_journal_in_one_line(tmp_path):
    outside, _ = _victims(tmp_path)
    before = _state(outside)
    out = _folder(tmp_path, CRAFTED["old entry outside"])
    with pytest.raises(MisiError) as err:
        hub.push_dataset(out, "misi/x", tag="v0.1.0", token="t", endpoint="http://127.0.0.1:9")
    assert "\n" not in str(err.value) and "not a publish journal" in str(err.value)
    with pytest.raises(MisiError, match="not a publish journal"):
        build_dataset(source="samples", out=out, tasks=["rotation"], limit=2, progress=False)
    assert _state(outside) == before


def test_the_journal_a_switch_writes_is_accepted(tmp_path):
    """The forms :func:`switch` writes (config folders, release files, a config-hash folder)."""
    from misi_bench.builder.dataset.publish import journal_problem

    journal = {
        "staged": "0123456789abcdef",
        "old": ["manifest.json", "README.md", "rotation"],
        "new": ["manifest.json", "baselines.json", "examples", "pocket_ligand"],
    }
    assert journal_problem(tmp_path, journal) is None
