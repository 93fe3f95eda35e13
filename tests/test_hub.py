"""Publishing to the Hub (builder/hub.py), tested against a local protocol double of the Hub.

The real Hub cannot be reached from the test machines, so ``HubDouble`` below is a small HTTP
server on 127.0.0.1 that speaks the part of the Hub's HTTP protocol that the *real*
``huggingface_hub`` client uses for a push and a download; nothing in the client is mocked. Its
routes were read off ``huggingface_hub/hf_api.py``, ``_commit_api.py``, ``_upload_pipeline.py``,
``file_download.py`` and ``_snapshot_download.py``:

- ``POST /api/repos/create``, ``POST /api/validate-yaml``, ``GET /api/whoami-v2``
- ``GET /api/datasets/{repo}`` and ``.../revision/{rev}`` (repo info with the commit sha)
- ``GET .../refs``, ``POST .../branch/{branch}``, ``POST .../tag/{rev}``
- ``POST .../preupload/{rev}``: answers ``uploadMode: "regular"`` for every file (with the remote
  git blob id, so unchanged files are skipped as on the Hub), which makes the client send the
  contents inline, base64 in the NDJSON body of ``POST .../commit/{rev}``; LFS/Xet transfers are
  out of scope of the double (the real Hub would ask for them for large files)
- ``GET .../tree/{rev}[/{path}]`` and ``HEAD``/``GET /datasets/{repo}/resolve/{rev}/{path}`` (ETag =
  git blob id, ``X-Repo-Commit``), enough for ``snapshot_download``.

State is kept in memory: per repo a dict commit id -> {path: bytes}, branches and tags pointing
at commits. Every request is logged (method, path, Authorization header) so tests can assert that
a dry run sends nothing and that a refused tag is refused before any upload.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import json
import logging
import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import huggingface_hub  # noqa: E402,F401
import pytest
import yaml
from misi_bench.builder.core.errors import MisiError
from misi_bench.builder.dataset import hub

from loopback_server import LoopbackServer

TOKEN = "hf_TESTtokenDoNotLeak0123456789abcdef"
REPO = "misi-test/misi-bench"


# ------------------------------------------------------------------------------------------ double


def _git_blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class _Repo:
    def __init__(self, repo_id: str, private: bool):
        self.repo_id, self.private = repo_id, private
        self.commits: dict[str, dict] = {}
        self.branches: dict[str, str] = {}
        self.tags: dict[str, str] = {}
        # The Hub creates a repo with one commit holding .gitattributes.
        self.branches["main"] = self.add_commit(
            None,
            {".gitattributes": b"*.parquet filter=lfs diff=lfs merge=lfs -text\n"},
            "initial commit",
        )

    def add_commit(self, parent: str | None, files: dict[str, bytes], message: str) -> str:
        h = hashlib.sha1()
        h.update((parent or "").encode() + message.encode())
        for path in sorted(files):
            h.update(path.encode() + b"\0" + _git_blob_id(files[path]).encode())
        oid = h.hexdigest()
        self.commits[oid] = {"parent": parent, "files": dict(files), "message": message}
        return oid

    def resolve(self, rev: str) -> str | None:
        if rev in self.branches:
            return self.branches[rev]
        if rev in self.tags:
            return self.tags[rev]
        return rev if rev in self.commits else None


class HubDouble(LoopbackServer):
    """Protocol double of the Hugging Face Hub on 127.0.0.1 (see the module docstring)."""

    def __init__(self, token: str = TOKEN):
        self.token = token
        self.refuse_commits = False  # a test sets it to see an upload fail after the checks
        self.repos: dict[str, _Repo] = {}
        self.requests: list[tuple[str, str, str | None]] = []  # (method, path, authorization)
        self.lock = threading.Lock()
        double = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep test output clean
                pass

            def _handle(self):
                with double.lock:
                    double.requests.append(
                        (self.command, self.path, self.headers.get("Authorization"))
                    )
                    try:
                        status, headers, body = double.route(self)
                    except Exception as exc:  # noqa: BLE001  (a bug in the double: answer 500, visibly)
                        status, headers, body = 500, {}, json.dumps({"error": repr(exc)}).encode()
                self.send_response(status)
                headers = {"Content-Type": "application/json", **headers}
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(headers.pop("_length", len(body))))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            do_GET = do_POST = do_HEAD = do_PUT = do_DELETE = _handle

        LoopbackServer.__init__(self, Handler)
        self.endpoint = self.url

    # ---- helpers

    @staticmethod
    def _body(req) -> bytes:
        if req.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = b""
            while True:
                size = int(req.rfile.readline().strip(), 16)
                if size == 0:
                    req.rfile.readline()
                    return out
                out += req.rfile.read(size)
                req.rfile.readline()
        n = int(req.headers.get("Content-Length") or 0)
        return req.rfile.read(n) if n else b""

    @staticmethod
    def _json(status: int, data, **headers):
        return status, headers, json.dumps(data).encode()

    def _error(self, status: int, message: str, code: str | None = None):
        return self._json(status, {"error": message}, **({"X-Error-Code": code} if code else {}))

    def _authorized(self, req) -> bool:
        return req.headers.get("Authorization") == f"Bearer {self.token}"

    def writes(self) -> list:
        """Requests that upload or change something (everything but reads)."""
        return [r for r in self.requests if r[0] == "POST" and "/validate-yaml" not in r[1]]

    def files_at(self, repo_id: str, rev: str) -> dict[str, bytes]:
        repo = self.repos[repo_id]
        return repo.commits[repo.resolve(rev)]["files"]

    # ---- routes

    def route(self, req):
        url = urlsplit(req.path)
        query = parse_qs(url.query)
        parts = url.path.split("/")[1:]
        body = self._body(req) if req.command in ("POST", "PUT") else b""
        if url.path == "/api/whoami-v2":
            if not self._authorized(req):
                return self._error(401, "Invalid credentials in Authorization header")
            return self._json(
                200,
                {
                    "type": "user",
                    "name": "tester",
                    "orgs": [],  # `hf auth whoami` lists them
                    "auth": {"accessToken": {"role": "write"}},
                },
            )
        if url.path == "/api/validate-yaml":
            return self._validate_yaml(json.loads(body))
        if url.path == "/api/repos/create":
            return self._create_repo(req, json.loads(body))
        if parts[:2] == ["api", "datasets"] and len(parts) >= 4:
            repo_id = f"{unquote(parts[2])}/{unquote(parts[3])}"
            repo = self.repos.get(repo_id)
            if repo is None or (repo.private and not self._authorized(req)):
                return self._error(404, f"Repository {repo_id} not found", "RepoNotFound")
            action = parts[4] if len(parts) > 4 else "revision"
            rev = unquote(parts[5]) if len(parts) > 5 else "main"
            rest = unquote("/".join(parts[6:]))
            if req.command == "POST" and not self._authorized(req):
                return self._error(401, "Invalid credentials in Authorization header")
            handler = {
                ("GET", "revision"): lambda: self._info(repo, rev),
                ("GET", "refs"): lambda: self._refs(repo),
                ("GET", "tree"): lambda: self._tree(
                    repo, rev, rest, query.get("recursive", ["false"])[0]
                ),
                ("POST", "preupload"): lambda: self._preupload(repo, rev, json.loads(body)),
                ("POST", "commit"): lambda: self._commit(repo, rev, body),
                ("POST", "branch"): lambda: self._branch(repo, rev, json.loads(body or b"{}")),
                ("POST", "tag"): lambda: self._tag(repo, rev, json.loads(body)),
            }.get((req.command, action))
            return handler() if handler else self._error(404, f"no route {req.command} {url.path}")
        if parts[:1] == ["datasets"] and len(parts) >= 6 and parts[3] == "resolve":
            repo = self.repos.get(f"{unquote(parts[1])}/{unquote(parts[2])}")
            if repo is None or (repo.private and not self._authorized(req)):
                return self._error(404, "Repository not found", "RepoNotFound")
            return self._resolve(req, repo, unquote(parts[4]), unquote("/".join(parts[5:])))
        return self._error(404, f"no route {req.command} {url.path}")

    def _validate_yaml(self, payload):
        text = payload.get("content", "")
        if text.startswith("---"):
            try:
                yaml.safe_load(text.split("---", 2)[1])
            except yaml.YAMLError as exc:
                return self._json(400, {"errors": [{"message": str(exc)}], "warnings": []})
        return self._json(200, {"errors": [], "warnings": []})

    def _create_repo(self, req, payload):
        if not self._authorized(req):
            return self._error(401, "Invalid credentials in Authorization header")
        if payload.get("type") != "dataset":
            return self._error(400, "the double only hosts dataset repos")
        repo_id = f"{payload['organization']}/{payload['name']}"
        url = f"{self.endpoint}/datasets/{repo_id}"
        if repo_id in self.repos:
            return self._json(409, {"error": "You already created this dataset repo", "url": url})
        self.repos[repo_id] = _Repo(repo_id, payload.get("visibility") == "private")
        return self._json(200, {"url": url, "name": repo_id})

    def _info(self, repo: _Repo, rev: str):
        oid = repo.resolve(rev)
        if oid is None:
            return self._error(404, f"Invalid rev id: {rev}", "RevisionNotFound")
        files = repo.commits[oid]["files"]
        return self._json(
            200,
            {
                "id": repo.repo_id,
                "sha": oid,
                "private": repo.private,
                "tags": [],
                "siblings": [{"rfilename": p} for p in sorted(files)],
            },
        )

    def _refs(self, repo: _Repo):
        def refs(kind, table):
            return [
                {"name": n, "ref": f"refs/{kind}/{n}", "targetCommit": c}
                for n, c in sorted(table.items())
            ]

        return self._json(
            200,
            {
                "branches": refs("heads", repo.branches),
                "converts": [],
                "tags": refs("tags", repo.tags),
                "pullRequests": [],
            },
        )

    def _tree(self, repo: _Repo, rev: str, prefix: str, recursive: str):
        oid = repo.resolve(rev)
        if oid is None:
            return self._error(404, f"Invalid rev id: {rev}", "RevisionNotFound")
        base = f"{prefix.strip('/')}/" if prefix.strip("/") else ""
        deep = recursive.lower() in ("true", "1")
        entries, dirs = [], set()
        for path, data in sorted(repo.commits[oid]["files"].items()):
            if not path.startswith(base):
                continue
            rel = path[len(base) :].split("/")
            for k in range(1, len(rel)):
                dirs.add(base + "/".join(rel[:k]))
            if deep or len(rel) == 1:
                entries.append(
                    {"type": "file", "oid": _git_blob_id(data), "size": len(data), "path": path}
                )
        for d in sorted(dirs):
            if deep or "/" not in d[len(base) :]:
                entries.append(
                    {
                        "type": "directory",
                        "oid": hashlib.sha1(d.encode()).hexdigest(),
                        "size": 0,
                        "path": d,
                    }
                )
        return self._json(200, entries)

    def _preupload(self, repo: _Repo, rev: str, payload):
        oid = repo.resolve(rev)
        if oid is None:
            return self._error(404, f"Invalid rev id: {rev}", "RevisionNotFound")
        files = repo.commits[oid]["files"]
        return self._json(
            200,
            {
                "files": [
                    {
                        "path": f["path"],
                        "uploadMode": "regular",
                        "shouldIgnore": False,
                        "oid": _git_blob_id(files[f["path"]]) if f["path"] in files else None,
                    }
                    for f in payload["files"]
                ]
            },
        )

    def _commit(self, repo: _Repo, branch: str, body: bytes):
        if self.refuse_commits:
            return self._error(400, "commit refused (test: a failed upload)")
        if branch not in repo.branches:
            return self._error(404, f"Invalid rev id: {branch}", "RevisionNotFound")
        lines = [json.loads(line) for line in body.decode().splitlines() if line.strip()]
        if not lines or lines[0]["key"] != "header":
            return self._error(400, "the first NDJSON line must be the commit header")
        header = lines[0]["value"]
        head = repo.branches[branch]
        if header.get("parentCommit") not in (None, head):
            return self._error(412, "A commit has happened since. Please refresh and try again.")
        files = dict(repo.commits[head]["files"])
        for line in lines[1:]:
            value = line["value"]
            if line["key"] == "file":
                if value.get("encoding") != "base64":
                    return self._error(400, f"unsupported encoding {value.get('encoding')!r}")
                files[value["path"]] = base64.b64decode(value["content"])
            elif line["key"] == "deletedFile":
                files.pop(value["path"], None)
            elif line["key"] == "deletedFolder":
                files = {
                    p: d
                    for p, d in files.items()
                    if not p.startswith(value["path"].rstrip("/") + "/")
                }
            else:  # lfsFile: never requested by this double's preupload answers
                return self._error(400, f"the double does not support {line['key']!r} operations")
        oid = repo.add_commit(head, files, header["summary"])
        repo.branches[branch] = oid
        return self._json(
            200,
            {
                "commitUrl": f"{self.endpoint}/datasets/{repo.repo_id}/commit/{oid}",
                "commitOid": oid,
                "pullRequestUrl": None,
            },
        )

    def _branch(self, repo: _Repo, branch: str, payload):
        if branch in repo.branches:
            return self._error(409, f"Reference already exists: refs/heads/{branch}")
        start = repo.resolve(payload.get("startingPoint") or "main")
        if start is None:
            return self._error(404, "Invalid starting point", "RevisionNotFound")
        repo.branches[branch] = start
        return self._json(200, {})

    def _tag(self, repo: _Repo, rev: str, payload):
        oid = repo.resolve(rev)
        if oid is None:
            return self._error(404, f"Invalid rev id: {rev}", "RevisionNotFound")
        if payload["tag"] in repo.tags:
            return self._error(409, f"Tag {payload['tag']} already exists")
        repo.tags[payload["tag"]] = oid
        return self._json(200, {})

    def _resolve(self, req, repo: _Repo, rev: str, path: str):
        oid = repo.resolve(rev)
        if oid is None:
            return self._error(404, f"Invalid rev id: {rev}", "RevisionNotFound")
        files = repo.commits[oid]["files"]
        if path not in files:
            return self._json(
                404,
                {"error": "Entry not found"},
                **{"X-Error-Code": "EntryNotFound", "X-Repo-Commit": oid},
            )
        data = files[path]
        headers = {
            "Content-Type": "application/octet-stream",
            "ETag": f'"{_git_blob_id(data)}"',
            "X-Repo-Commit": oid,
            "Accept-Ranges": "bytes",
        }
        status = 200
        rng = req.headers.get("Range")
        if rng and rng.startswith("bytes=") and req.command == "GET":
            start = int(rng[6:].split("-")[0] or 0)
            headers["Content-Range"] = f"bytes {start}-{len(data) - 1}/{len(data)}"
            data, status = data[start:], 206
        return status, headers, data


# ------------------------------------------------------------------------------------------ folders


def make_fake_folder(out: Path) -> Path:
    """A small dataset folder of the real layout, written with the real writer and card code:
    two configs with train/test shards, manifest, card, example images, plus a ``.work/`` area
    with a unit file and a status file that must never be pushed."""
    from misi_bench.builder.dataset.card import write_card
    from misi_bench.builder.store import manifest as manifest_io
    from misi_bench.builder.store import parquet as write
    from PIL import Image

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)

    def png(shade: int) -> bytes:
        buf = io.BytesIO()
        Image.new("RGB", (32, 32), (shade, 40, 90)).save(buf, format="PNG")
        return buf.getvalue()

    answers = {
        "rotation": ["roll z -45", "roll x 30", "roll y 60"],
        "pocket_ligand": ["None", "None", "None"],
    }
    counts, shards, images = {}, {}, {}
    for task, task_answers in answers.items():
        counts[task], images[task] = {}, {}
        for split, ids in (("train", [0, 1]), ("test", [2])):
            rows = [
                {
                    "id": f"{task}-{k:04d}",
                    "task": task,
                    "split": split,
                    "pdb_id": f"1ab{k}",
                    "images": [
                        {"bytes": png(20 * k), "path": None},
                        {"bytes": png(20 * k + 5), "path": None},
                    ],
                    "image_views": ["front", "front"],
                    "question": f"What turned complex {k}?",
                    "options": [],
                    "answer": task_answers[k],
                    "answer_format": "fill_in",
                    "metadata": json.dumps({"seed": 0}),
                }
                for k in ids
            ]
            for path in write.write_split(rows, out / task, split, max_bytes=1 << 30):
                shards[path.relative_to(out).as_posix()] = {
                    "sha256": manifest_io.sha256_file(path),
                    "bytes": path.stat().st_size,
                }
            counts[task][split] = len(rows)
            images[task][split] = 2 * len(rows)
        counts[task]["tiny"] = 0
    manifest = {
        "builder_version": "0.1.0",
        "config_hash": "0123456789abcdef",
        "source": "samples",
        "seed": 0,
        "config": {"tiny_per_task": 50, "image_size": 32, "pocket_cutoff": 10.0, "seed": 0},
        "inputs": {},
        "complexes": {"total": 3, "train": 2, "test": 1},
        "counts": counts,
        "images": images,
        "totals": {
            "questions": {s: sum(c[s] for c in counts.values()) for s in ("train", "test", "tiny")},
            "images": {s: sum(i[s] for i in images.values()) for s in ("train", "test")},
        },
        "shards": shards,
        "skipped_complexes": {},
        "skipped_tasks": {},
        "version": None,
    }
    manifest_io.write_manifest(out, manifest)
    write_card(out, manifest)
    work = out / ".work" / "0123456789abcdef" / "complexes"
    work.mkdir(parents=True)
    (work / "1ab0.parquet").write_bytes(
        (out / "rotation" / "train-00000-of-00001.parquet").read_bytes()
    )
    (work / "1ab0.status.json").write_text('{"ok": true}', encoding="utf-8")
    # a file the shard pattern alone would match (fnmatch's * crosses /): the ignore patterns must drop it
    (work / "test-00000-of-00001.parquet").write_bytes(b"not a shard")
    return out


def _real_build(out: Path) -> Path:
    from misi_bench.builder.dataset.build import build_dataset

    build_dataset(
        source="samples", out=out, tasks=["rotation", "pocket_ligand"], limit=4, progress=False
    )
    return out


@pytest.fixture(scope="module")
def real_folder(tmp_path_factory) -> Path:
    return _real_build(tmp_path_factory.mktemp("real") / "misi-bench")


@pytest.fixture(params=["fake", "real"])
def dataset_folder(request, tmp_path) -> Path:
    if request.param == "fake":
        return make_fake_folder(tmp_path / "fake")
    src = request.getfixturevalue("real_folder")
    import shutil

    return Path(shutil.copytree(src, tmp_path / "real"))


@pytest.fixture
def online(monkeypatch, tmp_path):
    """Hub client settings for talking to the double: online, no telemetry, private caches."""
    from huggingface_hub import constants

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_TELEMETRY", True)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_home"))
    with HubDouble() as double:
        yield double


def folder_state(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file of a folder (hidden ones too, the lock file aside) with its bytes and mtime."""
    return {
        p.relative_to(folder).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != ".misi-lock"
    }


def _pushable(folder: Path) -> set[str]:
    return {
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and not p.relative_to(folder).as_posix().startswith(".")
    }


def _assert_no_token(folder: Path, *texts: str) -> None:
    for text in texts:
        assert TOKEN not in text
    for path in folder.rglob("*"):
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path


# ------------------------------------------------------------------------------------------ tests


@pytest.mark.parametrize("pipeline", ["xet", "single_commit"])
def test_push_tag_then_download_and_load(
    dataset_folder, online, pipeline, monkeypatch, tmp_path, caplog, capsys
):
    """Push a build with a tag through the real client; the tagged revision downloads and loads."""
    import datasets
    from huggingface_hub import constants, snapshot_download

    # upload_folder has two code paths: the streamed multi-commit pipeline (hf_xet installed) and
    # the single create_commit (without hf_xet). Exercise both.
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", pipeline != "xet")
    double, folder = online, dataset_folder
    caplog.set_level(logging.DEBUG)

    before = folder_state(folder)
    result = hub.push_dataset(
        folder, REPO, tag="v0.1.0", token=TOKEN, endpoint=double.endpoint, allow_small=True
    )

    # the build folder is never edited: the Hub gets a staging copy that states the version
    assert folder_state(folder) == before
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["version"] is None
    remote = double.files_at(REPO, "v0.1.0")
    expected = _pushable(folder)
    assert expected >= {"README.md", "manifest.json"} | set(manifest["shards"])
    assert set(remote) - {".gitattributes"} == expected
    assert not [p for p in remote if p.startswith(".work") or "/." in p]
    for rel in expected - {"manifest.json", "README.md"}:  # shards, images: byte-identical
        assert remote[rel] == (folder / rel).read_bytes(), rel
    assert json.loads(remote["manifest.json"]) == {**manifest, "version": "v0.1.0"}
    assert "v0.1.0" in remote["README.md"].decode()
    assert "v0.1.0" not in (folder / "README.md").read_text()
    assert (
        double.repos[REPO].tags["v0.1.0"]
        == result.commit_oid
        == double.repos[REPO].branches["main"]
    )
    assert {rel for rel, _ in result.files} == expected
    writes = double.writes()
    assert writes and all(auth == f"Bearer {TOKEN}" for _, _, auth in writes)

    # the same tag again: refused before anything is uploaded, naming repo and tag
    n_requests = len(double.requests)
    with pytest.raises(MisiError) as err:
        hub.push_dataset(
            folder, REPO, tag="v0.1.0", token=TOKEN, endpoint=double.endpoint, allow_small=True
        )
    assert REPO in str(err.value) and "v0.1.0" in str(err.value)
    later = double.requests[n_requests:]
    assert not [r for r in later if "/preupload/" in r[1] or "/commit/" in r[1] or "/tag/" in r[1]]

    # a tagged revision downloads from the double and loads from the local copy
    local = tmp_path / "download"
    snapshot_download(
        REPO,
        repo_type="dataset",
        revision="v0.1.0",
        local_dir=local,
        endpoint=double.endpoint,
        token=TOKEN,
    )
    assert json.loads((local / "manifest.json").read_text())["version"] == "v0.1.0"
    ds = datasets.load_dataset(
        str(local), "rotation", split="test", cache_dir=str(tmp_path / "ds_cache")
    )
    assert len(ds) == manifest["counts"]["rotation"]["test"] > 0
    assert ds[0]["task"] == "rotation" and ds[0]["images"]

    out = capsys.readouterr()
    _assert_no_token(folder, caplog.text, out.out, out.err)
    _assert_no_token(local)


def test_dry_run_lists_files_and_sends_nothing(online, tmp_path, capsys):
    double = online
    folder = make_fake_folder(tmp_path / "fake")
    before = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    args = argparse.Namespace(
        folder=str(folder), repo=REPO, tag="v0.2.0", revision=None, private=False, dry_run=True
    )
    assert hub.cli_push(args) == 0
    out = capsys.readouterr().out
    assert double.requests == []
    lines = out.splitlines()
    files = lines[: lines.index("")]  # then the staged card's head, warnings, the summary
    listed = [line.split()[-1] for line in files]
    assert set(listed) == _pushable(folder)
    assert not [p for p in listed if ".work" in p]
    assert "The card as it would be pushed" in out and "v0.2.0" in out
    for line in files:  # "<size>  <path>"
        size, rel = line.split()
        assert int(size.replace(",", "")) == (folder / rel).stat().st_size
    assert "dry run" in out.splitlines()[-1] and REPO in out.splitlines()[-1]
    after = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    assert after == before  # nothing local changed either


def test_dry_run_repo_default_from_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("MISI_BENCH_REPO", "someone/elsewhere")
    result = hub.push_dataset(make_fake_folder(tmp_path / "fake"), dry_run=True)
    assert result.dry_run and result.repo_id == "someone/elsewhere" and result.revision == "main"
    assert "README.md" in {rel for rel, _ in result.files}


@pytest.mark.parametrize("tag", ["1.2.0", "v1.2", "v1.2.0-rc1", "v01.2.0", "latest", ""])
def test_bad_tags_are_refused_before_any_request(online, tmp_path, tag):
    with pytest.raises(MisiError, match="vMAJOR.MINOR.PATCH"):
        hub.push_dataset(
            make_fake_folder(tmp_path / "fake"),
            REPO,
            tag=tag,
            token=TOKEN,
            endpoint=online.endpoint,
            allow_small=True,
        )
    assert online.requests == []


def test_not_a_dataset_folder(tmp_path):
    with pytest.raises(MisiError, match="manifest.json"):
        hub.push_dataset(tmp_path, REPO, dry_run=True)


def test_push_to_branch_without_tag(online, tmp_path):
    double = online
    folder = make_fake_folder(tmp_path / "fake")
    result = hub.push_dataset(
        folder, REPO, revision="dev", private=True, token=TOKEN, endpoint=double.endpoint
    )
    repo = double.repos[REPO]
    assert repo.private and "dev" in repo.branches and repo.tags == {}
    assert set(double.files_at(REPO, "dev")) - {".gitattributes"} == _pushable(folder)
    assert set(double.files_at(REPO, "main")) == {".gitattributes"}
    assert result.commit_oid == repo.branches["dev"]
    assert json.loads((folder / "manifest.json").read_text())["version"] is None
    assert json.loads(double.files_at(REPO, "dev")["manifest.json"])["version"] is None

    # then a release tag on that branch; an unchanged re-push still tags the current head
    hub.push_dataset(
        folder,
        REPO,
        revision="dev",
        tag="v1.0.0",
        token=TOKEN,
        endpoint=double.endpoint,
        allow_small=True,
    )
    assert repo.tags["v1.0.0"] == repo.branches["dev"]
    assert json.loads(double.files_at(REPO, "v1.0.0")["manifest.json"])["version"] == "v1.0.0"


def test_hub_errors_become_misi_errors(online, tmp_path):
    folder = make_fake_folder(tmp_path / "fake")
    with pytest.raises(MisiError, match=REPO) as err:
        hub.push_dataset(
            folder, REPO, tag="v0.1.0", token="hf_wrong", endpoint=online.endpoint, allow_small=True
        )
    assert "hf_wrong" not in str(err.value)
    assert not [r for r in online.requests if "/commit/" in r[1]]


def test_failed_upload_leaves_the_folder_as_it_was(online, tmp_path):
    double = online
    folder = make_fake_folder(tmp_path / "fake")
    before = folder_state(folder)
    double.refuse_commits = True
    with pytest.raises(MisiError, match="refused the push"):
        hub.push_dataset(
            folder, REPO, tag="v0.2.0", token=TOKEN, endpoint=double.endpoint, allow_small=True
        )
    assert folder_state(folder) == before
    assert "v0.2.0" not in double.repos[REPO].tags


def test_push_refuses_a_shard_that_differs_from_the_manifest(online, tmp_path):
    double = online
    folder = make_fake_folder(tmp_path / "fake")
    manifest = json.loads((folder / "manifest.json").read_text())
    rel = sorted(manifest["shards"])[0]
    original = (folder / rel).read_bytes()
    data = bytearray(original)
    data[len(data) // 2] ^= 0xFF  # one flipped byte
    (folder / rel).write_bytes(bytes(data))
    with pytest.raises(MisiError, match=f"{rel}: sha256 differs"):
        hub.push_dataset(
            folder, REPO, tag="v0.3.0", token=TOKEN, endpoint=double.endpoint, allow_small=True
        )
    assert not double.requests  # refused before contacting the Hub
    # a shard the manifest does not list (a stale config of another build) is refused too
    (folder / rel).write_bytes(original)
    (folder / "docking").mkdir()
    (folder / "docking" / "test-00000-of-00001.parquet").write_bytes(original)
    with pytest.raises(MisiError, match="docking/test-00000-of-00001.parquet: not listed"):
        hub.push_dataset(folder, REPO, dry_run=True)


def test_push_refuses_a_build_whose_validation_failed(online, tmp_path):
    from misi_bench.builder.store import manifest as manifest_io

    folder = make_fake_folder(tmp_path / "fake")
    manifest = manifest_io.read_manifest(folder)
    manifest["validation"] = {"ok": False, "checked": 3, "problems": ["rotation/test: bad answer"]}
    manifest_io.write_manifest(folder, manifest)
    with pytest.raises(MisiError, match="validation failed.*bad answer"):
        hub.push_dataset(
            folder, REPO, tag="v0.4.0", token=TOKEN, endpoint=online.endpoint, allow_small=True
        )
    assert not online.requests


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("validation", "ok", r"'validation' is str 'ok', not an object"),
        ("validation", {"ok": "true", "checked": 3, "problems": []}, r"validation\.ok is 'true'"),
        ("audit", {"ok": 1, "tasks": {}}, r"audit\.ok is 1, not true or false"),
        ("counts", {"rotation": {"test": "1"}}, r"counts is not \{config: \{split: count\}\}"),
    ],
)
def test_push_refuses_a_manifest_of_the_wrong_shape(online, tmp_path, field, value, message):
    """A hand-edited manifest (``"validation": "ok"``, a verdict that is not true/false, counts
    as text) is not a build's record: refused before the Hub is contacted, naming the field."""
    from misi_bench.builder.store import manifest as manifest_io

    folder = make_fake_folder(tmp_path / "fake")
    manifest = manifest_io.read_manifest(folder)
    assert manifest_io.manifest_problems(manifest) == []
    manifest[field] = value
    manifest_io.write_manifest(folder, manifest)
    with pytest.raises(MisiError, match=r"manifest\.json: not a build's manifest: " + message):
        hub.push_dataset(
            folder, REPO, tag="v0.4.1", token=TOKEN, endpoint=online.endpoint, allow_small=True
        )
    assert not online.requests
