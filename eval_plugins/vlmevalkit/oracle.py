"""Reference models for checking the VLMEvalKit integration end to end (no weights, no network).

``misi_oracle`` answers each question with its gold answer, looked up by the question text in
the dataset folder ``misi_bench.hub_repo_id()`` names; ``misi_constant`` always answers
``$MISI_CONSTANT_ANSWER`` (default ``A``). :func:`register` adds both to ``supported_VLM``.
"""

from __future__ import annotations

import os
from functools import partial

from misi_bench.eval_plugins._torch_compat import ensure_torchvision_importable
from misi_bench.eval_plugins.common import data_location, gold_by_id

ensure_torchvision_importable()

from vlmeval.vlm.base import BaseModel


class MisiOracle(BaseModel):
    INTERLEAVE = True

    def __init__(self, data_path: str | None = None, **kwargs):
        super().__init__()

        self.gold = gold_by_id(data_path or data_location()[0])

    def generate_inner(self, message, dataset=None):
        images = [m["value"] for m in message if m["type"] == "image"]
        assert images and all(os.path.exists(p) for p in images), images
        # images are written as <question id>_<k>.png by the dataset class
        return self.gold[os.path.basename(images[0]).rsplit("_", 1)[0]]


class MisiConstant(BaseModel):
    INTERLEAVE = True

    def __init__(self, answer: str | None = None, **kwargs):
        super().__init__()
        self.answer = answer if answer is not None else os.environ.get("MISI_CONSTANT_ANSWER", "A")

    def generate_inner(self, message, dataset=None):
        return self.answer


def register() -> list[str]:
    from vlmeval.config import supported_VLM

    supported_VLM["misi_oracle"] = partial(MisiOracle)
    supported_VLM["misi_constant"] = partial(MisiConstant)
    return ["misi_oracle", "misi_constant"]
