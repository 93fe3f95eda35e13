"""The upstream VLMEvalKit contribution (``eval_plugins/upstream/vlmevalkit``): applied with
``patch -p1`` to a copy of the installed ``vlmeval``, VLMEvalKit's own registry knows the MiSI
datasets without ``misi_bench.eval_plugins.vlmevalkit.register()``, and its runner scores them.

Only the weight-free oracle model is registered in the subprocess (VLMEvalKit has no model
without weights); the dataset side is VLMEvalKit's alone. The copy's folder holds the torchvision
shim as ``sitecustomize.py`` (environment fix, see ``harness_support.TORCHVISION_SHIM``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from misi_bench.eval_plugins.common import TASKS

from harness_support import patched_copy

ROOT = Path(__file__).resolve().parents[1]
PATCH = ROOT / "eval_plugins" / "upstream" / "vlmevalkit" / "0001-add-misi-datasets.patch"


@pytest.mark.slow
def test_patched_vlmevalkit_registers_and_scores_misi(tmp_path, data_dir):
    import pandas as pd

    site = patched_copy(tmp_path, "vlmeval", [PATCH])
    assert (site / "vlmeval" / "dataset" / "misi.py").is_file()
    script = textwrap.dedent("""
        import sys
        import vlmeval.dataset as vd
        import misi_bench.eval_plugins.vlmevalkit.datasets as ours
        assert vd.__file__.startswith(sys.argv[1]), vd.__file__
        assert {"MiSI", "MiSI_tiny", "MiSI_docking_tiny"} <= set(vd.SUPPORTED_DATASETS)
        assert vd.MiSIBench.__name__ == "MiSIBench" and vd.MiSIBench in vd.DATASET_CLASSES
        from misi_bench.eval_plugins.vlmevalkit import oracle
        oracle.register()  # the model only
        from vlmeval.run import main
        sys.argv = ["run.py", *sys.argv[2:]]
        main()
        assert ours.EVALUATED, "no evaluation ran"
    """)
    (tmp_path / "lmu").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MISI_BENCH_")}
    env.update(
        {
            "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)]),
            "HF_DATASETS_OFFLINE": "1",
            "HF_HUB_OFFLINE": "1",
            "HF_HOME": str(tmp_path / "hf"),
            "LMUData": str(tmp_path / "lmu"),
            "MISI_BENCH_REPO": str(data_dir),
        }
    )
    work = tmp_path / "work"
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            script,
            str(site),
            "--data",
            "MiSI_tiny",
            "--model",
            "misi_oracle",
            "--work-dir",
            str(work),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    table = pd.read_csv(work / "misi_oracle" / "misi_oracle_MiSI_tiny_acc.csv")
    scores = dict(zip(table["task"], table["score"]))
    for task in TASKS:
        assert scores[task] == 1.0, task
