"""Shared fixtures: the embedded real complexes, loaded once per session."""

import os

import pytest

os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")


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
