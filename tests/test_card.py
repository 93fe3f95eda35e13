"""The dataset card (authors, provenance, tiny as built, Limitations, complete tables, default
config, the small-build caveat, task parts from the registry) and the build's validity warnings
and stage bars, on a real build of four embedded complexes (``data_dir``). The card is read as
its readers' tools read it: the YAML front matter with a YAML library, sections by heading,
tables as rows (``card_support``)."""

from __future__ import annotations

import copy
import fnmatch
import json
import logging
import re
import shutil

from misi_bench.builder.checks import build_warnings
from misi_bench.builder.core.registry import TASK_BY_NAME, TASK_NAMES
from misi_bench.builder.dataset import card, card_tasks, card_text
from misi_bench.builder.scoring.kinds import kind_of
from misi_bench.builder.store import manifest as manifest_io
from misi_bench.builder.store import progress
from misi_bench.builder.store.cluster import pool_map
from misi_bench.builder.tasks.data import task_data

from card_support import bold_titles, bullets, front_matter, sections, table_under, tables

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


def test_every_table_parses_into_rows(data_dir):
    _, body = front_matter(_card(data_dir))
    found = tables(body)  # fails on a row whose cell count is not its header's
    assert len(found) >= 6 and all(found)


def test_front_matter_describes_the_builds_configs_and_files(data_dir):
    manifest = manifest_io.read_manifest(data_dir)
    meta, _ = front_matter(_card(data_dir))
    tasks = [t for t in TASK_NAMES if t in manifest["counts"]]
    assert [c["config_name"] for c in meta["configs"]] == [*tasks, card.ALL_CONFIG]
    defaults = [c["config_name"] for c in meta["configs"] if c.get("default")]
    assert defaults == [card.ALL_CONFIG]
    assert meta["license"] == "cc-by-4.0" and meta["pretty_name"] == "MiSI-Bench"
    shards = sorted(manifest["shards"])
    for config in meta["configs"][:-1]:
        for files in config["data_files"]:
            matched = [s for s in shards if fnmatch.fnmatch(s, files["path"])]
            assert matched and all(s.startswith(f"{config['config_name']}/") for s in matched)
    everything = meta["configs"][-1]["data_files"]
    assert sorted(
        s for f in everything for p in f["path"] for s in shards if fnmatch.fnmatch(s, p)
    ) == sorted(
        s for s in shards if s.split("/")[1].split("-")[0] in {f["split"] for f in everything}
    )
    info = {
        i["config_name"]: {s["name"]: s["num_examples"] for s in i["splits"]}
        for i in meta["dataset_info"]
    }
    for task in tasks:
        assert info[task] == {s: n for s, n in manifest["counts"][task].items() if n}
    assert info[card.ALL_CONFIG]["test"] == manifest["totals"]["questions"]["test"]


def test_task_table_is_the_registry_and_the_task_data(data_dir):
    rows = table_under(_card(data_dir), "Tasks")
    manifest = manifest_io.read_manifest(data_dir)
    assert [r["config"] for r in rows] == [f"`{t}`" for t in TASK_NAMES if t in manifest["counts"]]
    for row in rows:
        spec = TASK_BY_NAME[row["config"].strip("`")]
        words = task_data(spec.name).card
        assert row["task"] == f"T{spec.number}: {words.summary}"
        assert row["format"] == ("choice A-D" if kind_of(spec).carries_options else "fill-in")
        assert row["answer"] == words.answer
    assert rows[1] == {
        "config": "`rotation`",
        "task": "T2: which `roll x/y/z A` turned it",
        "format": "fill-in",
        "answer": "`roll z -45`",
    }


def _scoring_rules(text: str) -> list[str]:
    """The task labels of the card's scoring sentence (``T1 weighted: ...; T5/T6/T8 ...``)."""
    evaluate = sections(front_matter(text)[1])["Evaluate"]
    paragraph = next(p for p in evaluate.split("\n") if p.startswith("Scoring ("))
    rules = paragraph.split("): ", 1)[1].split(". ", 1)[0]
    return [rule.split(" ", 1)[0] for rule in rules.split("; ")]


def test_scoring_and_averages_prose_follow_the_registry(data_dir):
    text = _card(data_dir)
    assert _scoring_rules(text) == ["T1", "T2", "T3", "T4", "T5/T6/T8", "T7", "T9"]
    evaluate = sections(front_matter(text)[1])["Evaluate"]
    averages = next(p for p in evaluate.split("\n") if p.startswith("Three averages"))
    assert averages == card_tasks.averages_text()
    chance = sections(front_matter(text)[1])["Chance levels on this build"]
    assert "*options only* reads the four options alone (T5/T6: the option image nearest" in chance
    assert (
        "(the mean of eight columns: T1, T2, T3, T4 positive, T4 negative, T7, T8, T9;" in averages
    )
    assert "T5 and T6 are left out and T4 counts as its two halves" in averages


def test_a_build_of_another_task_set_gets_a_card_that_describes_it(data_dir, tmp_path):
    """The same build cut down to two tasks (their shard files, counts and audit only): every
    task part of its card names those two and no other."""
    keep = ["rotation", "pocket_ligand"]
    out = tmp_path / "two"
    shutil.copytree(data_dir, out, ignore=shutil.ignore_patterns(".work", "examples"))
    manifest = manifest_io.read_manifest(out)
    for task in set(manifest["counts"]) - set(keep):
        shutil.rmtree(out / task)
    manifest["counts"] = {t: manifest["counts"][t] for t in keep}
    manifest["shards"] = {k: v for k, v in manifest["shards"].items() if k.split("/")[0] in keep}
    manifest["totals"]["questions"] = {
        s: sum(c.get(s, 0) for c in manifest["counts"].values()) for s in ("train", "test", "tiny")
    }
    manifest["audit"]["tasks"] = {t: v for t, v in manifest["audit"]["tasks"].items() if t in keep}
    text = card.render_card(out, manifest)
    meta, body = front_matter(text)
    assert [c["config_name"] for c in meta["configs"]] == [*keep, card.ALL_CONFIG]
    assert [r["config"] for r in table_under(text, "Tasks")] == ["`rotation`", "`pocket_ligand`"]
    assert [r["config"] for r in table_under(text, "Counts")][:-1] == [
        "`rotation`",
        "`pocket_ligand`",
    ]
    assert _scoring_rules(text) == ["T2", "T9"]
    parts = sections(body)
    opening = parts["MiSI-Bench: microscopic spatial intelligence on protein-ligand complexes"]
    assert (
        "asks about its geometry: how the model was moved or turned, which hydrogen bonds exist."
        in " ".join(opening.split())
    )
    limits = bullets(parts["Limitations"])
    hbond = next(i for i in limits if i.startswith("**Our hydrogen-bond code**"))
    assert "decides the T9 answers" in hbond
    assert not any("underdetermined" in t for t in bold_titles(limits))  # no T3 in this build
    legibility = parts["Label legibility"]
    assert "(T9's bonded residues and ligand atoms)" in legibility
    assert [r["config"] for r in tables(legibility)[0]] == ["`pocket_ligand`"]
    baselines = tables(parts["Chance levels on this build"])[0]
    assert list(baselines[0])[1:3] == ["rotation", "pocket_ligand"]
    assert "*options only* reads" not in parts["Chance levels on this build"]  # no choice task
    examples = re.findall(r"!\[(\w+) example\]\((examples/\w+\.png)\)", parts["Examples"])
    assert [name for name, _ in examples] == keep
    assert all((out / path).is_file() for _, path in examples)


def test_provenance_tiny_limitations_and_caveat(data_dir):
    manifest = manifest_io.read_manifest(data_dir)
    text = _card(data_dir)
    ids = sorted(manifest["inputs"])
    assert "Built from the embedded sample complexes of the generator" in text
    assert f"{len(ids)} complexes ({', '.join(i.upper() for i in ids)})" in text
    parts = sections(front_matter(text)[1])
    limits = parts["Limitations"]
    assert bold_titles(bullets(limits))[:6] == [
        "Our renderer, not ChimeraX",
        "Our hydrogen-bond code",
        "Modelled hydrogens",
        "Zero-shot",
        "T3 is underdetermined in the `paper` profile",
        "Split by sequence identity",  # the default split (docs/splits.md)
    ]
    assert "decides the T4, T8 and T9 answers" in bullets(limits)[1]
    # the paper profile's T8 options are drawn alike (docs/decoys.md): no leak bullet; an
    # explicit build's paper decoys leak
    assert "T8 options leak the answer" not in limits
    explicit = {**manifest, "profile": "explicit"}
    assert "T8 options leak the answer" in card_text.limitations(data_dir, explicit)
    assert "**Split by sequence identity**" in limits and "--split-file" in limits
    assert "Split by hash" not in limits
    hashed = {k: v for k, v in manifest.items() if k != "split"}  # a --split hash build
    assert "**Split by hash**" in card_text.limitations(data_dir, hashed)
    with_file = {**manifest, "config": {**manifest["config"], "split_file": "0123abcd"}}
    assert "Split by" not in card_text.limitations(data_dir, with_file)
    table1 = tables(
        text[text.index("Table 1, weighted score") : text.index("Table 2 (Appendix B)")]
    )[0]
    floor_row = next(r for r in table1 if "blind floor: best" in next(iter(r.values())))
    assert list(floor_row.values())[-1] not in ("", "-", "–")  # a computed paper average
    assert "comparable with this build above its blind floor" in text
    # the claim comes after what it rests on: the split rule, the build's size, the blind floor
    claim = text.index("comparable with this build above its blind floor")
    grounds = text.rindex("A comparison with them rests on", 0, claim)
    for named in ("30% sequence identity", f"{manifest['complexes']['test']} test complexes",
                  "the paper's test split has 490", "blind floor: best"):  # fmt: skip
        assert grounds < text.index(named, grounds) < claim, named
    hashed = {k: v for k, v in manifest.items() if k != "split"}
    assert "a seeded hash of the PDB ids" in card_text.comparison_grounds(hashed)
    # the T8 example names its bond and its four options
    t8 = next(ln for ln in text.splitlines() if ln.startswith("**interaction_location**"))
    assert "bond `" in t8 and all(f"{c} `move" in t8 for c in "ABCD"), t8
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
    assert f"fewest: {n}; the smallest detectable difference" in card_text.size_caveat(manifest)
    empty = copy.deepcopy(manifest)
    for counts in empty["counts"].values():
        counts["test"] = counts["tiny"] = 0
    assert "none has any" in card_text.size_caveat(empty)
    assert "detectable" not in card_text.size_caveat(empty)


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
    cell.update(score=0.9, ci95=[0.6, 0.97], complexes=40)
    for rules in data["splits"].values():  # the small build's own cells: too few complexes for
        for cells in rules.values():  # any interval to count (blind.MIN_COMPLEXES), whatever
            for other in cells.values():  # their narrow bootstrap intervals say
                assert (
                    not isinstance(other, dict) or other.get("complexes", 0) < 20 or other is cell
                )
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


def test_card_states_the_smallest_detectable_difference(data_dir, monkeypatch):
    """The card's paragraph is measured on the build's own questions (issue 48): its test split
    figure, and for a split of two complexes it says that no paired test can reach 5%."""
    from misi_bench.builder.dataset import card_power

    text = _card(data_dir)
    para = next(p for p in text.split("\n\n") if p.startswith("**Smallest detectable difference"))
    assert para == card_power.detectable_paragraph(data_dir)  # the card's text, recomputed
    rates = card_power.paper_rates()
    assert rates["T4_negative"] > rates["T9"] and len(rates) == 10
    got = card_power.detectable_difference(data_dir, "test", rates)
    assert got["complexes"] == 2 and 0 < got["difference"] < 1
    assert got == card_power.detectable_difference(data_dir, "test", rates)  # seeded
    assert f"the bootstrap figure would be {100 * got['difference']:.1f} points" in para
    assert "smallest p-value is 0.50" in para
    # the same questions repeated over 4 and 16 times as many complexes: the figure halves
    ids, tasks, units, cols = card_power._structure(data_dir, "test")
    assert len(ids) == got["questions"]

    def repeated(times):
        return (
            [f"{i}-{k}" for k in range(times) for i in ids],
            tasks * times,
            [f"{u}-{k}" for k in range(times) for u in units],
            cols * times,
        )

    found = {}
    for times in (4, 16):
        monkeypatch.setattr(card_power, "_structure", lambda out, split, t=times: repeated(t))
        found[times] = card_power.detectable_difference(data_dir, "test", rates)
    more = found[16]
    assert more["complexes"] == 32 and 0.35 < more["difference"] / found[4]["difference"] < 0.7
    assert "smallest p-value" not in card_power._split_text("test", more)
