"""A reference model for checking the lmms-eval integration end to end (no weights, no network).

``misi_oracle`` answers every question with its gold answer, read from the evaluated dataset
(``self.task_dict``, filled by lmms-eval's evaluator). With it every MiSI task must score 1.0.
For a constant answer use lmms-eval's built-in ``dummy`` model (``--model_args response=...``).
Registered by :func:`register` (this process) or by ``LMMS_EVAL_PLUGINS`` (see ``models``).
"""

from __future__ import annotations

from misi_bench.eval_plugins._torch_compat import ensure_torchvision_importable

ensure_torchvision_importable()

from lmms_eval.api.instance import Instance
from lmms_eval.api.model import lmms

MODEL_ID = "misi_oracle"


class MisiOracle(lmms):
    is_simple = True

    def __init__(self, check_images: bool = True, **kwargs) -> None:
        super().__init__()
        self.check_images = str(check_images).lower() not in ("0", "false", "no")

    def generate_until(self, requests: list[Instance]) -> list[str]:
        out = []
        for req in requests:
            _ctx, _gen_kwargs, doc_to_visual, doc_id, task, split = req.args
            doc = self.task_dict[task][split][doc_id]
            if self.check_images:  # the visuals must be the row's images, in order, as PIL RGB
                visuals = doc_to_visual(self.task_dict[task][split][doc_id])
                if [v.mode for v in visuals] != ["RGB"] * len(doc["image_views"]):
                    raise AssertionError(
                        f"{task}/{doc_id}: got {len(visuals)} visuals, modes {[v.mode for v in visuals]}"
                    )
            out.append(doc["answer"])
        return out

    def loglikelihood(self, requests):  # pragma: no cover - generation-only benchmark
        raise NotImplementedError("MiSI-Bench tasks are generate_until only")

    def generate_until_multi_round(self, requests):  # pragma: no cover
        raise NotImplementedError


def register() -> str:
    """Register ``misi_oracle`` in lmms-eval's model registry (this process only)."""
    from lmms_eval.models import MODEL_REGISTRY_V2
    from lmms_eval.models.registry_v2 import ModelManifest

    MODEL_REGISTRY_V2.register_manifest(
        ModelManifest(model_id=MODEL_ID, simple_class_path=f"{__name__}.MisiOracle"), overwrite=True
    )
    return MODEL_ID
