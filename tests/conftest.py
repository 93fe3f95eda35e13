"""Shared fixtures: the embedded real complexes, loaded once per session."""

import os
import shutil
import tempfile

import pytest

os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

# load_dataset caches every folder it reads (hundreds of MB per run); unless the caller chose a
# cache, the suite uses its own and removes it at the end, so runs do not fill ~/.cache.
_OWN_DATASETS_CACHE = None
if "HF_DATASETS_CACHE" not in os.environ:
    _OWN_DATASETS_CACHE = tempfile.mkdtemp(prefix="misi-tests-hf-datasets-")
    os.environ["HF_DATASETS_CACHE"] = _OWN_DATASETS_CACHE


def pytest_unconfigure(config):
    if _OWN_DATASETS_CACHE:
        shutil.rmtree(_OWN_DATASETS_CACHE, ignore_errors=True)


@pytest.fixture(scope="module", autouse=True)
def _release_the_chemical_dictionary():
    """After each module, give back biotite's decoded chemical component dictionary (665 MB
    that would otherwise stay in whichever xdist worker read a raw entry first; the fast lane's
    memory, docs/testing.md)."""
    yield
    import gc

    from misi_bench.builder.chemistry.ccd import release_dictionary

    release_dictionary()
    gc.collect()


@pytest.fixture(scope="session")
def sample_refs():
    from misi_bench.builder.chemistry.samples import sample_refs as refs

    return refs()


@pytest.fixture(scope="session")
def complexes(sample_refs):
    from misi_bench.builder.chemistry.structure import load_complex

    return {r.pdb_id: load_complex(r) for r in sample_refs}


@pytest.fixture(scope="session")
def raw_refs():
    from scripts.fixtures import raw_refs as refs

    return {r.pdb_id: r for r in refs()}


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory):
    """A small real build (four embedded complexes, every task, validated) shared by the
    harness, report, API, audit and build tests. Read only: copy it to change it."""
    from harness_support import tiny_dataset

    return tiny_dataset(tmp_path_factory.mktemp("misi_data"), validate=True)


#: The configs of :func:`explicit_build`.
EXPLICIT_BUILD_CONFIGS = ("translation", "zooming", "residue_ligand", "pocket_ligand")


@pytest.fixture(scope="session")
def explicit_build(tmp_path_factory):
    """A real ``explicit``-profile build (four embedded complexes, tiny 2, validated, not audited)
    of T1, T3, T4 and T9, shared by ``test_audit`` (the pixel solver reads T1/T3 from its
    pictures) and ``test_profiles`` (beside the ``paper`` session build). Read only."""
    from misi_bench.builder.dataset.build import build_dataset

    out = tmp_path_factory.mktemp("explicit") / "build"
    build_dataset(
        source="samples",
        out=out,
        limit=4,
        tasks=list(EXPLICIT_BUILD_CONFIGS),
        tiny_per_task=2,
        progress=False,
        audit=False,
        profile="explicit",
    )
    return out


#: The configs of :func:`cli_build` (those the CLI and score tests read).
CLI_BUILD_CONFIGS = ("rotation", "interaction_location", "pocket_ligand")


@pytest.fixture(scope="session")
def cli_build(tmp_path_factory):
    """A build made as a user makes it: ``misi-bench build --source samples --limit 4 --configs
    ...`` in a fresh folder (so the default ``./misi-bench``, with validation), four embedded
    complexes, three configs. Read only; shared by ``test_cli`` and ``test_score_cli``, which
    each made a build of their own before."""
    import subprocess
    import sys

    root = tmp_path_factory.mktemp("clibuild")
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from misi_bench import main; sys.exit(main(sys.argv[1:]))",
            "build",
            "--source",
            "samples",
            "--limit",
            "4",
            "--configs",
            *CLI_BUILD_CONFIGS,
            "--quiet",
        ],
        capture_output=True,
        text=True,
        cwd=root,
        timeout=1200,
    )
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    assert "validation: ok" in out.stdout
    return root / "misi-bench"


@pytest.fixture()
def running(data_dir, tmp_path):
    """The human app on a free port over the session build (``test_human_security.Running``),
    closed after the test; shared by the human app's security and limits tests."""
    from test_human_security import Running

    app = Running(data_dir, tmp_path / "out")
    try:
        yield app
    finally:
        app.close()
