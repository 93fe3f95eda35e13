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
    from misi_bench.builder.chemistry.samples import raw_refs as refs

    return {r.pdb_id: r for r in refs()}


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory):
    """A small real build (four embedded complexes, every task) shared by the harness tests."""
    from harness_support import tiny_dataset

    return tiny_dataset(tmp_path_factory.mktemp("misi_data"))
