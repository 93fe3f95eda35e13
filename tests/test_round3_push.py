"""Issue 49, items 7 and 8 (push): a tagged push of what docs/releasing.md forbids publishing
(the embedded sample set, a test split under 100 complexes) is refused unless asked twice
(``--allow-small``), before the Hub is contacted; a tag with a trailing newline is refused; an
unreachable Hub ends in one line. The Hub is the protocol double of ``test_hub``."""

from __future__ import annotations

import os
import socket
import subprocess

import pytest
from misi_bench.builder.core.errors import MisiError
from misi_bench.builder.dataset import hub

from cli_support import CLI, one_error_line
from test_hub import REPO, TOKEN, make_fake_folder, online  # noqa: F401 (online: a fixture)


def test_a_tagged_push_of_the_sample_set_is_refused_unless_asked_twice(online, tmp_path):  # noqa: F811
    folder = make_fake_folder(tmp_path / "fake")  # source samples, one test complex
    with pytest.raises(MisiError) as err:
        hub.push_dataset(folder, REPO, tag="v0.1.0", token=TOKEN, endpoint=online.endpoint)
    message = str(err.value)
    assert "refusing to push release v0.1.0" in message and "\n" not in message
    assert "embedded sample set" in message and "1 test complexes" in message
    assert "--allow-small" in message
    assert online.requests == []  # before the Hub is contacted
    assert "v0.1.0" not in getattr(online.repos.get(REPO), "tags", {})
    # a push without a tag (a branch to look at) still only warns
    hub.push_dataset(folder, REPO, revision="preview", token=TOKEN, endpoint=online.endpoint)
    # asked twice: tagged
    hub.push_dataset(
        folder, REPO, tag="v0.1.0", token=TOKEN, endpoint=online.endpoint, allow_small=True
    )
    assert "v0.1.0" in online.repos[REPO].tags


def test_the_command_line_refusal_is_one_line(tmp_path):
    folder = make_fake_folder(tmp_path / "fake")
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", ""), "HF_TOKEN": TOKEN}
    env["HF_ENDPOINT"] = "http://127.0.0.1:9"  # never reached
    proc = subprocess.run(
        [*CLI, "push", str(folder), "--repo", REPO, "--tag", "v0.1.0"],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    one_error_line(proc, "refusing to push release v0.1.0")


@pytest.mark.parametrize("tag", ["v1.0.0\n", "v1.0.0\r\n", " v1.0.0", "v1.0.0 "])
def test_a_tag_with_a_trailing_newline_is_refused(online, tmp_path, tag):  # noqa: F811
    folder = make_fake_folder(tmp_path / "fake")
    with pytest.raises(MisiError, match="not a release version"):
        hub.push_dataset(
            folder, REPO, tag=tag, token=TOKEN, endpoint=online.endpoint, allow_small=True
        )
    assert online.requests == []


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_an_unreachable_hub_is_one_line(tmp_path):
    folder = make_fake_folder(tmp_path / "fake")
    endpoint = f"http://127.0.0.1:{_closed_port()}"
    with pytest.raises(MisiError, match="cannot reach the Hub at") as err:
        hub.push_dataset(
            folder, REPO, tag="v0.1.0", token=TOKEN, endpoint=endpoint, allow_small=True
        )
    assert "\n" not in str(err.value) and TOKEN not in str(err.value)
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", ""), "HF_TOKEN": TOKEN}
    env.update(HF_ENDPOINT=endpoint, HF_HUB_DISABLE_TELEMETRY="1")
    env.pop("HF_HUB_OFFLINE", None)
    proc = subprocess.run(
        [*CLI, "push", str(folder), "--repo", REPO, "--tag", "v0.1.0", "--allow-small"],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and proc.stderr.count("misi-bench: error:") == 1
    assert "cannot reach the Hub" in proc.stderr
