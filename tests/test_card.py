"""The dataset card (authors, provenance, tiny as built, Limitations, complete tables, default
config, the small-build caveat) and the build's validity warnings and stage bars, on a real
build of four embedded complexes (``data_dir``)."""

from __future__ import annotations

import copy
import json
import logging
import re

import yaml
from misi_bench.builder.dataset import build_warnings, card, card_text, progress
from misi_bench.builder.dataset import manifest as manifest_io
from misi_bench.builder.dataset.cluster import pool_map

AUTHORS = (
    "Li, Zongzhao",
    "Kong, Xiangzhe",
    "Su, Jiahui",
    "Ma, Zongyang",
    "Li, Mingze",
    "Li, Songyou",
    "Zhang, Yuelin",
    "Rong, Yu",
    "Xu, Tingyang",
    "Zhao, Deli",
    "Huang, Wenbing",
)


def _card(folder):
    return (folder / "README.md").read_text(encoding="utf-8")


def test_citation_names_the_papers_authors(data_dir):
    text = _card(data_dir)
    bib = text[text.index("```bibtex") :]
    line = next(ln for ln in bib.splitlines() if ln.strip().startswith("author"))
    assert [a.strip() for a in line.split("{", 1)[1].rstrip("},").split(" and ")] == list(AUTHORS)


def test_every_table_row_has_the_headers_cell_count(data_dir):
    lines = _card(data_dir).split("\n---\n", 1)[1].splitlines()
    tables, current = [], []
    for line in lines + [""]:
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append(current)
            current = []
    assert len(tables) >= 6
    for table in tables:
        widths = [len(re.split(r"(?<!\\)\|", row.strip())) for row in table]
        assert len(set(widths)) == 1, (table[0], widths)


def test_all_is_the_default_config(data_dir):
    meta = yaml.safe_load(_card(data_dir).split("---\n")[1])
    defaults = [c["config_name"] for c in meta["configs"] if c.get("default")]
    assert defaults == [card.ALL_CONFIG]


def test_provenance_tiny_limitations_and_caveat(data_dir):
    manifest = manifest_io.read_manifest(data_dir)
    text = _card(data_dir)
    ids = sorted(manifest["inputs"])
    assert "Built from the embedded sample complexes of the generator" in text
    assert f"{len(ids)} complexes ({', '.join(i.upper() for i in ids)})" in text
    limits = text[text.index("## Limitations") :]
    for word in ("renderer", "hydrogen-bond code", "Modelled hydrogens", "Zero-shot", "T3"):
        assert word in limits, word
    # the paper profile's T8 options are drawn alike (docs/decoys.md): no leak bullet; an
    # explicit build's paper decoys leak
    assert "T8 options leak the answer" not in limits
    explicit = {**manifest, "profile": "explicit"}
    assert "T8 options leak the answer" in card_text.limitations(data_dir, explicit)
    assert "**Split by hash**" in limits and "--split-file" in limits
    with_file = {**manifest, "config": {**manifest["config"], "split_file": "0123abcd"}}
    assert "Split by hash" not in card_text.limitations(data_dir, with_file)
    table1 = text[text.index("Table 1, weighted score") : text.index("Table 2 (Appendix B)")]
    floor_row = next(line for line in table1.splitlines() if "blind floor: best" in line)
    assert floor_row.split("|")[-2].strip() not in ("", "-", "–")  # a computed paper average
    assert "comparable with this build above its blind floor" in text
    assert f"**Small build**: {manifest['complexes']['test']} test complexes" in limits
    assert "Comparable in the questions asked, not in precision" in text
    # tiny_per_task=2 here: tiny is smaller than test where test has more than 2 (4 for T4)
    assert card_text.tiny_text(manifest) in text and "up to 2 questions per task" in text


def test_tiny_text_and_caveat_follow_the_counts(data_dir):
    manifest = manifest_io.read_manifest(data_dir)
    equal = copy.deepcopy(manifest)
    for counts in equal["counts"].values():
        counts["tiny"] = counts["test"]
    assert card_text.tiny_text(equal).endswith("so `tiny` equals `test`")
    large = copy.deepcopy(manifest)
    for counts in large["counts"].values():
        counts["test"], counts["tiny"] = 500, 50
    assert "equals" not in card_text.tiny_text(large)
    assert card_text.size_caveat(large) == "" and card_text.small_tasks(large) == {}
    assert "**Small build**" not in card_text.limitations(data_dir, large)
    n = min(card_text.small_tasks(manifest).values())
    assert f"±{card_text.interval_halfwidth(n):.0f} points" in card_text.size_caveat(manifest)
    empty = copy.deepcopy(manifest)
    for counts in empty["counts"].values():
        counts["test"] = counts["tiny"] = 0
    assert "none has any" in card_text.size_caveat(empty) and "±" not in card_text.size_caveat(
        empty
    )


def test_provenance_names_a_folder_or_an_id_list(data_dir):
    manifest = manifest_io.read_manifest(data_dir)
    folder = dict(
        manifest, source="/data/pdbbind", config=dict(manifest["config"], source="folder")
    )
    assert card_text.provenance(folder).startswith(
        "Built from a PDBbind-style folder (`/data/pdbbind`)"
    )
    ids = dict(manifest, source="ids:set.csv", config=dict(manifest["config"], source="ids"))
    assert "PDB entries named by the id list `set.csv`" in card_text.provenance(ids)


def test_validity_warnings_are_warning_lines(data_dir, tmp_path, caplog):
    """An options-only rule whose interval clears chance, and answers that depend on a modelled
    rotamer, each give a WARNING line naming the task (the build's own baselines file, with one
    cell raised above chance)."""
    data = json.loads((data_dir / "baselines.json").read_text(encoding="utf-8"))
    cell = data["splits"]["test"]["option_medoid"]["interaction_location"]
    cell.update(score=0.9, ci95=[0.6, 0.97])
    (tmp_path / "baselines.json").write_text(json.dumps(data), encoding="utf-8")
    manifest = manifest_io.read_manifest(data_dir)
    audit = {"tasks": {"pocket_ligand": {"hbond_answers": 2, "rotamer_dependent": ["q1"]}}}
    with caplog.at_level(logging.WARNING):
        lines = build_warnings.log_validity_warnings(tmp_path, dict(manifest, audit=audit))
    assert [ln.split(":")[0] for ln in lines] == ["interaction_location", "pocket_ligand"]
    assert "90.0%" in lines[0] and "vs chance 25%" in lines[0]
    assert [r.levelno for r in caplog.records] == [logging.WARNING, logging.WARNING]
    # the build's sampled audit runs the rotamers check on its H-bond answers
    assert {t for t, v in manifest["audit"]["tasks"].items() if "hbond_answers" in v} == {
        "residue_ligand",
        "interaction_location",
        "pocket_ligand",
    }


def test_stage_bars_show_only_when_a_build_asks(capsys):
    assert pool_map(None, abs, [-1, -2], "merge: test") == [1, 2]
    assert "merge: test" not in capsys.readouterr().err
    with progress.shown(True):
        assert pool_map(None, abs, [-1, -2], "merge: test") == [1, 2]
    assert "merge: test" in capsys.readouterr().err
    assert not progress.enabled()
