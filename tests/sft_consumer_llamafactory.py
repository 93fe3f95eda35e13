"""Load a LLaMA-Factory export with LLaMA-Factory's own code (run in its side venv by the tests).

``python sft_consumer_llamafactory.py EXPORT_DIR RESULT_JSON``: parses training arguments with
``llamafactory.hparams.get_train_args``, loads the dataset registered in ``EXPORT_DIR/
dataset_info.json`` through ``llamafactory.data.loader`` (its converter resolves the image
paths), then runs its full SFT preprocessing (``get_dataset`` with the ``qwen2_vl`` template and
multimodal plugin, tiny processor from :mod:`sft_support`). Writes what it saw, row by row, for
the test to compare with the source rows.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main(export_dir: str, result_path: str) -> None:
    from sft_support import IMAGE_PIXELS, import_workarounds, tiny_processor

    import_workarounds()
    from llamafactory.data import get_template_and_fix_tokenizer
    from llamafactory.data.loader import _get_merged_dataset, get_dataset
    from llamafactory.hparams import get_train_args

    with tempfile.TemporaryDirectory() as tmp:
        model_args, data_args, training_args, _, _ = get_train_args(
            {
                "model_name_or_path": tmp,
                "stage": "sft",
                "do_train": True,
                "finetuning_type": "full",
                "dataset": "misi_bench_train",
                "dataset_dir": export_dir,
                "template": "qwen2_vl",
                "cutoff_len": 8192,
                "image_max_pixels": IMAGE_PIXELS,
                "output_dir": os.path.join(tmp, "out"),
                "report_to": "none",
                "overwrite_cache": True,
                "preprocessing_num_workers": None,
            }
        )
        aligned = _get_merged_dataset(
            data_args.dataset, model_args, data_args, training_args, stage="sft"
        )
        rows = [
            {"prompt": r["_prompt"], "response": r["_response"], "images": r["_images"]}
            for r in aligned
        ]
        texts = [
            m["content"].replace("<image>", " ") for r in rows for m in r["prompt"] + r["response"]
        ]
        processor = tiny_processor(texts)
        tokenizer = processor.tokenizer
        template = get_template_and_fix_tokenizer(tokenizer, data_args)
        module = get_dataset(
            template, model_args, data_args, training_args, "sft", tokenizer, processor
        )
        train = module["train_dataset"]
        vision_start = tokenizer.convert_tokens_to_ids("<|vision_start|>")
        image_pad = tokenizer.convert_tokens_to_ids("<|image_pad|>")
        for row, ex in zip(rows, train):
            ids, labels = ex["input_ids"], ex["labels"]
            row["vision_starts"] = ids.count(vision_start)
            row["image_pads"] = ids.count(image_pad)
            row["label_text"] = tokenizer.decode(
                [t for t in labels if t >= 0], skip_special_tokens=True
            )
        result = {"rows": rows, "n_preprocessed": len(train), "template": data_args.template}
    with open(result_path, "w", encoding="utf-8") as fh:
        json.dump(result, fh)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
