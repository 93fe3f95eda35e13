"""A tiny Qwen2-VL made on the spot for the SFT tests: a word-level tokenizer trained on the
export's own text, the real Qwen2-VL image processor class (images shrunk to 56 x 56 px, i.e.
4 merged image tokens each) and a randomly initialised two-layer model. Nothing is downloaded.

Used by the TRL test in the main environment and by the LLaMA-Factory / ms-swift scripts in
their side venvs (so it only uses transformers/tokenizers APIs that those versions share).
"""

from __future__ import annotations

import sys
import types
from collections.abc import Iterable

from misi_bench.eval_plugins._torch_compat import ensure_torchvision_importable

SPECIAL = [
    "<pad>",
    "<unk>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|image_pad|>",
    "<|video_pad|>",
    "<|endoftext|>",
]
#: Image side after resizing (px): 56 x 56 = 4 x 4 patches of 14 px = 4 merged tokens.
IMAGE_PIXELS = 56 * 56
#: Our own minimal chat template (Qwen-style turns; an image entry becomes the vision tokens).
CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def tiny_tokenizer(texts: Iterable[str]):
    """A ``PreTrainedTokenizerFast`` (word level, whitespace/punctuation split) trained on ``texts``."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(
        list(texts) + ["user assistant system"],
        trainers.WordLevelTrainer(special_tokens=SPECIAL, min_frequency=1),
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token="<pad>",
        unk_token="<unk>",
        eos_token="<|im_end|>",
        additional_special_tokens=SPECIAL[2:],
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def tiny_processor(texts: Iterable[str]):
    """A ``Qwen2VLProcessor`` from the tiny tokenizer and Qwen2-VL's own image/video processors."""
    ensure_torchvision_importable()
    from transformers import Qwen2VLImageProcessor, Qwen2VLProcessor

    tokenizer = tiny_tokenizer(texts)
    size = {"shortest_edge": IMAGE_PIXELS, "longest_edge": IMAGE_PIXELS}
    image_processor = Qwen2VLImageProcessor(size=size)
    try:
        from transformers import Qwen2VLVideoProcessor

        video_processor = Qwen2VLVideoProcessor(size=size)
    except ImportError:  # older transformers keep video handling in the image processor
        video_processor = None
    return Qwen2VLProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        video_processor=video_processor,
        chat_template=CHAT_TEMPLATE,
    )


def tiny_config(processor):
    """A two-layer ``Qwen2VLConfig`` (hidden size 32) whose token ids match ``processor``."""
    from transformers import Qwen2VLConfig

    tok = processor.tokenizer
    ids = {
        name: tok.convert_tokens_to_ids(t)
        for name, t in (
            ("image_token_id", "<|image_pad|>"),
            ("video_token_id", "<|video_pad|>"),
            ("vision_start_token_id", "<|vision_start|>"),
            ("vision_end_token_id", "<|vision_end|>"),
        )
    }
    text = {
        "vocab_size": len(tok),
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "num_key_value_heads": 1,
        "max_position_embeddings": 4096,
        "rope_parameters": {
            "rope_type": "default",
            "rope_theta": 10000.0,
            "mrope_section": [2, 3, 3],
        },
        "pad_token_id": tok.pad_token_id,
        "eos_token_id": tok.eos_token_id,
        "bos_token_id": None,
        **ids,
    }
    vision = {
        "depth": 1,
        "embed_dim": 32,
        "hidden_size": 32,
        "num_heads": 2,
        "mlp_ratio": 2,
        "patch_size": 14,
        "spatial_merge_size": 2,
        "temporal_patch_size": 2,
    }
    return Qwen2VLConfig(text_config=text, vision_config=vision, **ids)


def tiny_model(processor, seed: int = 0):
    """A randomly initialised ``Qwen2VLForConditionalGeneration`` of :func:`tiny_config`."""
    import torch
    from transformers import Qwen2VLForConditionalGeneration

    torch.manual_seed(seed)
    return Qwen2VLForConditionalGeneration(tiny_config(processor))


class _Unavailable(types.ModuleType):
    """Stands in for a module whose compiled extension cannot load; any use raises."""

    def __init__(self, name: str, reason: str):
        import importlib.machinery

        super().__init__(name)
        self._reason = reason
        self.__spec__ = importlib.machinery.ModuleSpec(name, None)

    def __getattr__(self, attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise ImportError(f"{self.__name__} is unavailable here ({self._reason})")


def import_workarounds() -> None:
    """Make LLaMA-Factory and ms-swift importable next to CPU-only torch: torchvision's ops get the shim of
    :mod:`misi_bench.eval_plugins._torch_compat`; PyPI's torchaudio (a CUDA build, imported at the
    top of ``llamafactory.data.mm_plugin`` and by ms-swift for audio inputs only) is replaced, when its extension
    cannot load, by a module that raises on use. The exports carry no audio, so no code path
    that the test exercises touches it."""
    from misi_bench.eval_plugins._torch_compat import ensure_torchvision_importable

    ensure_torchvision_importable()
    try:
        import torchaudio  # noqa: F401
    except ImportError:  # not installed: nothing to work around
        pass
    except OSError as exc:
        for name in [m for m in sys.modules if m == "torchaudio" or m.startswith("torchaudio.")]:
            del sys.modules[name]
        sys.modules["torchaudio"] = _Unavailable("torchaudio", str(exc).splitlines()[0])
