"""Load an ms-swift export with ms-swift's own code (run in its side venv by the tests).

``python sft_consumer_swift.py EXPORT_DIR RESULT_JSON``: loads ``EXPORT_DIR/misi_bench_train.jsonl``
with ``swift.dataset.load_dataset`` (its automatic messages preprocessor), then encodes every
row for training with ms-swift's ``qwen2_vl`` template (``swift.template.get_template``) over a
tiny processor from :mod:`sft_support` that ``swift.model.get_processor`` reads back from a
local folder. Relative image paths resolve against ``$ROOT_IMAGE_DIR`` (set to the export
folder, as docs/sft-export.md's launch command does) through ms-swift's own path check. Writes what it saw, row by row.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main(export_dir: str, result_path: str) -> None:
    from sft_support import import_workarounds, tiny_config, tiny_processor

    import_workarounds()
    os.environ["ROOT_IMAGE_DIR"] = export_dir
    from swift.dataset import load_dataset
    from swift.model import get_processor
    from swift.template import get_template
    from swift.template.vision_utils import _check_path

    train, _ = load_dataset(
        [os.path.join(export_dir, "misi_bench_train.jsonl")], num_proc=1, load_from_cache_file=False
    )
    rows = [
        {"messages": r["messages"], "images": [_check_path(i["path"]) for i in r["images"]]}
        for r in train
    ]
    texts = [m["content"].replace("<image>", " ") for r in rows for m in r["messages"]]
    with tempfile.TemporaryDirectory() as tmp:
        built = tiny_processor(texts)
        built.save_pretrained(tmp)
        tiny_config(built).save_pretrained(tmp)
        processor = get_processor(tmp, model_type="qwen2_vl", download_model=False)
        template = get_template(processor, template_type="qwen2_vl", max_length=8192)
        template.set_mode("train")
        tokenizer = processor.tokenizer
        vision_start = tokenizer.convert_tokens_to_ids("<|vision_start|>")
        image_pad = tokenizer.convert_tokens_to_ids("<|image_pad|>")
        for row, raw in zip(rows, train):
            enc = template.encode(dict(raw))
            ids, labels = list(enc["input_ids"]), list(enc["labels"])
            row["vision_starts"] = ids.count(vision_start)
            row["image_pads"] = ids.count(image_pad)
            row["image_grids"] = len(enc["image_grid_thw"])
            row["label_text"] = tokenizer.decode(
                [t for t in labels if t >= 0], skip_special_tokens=True
            )
    with open(result_path, "w", encoding="utf-8") as fh:
        json.dump({"rows": rows}, fh)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
