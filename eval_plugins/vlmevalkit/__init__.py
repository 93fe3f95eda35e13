"""MiSI-Bench for VLMEvalKit (PyPI ``ms-vlmeval``).

VLMEvalKit has no plugin hook: :func:`register` adds our dataset classes to
``vlmeval.dataset.DATASET_CLASSES`` / ``SUPPORTED_DATASETS`` in this process, and :func:`run`
does that and then runs VLMEvalKit's own runner (``vlmeval/run.py``) in the same process.
Importing ``vlmeval`` turns off TLS verification process-wide (``vlmeval/smp/misc.py``), so this
module imports it only inside :func:`register` / :func:`run`; keep it out of build and upload
processes.

Dataset names: ``MiSI_<config>`` (test split) and ``MiSI_<config>_tiny`` for each config,
``MiSI`` / ``MiSI_tiny`` for all of them together.
"""

from __future__ import annotations

from misi_bench.eval_plugins.vlmevalkit.datasets import DATASET_NAMES, register, run

__all__ = ["DATASET_NAMES", "register", "run"]
