"""The card's paragraph on an identity-split build (``--split identity30``): the rule, tool and
version, threshold, components, the largest one's share, the highest test-train identity the
check measured, and how to use ATOM3D's own lists instead. Its own module so that the card's
other prose (``card_text``) can change beside it."""

from __future__ import annotations


def identity_split_note(manifest: dict) -> list[str]:
    """The Limitations bullet of an identity-split build (``manifest["split"]``); [] otherwise."""
    record = manifest.get("split")
    if not isinstance(record, dict) or record.get("rule") != "identity30":
        return []
    top = record["check"]["highest"]
    total = max(1, manifest.get("complexes", {}).get("total", 1))
    measured = (
        f"{100 * top['identity']:.1f}% (test `{top['test']}` against train `{top['train']}`)"
        if top.get("test")
        else "none (no test complex has a train complex with an aligned identical residue)"
    )
    pocket = sum(1 for o in record.get("sequence_origin", {}).values() if o == "pocket")
    pocket_text = (
        f" {pocket} of {total} complexes have no protein file, so their sequences are their "
        "pocket residues only (chain fragments): their clusters and identities are measured on "
        "those fragments, not on whole chains."
        if pocket
        else ""
    )
    return [
        f"- **Split by sequence identity** (`--split identity30`): the protein chains of every "
        f"complex were clustered with {record['tool']} (`mmseqs cluster {record['settings']}`: "
        f"identity over the shorter sequence at {100 * record['threshold']:.0f}%, as ATOM3D's LBA "
        "split that the paper used); a complex joins every cluster its chains fall in, and each "
        f"connected component goes to one side. {record['components']} components; the largest "
        f"holds {record['largest_component']} complexes "
        f"({100 * record['largest_component_share']:.1f}% of the build). Check by a second method "
        "(global alignment, BLOSUM62, identical aligned residues over the shorter sequence; "
        f"`misi-bench validate` repeats it): highest test-train identity {measured}, below the "
        f"{100 * record['threshold']:.0f}% the build refuses.{pocket_text} The split is ours, "
        "not ATOM3D's lists: to build on those, pass them with `--split-file` (a folder holding "
        "`train.txt`, `val.txt`, `test.txt`; the validation ids are left out; "
        "docs/inputs.md#split-files)."
    ]
