"""Builds from a list of PDB ids (``--source ids:LIST.csv``), with entries fetched from a local
protocol double of the PDB archive's file service.

PROTOCOL DOUBLE: ``ArchiveDouble`` below is a stand-in for the PDB archive's public file service
(which cannot be reached here), served on 127.0.0.1. It serves ``/download/<ID>.cif.gz`` for the
embedded raw entries (real PDB entries, the PDB-format ones converted to mmCIF with gemmi), and on
purpose: a missing entry (404), an always-corrupted gzip, a gzip corrupted on the first request
only, and a slow response.
"""

from __future__ import annotations

import gzip
import http.server
import shutil
import time
from collections import Counter
from pathlib import Path

import gemmi
import pyarrow.parquet as pq
import pytest
from misi_bench.builder.chemistry.hbonds import detect_hbonds
from misi_bench.builder.chemistry.samples import sample_refs
from misi_bench.builder.chemistry.structure import load_complex
from misi_bench.builder.core.errors import InputError
from misi_bench.builder.dataset.archive import FetchPolicy, check_entry_bytes, fetch_entries
from misi_bench.builder.dataset.build import build_dataset
from misi_bench.builder.store.id_list import id_list_refs, read_id_list

from loopback_server import LoopbackServer
from scripts.fixtures import raw_refs

FAST = FetchPolicy(concurrency=3, retries=2, timeout=5.0, backoff=0.05, max_backoff=0.2)


def _mmcif_gz(path: Path) -> bytes:
    """A real raw entry as the archive serves it: gzipped mmCIF."""
    if ".cif" in path.name:
        return path.read_bytes()
    text = gzip.decompress(path.read_bytes()).decode("latin-1")
    if "1hpv" in path.name:  # pre-1996 file: columns past 72 hold a record id (see the reader)
        text = "\n".join(line[:72] for line in text.splitlines())
    st = gemmi.read_pdb_string(text)
    st.setup_entities()
    return gzip.compress(st.make_mmcif_document().as_string().encode(), mtime=0)


class ArchiveDouble(LoopbackServer):
    """PROTOCOL DOUBLE of the archive's file service (see the module docstring)."""

    def __init__(
        self, entries: dict[str, bytes], corrupt_always=(), corrupt_once=(), slow=(), delay=1.0
    ):
        self.entries, self.requests = entries, Counter()
        self.corrupt_always, self.corrupt_once, self.slow, self.delay = (
            set(corrupt_always),
            set(corrupt_once),
            set(slow),
            delay,
        )
        double = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                name = self.path.rsplit("/", 1)[-1]
                pdb_id = name.split(".")[0].lower()
                double.requests[pdb_id] += 1
                if not self.path.startswith("/download/") or pdb_id not in double.entries:
                    self.send_response(404)
                    self.end_headers()
                    return
                body = double.entries[pdb_id]
                if pdb_id in double.corrupt_always or (
                    pdb_id in double.corrupt_once and double.requests[pdb_id] == 1
                ):
                    body = body[: len(body) // 2]
                if pdb_id in double.slow:
                    time.sleep(double.delay)
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        super().__init__(Handler)
        self.url += "/download"


@pytest.fixture(scope="module")
def raw_entries() -> dict[str, bytes]:
    return {r.pdb_id: _mmcif_gz(r.path) for r in raw_refs()}


def _id_list(tmp_path: Path, rows: list[str]) -> Path:
    path = tmp_path / "ids.csv"
    path.write_text("pdb_id,ligand,chain,resnum\n" + "\n".join(rows) + "\n")
    return path


def _raw_rows() -> list[str]:
    return [
        f"{r.pdb_id},{r.ligand_code},{r.ligand_chain or ''},{r.ligand_resnum or ''}"
        for r in raw_refs()
    ]


def test_id_list_rows_and_errors(tmp_path):
    path = _id_list(tmp_path, ["1ABC,stu", "# a comment", "2def,ATP,B,301", "3ghi,HEM,,"])
    assert [(r.pdb_id, r.ligand, r.chain, r.resnum) for r in read_id_list(path)] == [
        ("1abc", "STU", None, None),
        ("2def", "ATP", "B", 301),
        ("3ghi", "HEM", None, None),
    ]
    for rows, message in (
        (["abcd,STU"], "not a PDB id"),
        (["1abc"], "ligand"),
        (["1abc,STU,A,x"], "not an integer"),
        (["1abc,STU", "1ABC,ATP"], "already listed on line 2"),
        ([], "names no complex"),
    ):
        with pytest.raises(InputError, match=message) as exc:
            read_id_list(_id_list(tmp_path, rows))
        assert "ids.csv" in str(exc.value)


def test_check_entry_bytes(raw_entries):
    good = raw_entries["1fki"]
    assert check_entry_bytes(good) is None
    assert "corrupted gzip" in check_entry_bytes(good[: len(good) // 2])
    assert "not an mmCIF" in check_entry_bytes(gzip.compress(b"HEADER    not a cif\n"))


def test_fetch_survives_faults_and_second_run_uses_the_cache(raw_entries, tmp_path):
    entries = {**raw_entries, "2zmm": raw_entries["1fki"]}
    cache = tmp_path / "structures"
    with ArchiveDouble(
        entries, corrupt_always={"2zmm"}, corrupt_once={"1hpv"}, slow={"1a28"}
    ) as double:
        results = fetch_entries(["1fki", "1a28", "1hpv", "2zmm", "9zzz"], cache, double.url, FAST)
        assert {p for p, r in results.items() if not r.error} == {"1fki", "1a28", "1hpv"}
        assert "HTTP 404" in results["9zzz"].error and double.requests["9zzz"] == 1  # 404 is final
        assert (
            "corrupted gzip" in results["2zmm"].error
            and double.requests["2zmm"] == FAST.retries + 1
        )
        assert (
            results["1hpv"].attempts == 2 and double.requests["1hpv"] == 2
        )  # corrupted once, then good
        for pdb_id in ("1fki", "1a28", "1hpv"):
            assert Path(results[pdb_id].path).read_bytes() == raw_entries[pdb_id]
        assert not list(cache.glob(".*part"))  # nothing half-written
        before = sum(double.requests.values())
        again = fetch_entries(["1fki", "1a28", "1hpv"], cache, double.url, FAST)
        assert sum(double.requests.values()) == before  # served from the cache: no request
        assert all(not r.fetched and r.sha256 == results[p].sha256 for p, r in again.items())


@pytest.mark.slow  # three builds from ids (18 s loaded); fast siblings: the id list and fetch tests
def test_build_from_ids_fetches_skips_with_reasons_and_resumes(raw_entries, tmp_path):
    ids = _id_list(tmp_path, [*_raw_rows(), "9zzz,STU", "2zmm,35B"])
    cache = tmp_path / "structures"
    kwargs = dict(
        source=f"ids:{ids}",
        tasks=["rotation", "pocket_ligand"],
        structures=cache,
        progress=False,
        fetch_policy=FAST,
    )
    offline = build_dataset(
        out=tmp_path / "offline", **kwargs
    )  # no --fetch, empty folder: all skipped
    assert set(offline["skipped_complexes"]) == {"1a28", "1fki", "1hpv", "2zmm", "9zzz"}
    assert all(
        "structure file not found" in why and "--fetch" in why
        for why in offline["skipped_complexes"].values()
    )
    entries = {**raw_entries, "2zmm": raw_entries["1fki"]}
    with ArchiveDouble(entries, corrupt_always={"2zmm"}) as double:
        manifest = build_dataset(out=tmp_path / "offline", fetch=True, mirror=double.url, **kwargs)
        skipped = manifest["skipped_complexes"]
        assert set(skipped) == {"2zmm", "9zzz"}
        assert "HTTP 404" in skipped["9zzz"] and "corrupted gzip" in skipped["2zmm"]
        for pdb_id in ("1a28", "1fki", "1hpv"):
            files = manifest["inputs"][pdb_id]["files"]
            assert list(files.values()) == [
                __import__("hashlib").sha256(raw_entries[pdb_id]).hexdigest()
            ]
        assert manifest["counts"]["rotation"]["train"] + manifest["counts"]["rotation"]["test"] > 0
        served = sum(double.requests.values())
        fresh = build_dataset(
            out=tmp_path / "second",
            source=f"ids:{_id_list(tmp_path, _raw_rows())}",
            tasks=["rotation", "pocket_ligand"],
            structures=cache,
            fetch=True,
            mirror=double.url,
            progress=False,
            fetch_policy=FAST,
        )
        assert sum(double.requests.values()) == served  # every entry came from the cache
        assert not fresh["skipped_complexes"]


@pytest.mark.slow
def test_ids_build_equals_pdbbind_build_on_the_samples(tmp_path):
    """Equivalence: the embedded samples that ship their raw entry, built from the raw entry (ids
    source) and from the PDBbind-layout folder, agree on pocket residues, ligand atoms, H-bonds
    and the H-bond answers."""
    raw = {r.pdb_id: r for r in raw_refs()}
    folders = {r.pdb_id: r for r in sample_refs() if r.pdb_id in raw}
    assert set(folders) == set(raw) and len(raw) >= 3
    structures = tmp_path / "structures"
    root = tmp_path / "pdbbind"
    for pdb_id, ref in raw.items():
        structures.mkdir(exist_ok=True)
        shutil.copy(ref.path, structures / ref.path.name.lower())
        shutil.copytree(folders[pdb_id].path, root / pdb_id)
    ids = _id_list(tmp_path, _raw_rows())
    by_ids = {r.pdb_id: load_complex(r) for r in id_list_refs(f"ids:{ids}", structures)}
    for pdb_id, cx in by_ids.items():
        ref = load_complex(folders[pdb_id])
        assert [f"{r.label} {r.chain}" for r in cx.residues] == [
            f"{r.label} {r.chain}" for r in ref.residues
        ]
        assert sorted(cx.atom_names[cx.is_ligand]) == sorted(ref.atom_names[ref.is_ligand])
        assert [b.pocket_text() for b in detect_hbonds(cx)] == [
            b.pocket_text() for b in detect_hbonds(ref)
        ]
    tasks = ["pocket_ligand", "residue_ligand"]
    a = build_dataset(
        source=f"ids:{ids}", structures=structures, out=tmp_path / "a", tasks=tasks, progress=False
    )
    b = build_dataset(source=root, out=tmp_path / "b", tasks=tasks, progress=False)
    assert not a["skipped_complexes"] and not b["skipped_complexes"]
    for task in tasks:
        for split in ("train", "test"):
            rows = {}
            for out in ("a", "b"):
                files = sorted((tmp_path / out / task).glob(f"{split}-*.parquet"))
                rows[out] = sorted(
                    (r["id"], r["answer"])
                    for f in files
                    for r in pq.read_table(f, columns=["id", "answer"]).to_pylist()
                )
            assert rows["a"] == rows["b"], (task, split)
