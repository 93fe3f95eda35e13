"""Export the published dataset to the training formats of supervised fine-tuning stacks.

``misi-bench export-sft`` reads a build folder or Hub repository (the published Parquet schema,
docs/spec.md section 8) shard by shard and writes one of:

- ``hf``: a ``datasets`` Parquet folder with ``messages`` + ``images`` (TRL ``SFTTrainer``,
  ``processor.apply_chat_template``);
- ``llamafactory``: ShareGPT-style JSON with ``<image>`` placeholders, image files and the
  ``dataset_info.json`` entry;
- ``swift``: ms-swift JSONL (``messages`` + ``images``) with image files.

Owns: :mod:`.source` (locating and streaming the rows), :mod:`.formats` (the writers),
:mod:`.export` (the driver), :mod:`.commands` (the CLI); speed/size figures: ``python -m scripts.bench_export``.
May import ``misi_bench.builder.core``, ``datasets``, ``pyarrow`` and ``huggingface_hub``; never
builder chemistry/scene/tasks/dataset code. Nothing is imported at package import time.
"""
