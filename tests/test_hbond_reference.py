"""Our H-bond detector against PLIP (an independent implementation) on every embedded complex.

PLIP keeps one bond per donor/acceptor group and files charged pairs as salt bridges, so it
reports fewer bonds than our relaxed geometric definition; what must hold is that the bonds PLIP
finds are (almost all) found by ours, and that the known bonds of 1A28 come out of both.
"""
import importlib.util

from misi_bench.builder.scripts.hbond_report import classify_extras, compare

assert importlib.util.find_spec("plip") is not None, "pip install 'misi-bench[reference]'"


def test_agreement_with_plip(sample_refs):
    rows = [compare(ref) for ref in sample_refs]
    n_plip = sum(len(r["plip"]) for r in rows)
    n_both = sum(len(r["both"]) for r in rows)
    assert n_plip >= 50
    recall = n_both / n_plip
    assert recall >= 0.8, f"only {recall:.2f} of PLIP's bonds are found"
    extras = classify_extras(rows)
    explained = sum(v for k, v in extras.items() if k != "other")
    assert explained >= 2 * extras["other"], extras
    a28 = next(r for r in rows if r["pdb_id"] == "1a28")
    assert "GLN 725 NE2 A, O3" in a28["both"]
    assert "ARG 766 NH2 A, O3" in a28["both"]
