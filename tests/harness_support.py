"""Small helpers for end-to-end checks of the harness adapters (used by the test suite):
:func:`tiny_dataset` (a real build of four embedded complexes), patched copies of an installed
harness, a tiny Qwen2-VL for the trainer tests, and the averages a harness should report.
"""

from __future__ import annotations

from pathlib import Path

from misi_bench.builder.core.registry import TASK_NAMES as TASKS


def tiny_dataset(out: str | Path, *, validate: bool = False) -> Path:
    """A small real build of four embedded complexes in ``out`` (two in test, tiny 2 per task;
    every answer re-derived when ``validate``)."""
    from misi_bench.builder.dataset.build import build_dataset

    out = Path(out)
    build_dataset(
        source="samples", out=out, limit=4, tiny_per_task=2, progress=False, validate=validate
    )
    return out


#: ``sitecustomize.py`` for a subprocess: our torchvision shim, because CI pairs a CPU-only torch
#: with PyPI's CUDA torchvision (see ``eval_plugins/_torch_compat.py``); an environment fix only.
TORCHVISION_SHIM = (
    "from misi_bench.eval_plugins._torch_compat import ensure_torchvision_importable\n"
    "ensure_torchvision_importable()\n"
)


def patched_copy(tmp: str | Path, package: str, patches: list[Path]) -> Path:
    """A copy of the installed ``package`` under ``tmp/site`` with ``patches`` applied by
    ``patch -p1`` (paths in the patches start with the package folder), plus the shim above as
    ``sitecustomize.py``; put the returned folder first on a subprocess's ``PYTHONPATH``."""
    import importlib.util
    import shutil
    import subprocess

    installed = Path(importlib.util.find_spec(package).origin).parent
    site = Path(tmp) / "site"
    shutil.copytree(installed, site / package, ignore=shutil.ignore_patterns("__pycache__"))
    for patch in patches:
        proc = subprocess.run(
            ["patch", "-p1", "--forward", "-i", str(patch)],
            cwd=site,
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
    (site / "sitecustomize.py").write_text(TORCHVISION_SHIM)
    return site


def tiny_qwen2_vl(out: str | Path) -> Path:
    """Write a randomly initialised, tiny Qwen2-VL (one layer, width 32, a character-level
    tokenizer, a chat template) with its processor to ``out``: a model folder that lm-eval's
    ``hf-multimodal`` loads and runs on CPU in seconds, without any download. Its answers are
    noise; it exists to run the harness path end to end."""
    from misi_bench.eval_plugins._torch_compat import ensure_torchvision_importable

    ensure_torchvision_importable()
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import (
        PreTrainedTokenizerFast,
        Qwen2VLConfig,
        Qwen2VLForConditionalGeneration,
        Qwen2VLImageProcessor,
        Qwen2VLProcessor,
    )
    from transformers.models.qwen2_vl.video_processing_qwen2_vl import Qwen2VLVideoProcessor

    out = Path(out)
    special = [
        "<|endoftext|>",
        "<|im_start|>",
        "<|im_end|>",
        "<|vision_start|>",
        "<|vision_end|>",
        "<|image_pad|>",
        "<|video_pad|>",
    ]
    vocab = {
        t: i for i, t in enumerate(special + [chr(c) for c in range(32, 127)] + ["\n", "[UNK]"])
    }
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Split("", "isolated")
    tok.decoder = decoders.Fuse()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="[UNK]",
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=special[1:],
    )
    ids = {t: vocab[t] for t in special}
    config = Qwen2VLConfig(
        text_config={
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_hidden_layers": 1,
            "num_attention_heads": 2,
            "num_key_value_heads": 1,
            "vocab_size": len(vocab),
            "rope_scaling": {"type": "mrope", "mrope_section": [2, 2, 4]},
            "bos_token_id": ids["<|endoftext|>"],
            "eos_token_id": ids["<|im_end|>"],
        },
        vision_config={
            "depth": 1,
            "embed_dim": 32,
            "hidden_size": 32,
            "num_heads": 2,
            "mlp_ratio": 2,
        },
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
        bos_token_id=ids["<|endoftext|>"],
        eos_token_id=ids["<|im_end|>"],
    )
    torch.manual_seed(0)
    Qwen2VLForConditionalGeneration(config).save_pretrained(out)
    template = (
        "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{% if m['content'] is string %}{{ m['content'] }}"
        "{% else %}{% for c in m['content'] %}{% if c['type'] == 'image' %}<|vision_start|><|image_pad|>"
        "<|vision_end|>{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}"
        "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )
    Qwen2VLProcessor(
        image_processor=Qwen2VLImageProcessor(min_pixels=56 * 56, max_pixels=112 * 112),
        tokenizer=tokenizer,
        video_processor=Qwen2VLVideoProcessor(),
        chat_template=template,
    ).save_pretrained(out)
    return out


def expected_averages(
    data_dir: str | Path, limit: int, prediction, split: str = "test"
) -> dict[str, float]:
    """What a harness group must report for the first ``limit`` rows of each task when the
    model answers ``prediction(row)``: the scorer's own ``paper_average``, ``average_all_tasks``
    and ``average_headline_tasks`` (NaN where the scorer gives None), computed with
    :func:`misi_bench.builder.scoring.aggregate`, independently of the harness's aggregation."""
    import datasets
    from misi_bench.builder.scoring import aggregate
    from misi_bench.eval_plugins.common import score_doc_raw

    scored = []
    for task in TASKS:
        rows = datasets.load_dataset(str(data_dir), task, split=split)
        for row in rows.select(range(min(limit, len(rows)))):
            scored.append((task, score_doc_raw(row, prediction(row))))
    report = aggregate(scored)
    names = ("paper_average", "average_all_tasks", "average_headline_tasks")
    return {k: float("nan") if report[k] is None else report[k] for k in names}


def expected_block(data_dir: str | Path, limit: int, prediction, split: str = "test") -> dict:
    """The scorer's ``intervals`` block (``score_records``, as ``misi-bench score`` writes it) for
    the first ``limit`` rows of each task answered ``prediction(row)``: what every harness route
    must carry for the same answers."""
    import datasets
    from misi_bench.builder.scoring import score_records

    rows = []
    for task in TASKS:
        ds = datasets.load_dataset(str(data_dir), task, split=split).remove_columns(["images"])
        rows += list(ds.select(range(min(limit, len(ds)))))
    return score_records(rows, {r["id"]: prediction(r) for r in rows})["report"]["intervals"]


def same_figure(got, expected: float) -> bool:
    """Equal to 1e-9, NaN matching NaN (a harness writes NaN where the scorer gives None)."""
    import math

    got = float("nan") if got is None or got == "N/A" else float(got)
    return (math.isnan(got) and math.isnan(expected)) or math.isclose(got, expected, abs_tol=1e-9)
