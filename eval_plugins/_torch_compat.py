"""Make ``import torchvision`` work when its compiled ops cannot load (CPU-only torch).

PyPI's Linux torchvision wheels are CUDA builds; next to a CPU-only torch (what the CI installs,
so that no multi-GB CUDA stack is pulled) their ``_C`` extension cannot load. torchvision then
still registers fake kernels for ``torchvision::nms`` and ``torchvision::qnms``
(``torchvision/_meta_registrations.py``), which fails with "operator torchvision::nms does not
exist" and makes ``import torchvision`` (and so ``transformers``' image utilities and VLMEvalKit)
crash. When, and only when, ``_C`` cannot load, this declares those two operator schemas so that
the import goes through; calling ``torchvision.ops.nms`` then still raises torchvision's own
"Couldn't load custom C++ ops" error. Harness code paths used by MiSI-Bench do not call them.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import sys

_LIBRARY = None  # keeps the operator definitions alive


def ensure_torchvision_importable() -> bool:
    """Apply the workaround if needed; True when it was applied. Safe to call repeatedly."""
    global _LIBRARY
    if _LIBRARY is not None or "torchvision" in sys.modules:
        return _LIBRARY is not None
    try:
        spec = importlib.util.find_spec("torchvision")
    except (ImportError, ValueError):
        return False
    if spec is None or not spec.origin:
        return False
    import torch

    libs = glob.glob(os.path.join(os.path.dirname(spec.origin), "_C*.so")) + glob.glob(
        os.path.join(os.path.dirname(spec.origin), "_C*.pyd")
    )
    if not libs:
        return False
    try:
        torch.ops.load_library(libs[0])
        return False
    except (OSError, RuntimeError):
        pass
    lib = torch.library.Library("torchvision", "DEF")  # noqa: TOR901
    for name in ("nms", "qnms"):
        try:
            lib.define(f"{name}(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
        except RuntimeError:  # already defined by someone else
            pass
    _LIBRARY = lib
    return True
