"""The writers of the three SFT formats. Each takes :class:`~.source.SourceRow` objects one at a
time and keeps at most one output row group in memory.

Every format puts the row's images first, in prompt order, then the row's ``question`` text in
the user turn (the question refers to "Image 1", "Image 2", ... in that order), and the gold
``answer`` alone in the assistant turn.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from ...builder.core.errors import InputError
from ...builder.core.shards import config_glob, shard_name
from .source import SourceRow

#: Formats, their consumers, in help order.
FORMATS = {
    "hf": "Hugging Face datasets Parquet (messages + images), for TRL SFTTrainer / apply_chat_template",
    "llamafactory": "LLaMA-Factory ShareGPT JSON with <image> placeholders, image files and dataset_info.json",
    "swift": "ms-swift JSONL (messages + images) with image files",
}
IMAGE_PLACEHOLDER = "<image>"
IMAGE_DIR = "images"
#: Row group limits of the ``hf`` export (rows, or image bytes), and the size after which a new shard starts.
HF_GROUP_ROWS = 64
HF_GROUP_BYTES = 24 * 1024 * 1024
HF_SHARD_BYTES = 512 * 1024 * 1024
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", ".png"),
    (b"\xff\xd8\xff", ".jpg"),
    (b"RIFF", ".webp"),
    (b"GIF8", ".gif"),
)


def dataset_name(split: str) -> str:
    """Name of the export in ``dataset_info.json`` and of the JSON/JSONL file's stem."""
    return f"misi_bench_{split}"


def user_text(row: SourceRow) -> str:
    """The user turn of the text formats: one ``<image>`` per image in prompt order, then the question."""
    return IMAGE_PLACEHOLDER * len(row.images) + row.question


class ImageStore:
    """Image files under ``<root>/images/<h[:2]>/<h>.<ext>`` named by the SHA-256 ``h`` of their
    bytes: a picture that many rows share (the reference views) is written once. Whether a file
    exists is asked of the file system, so memory does not grow with the number of images."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.written = 0
        self.refs = 0

    def put(self, data: bytes, row_id: str) -> str:
        """Store ``data`` (an encoded image of row ``row_id``) and return its path relative to the root."""
        ext = next((e for magic, e in _MAGIC if data.startswith(magic)), None)
        if ext is None:
            raise InputError(row_id, "an image is not PNG, JPEG, WebP or GIF data")
        digest = hashlib.sha256(data).hexdigest()
        rel = f"{IMAGE_DIR}/{digest[:2]}/{digest}{ext}"
        path = self.root / rel
        self.refs += 1
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(path.name + ".tmp")
            tmp.write_bytes(data)
            os.replace(tmp, path)
            self.written += 1
        return rel


def hf_features():
    """``datasets.Features`` of the ``hf`` export (declared, so empty text fields stay typed)."""
    import datasets  # noqa: PLC0415

    content = datasets.List({"type": datasets.Value("string"), "text": datasets.Value("string")})
    return datasets.Features(
        {
            "messages": datasets.List({"role": datasets.Value("string"), "content": content}),
            "images": datasets.List(datasets.Image()),
            "id": datasets.Value("string"),
            "task": datasets.Value("string"),
        }
    )


class HFWriter:
    """``<out>/data/<split>-NNNNN-of-NNNNN.parquet`` plus a README whose YAML names the split, so
    ``datasets.load_dataset(out, split=split)`` reads it. The images are embedded in the rows
    (a Parquet dataset must be self-contained to load or push anywhere); each row group stores
    the image column dictionary-encoded, so views repeated inside a group are stored once."""

    def __init__(self, out: Path, split: str):
        self.out, self.split = Path(out), split
        self.schema = hf_features().arrow_schema
        self.group: list[dict] = []
        self.parts: list[Path] = []
        self.writer = None
        self.part_bytes = 0
        self.group_bytes = 0

    def add(self, row: SourceRow) -> None:
        user = [{"type": "image", "text": None} for _ in row.images] + [
            {"type": "text", "text": row.question}
        ]
        self.group.append(
            {
                "messages": [
                    {"role": "user", "content": user},
                    {"role": "assistant", "content": [{"type": "text", "text": row.answer}]},
                ],
                "images": [{"bytes": data, "path": None} for data in row.images],
                "id": row.id,
                "task": row.task,
            }
        )
        size = sum(map(len, row.images)) + len(row.question)
        self.part_bytes += size
        self.group_bytes += size
        if len(self.group) >= HF_GROUP_ROWS or self.group_bytes >= HF_GROUP_BYTES:
            self._flush(end_part=self.part_bytes >= HF_SHARD_BYTES)

    def _open_part(self):
        import pyarrow.parquet as pq  # noqa: PLC0415

        part = self.out / "data" / f".part{len(self.parts):05d}.parquet"
        part.parent.mkdir(parents=True, exist_ok=True)
        self.parts.append(part)
        self.writer = pq.ParquetWriter(
            part,
            self.schema,
            compression="zstd",
            write_statistics=False,
            use_dictionary=["images.list.element.bytes", "task"],
            dictionary_pagesize_limit=1 << 30,
        )
        return self.writer

    def _flush(self, end_part: bool = False) -> None:
        """Write the pending rows as one row group; ``end_part`` also closes the current shard."""
        import pyarrow as pa  # noqa: PLC0415

        if self.group:
            table = pa.Table.from_pylist(self.group, schema=self.schema)
            (self.writer or self._open_part()).write_table(table, row_group_size=len(self.group))
            self.group, self.group_bytes = [], 0
        if end_part and self.writer is not None:
            self.writer.close()
            self.writer, self.part_bytes = None, 0

    def close(self) -> None:
        self._flush(end_part=True)
        n = len(self.parts)
        for k, part in enumerate(self.parts):
            os.replace(part, part.with_name(shard_name(self.split, k, n)))
        card = (
            f"---\nconfigs:\n- config_name: default\n  data_files:\n  - split: {self.split}\n"
            f"    path: {config_glob('data', self.split)}\n---\n\n"
            "# MiSI-Bench SFT export (messages + images)\n\n"
            f"Chat-format rows of the MiSI-Bench {self.split} split; see misi_sft_export.json.\n"
        )
        (self.out / "README.md").write_text(card, encoding="utf-8")


class _JsonRowsWriter:
    """Rows as JSON objects (sorted keys, UTF-8), images as files from an :class:`ImageStore`."""

    suffix = ".jsonl"

    def __init__(self, out: Path, split: str):
        self.out, self.split = Path(out), split
        self.images = ImageStore(self.out)
        self.file_name = dataset_name(split) + self.suffix
        self.out.mkdir(parents=True, exist_ok=True)
        self.fh = open(self.out / self.file_name, "w", encoding="utf-8")  # noqa: SIM115 (closed in close())
        self.count = 0

    def record(self, row: SourceRow) -> dict:
        return {
            "messages": [
                {"role": "user", "content": user_text(row)},
                {"role": "assistant", "content": row.answer},
            ],
            "images": [self.images.put(data, row.id) for data in row.images],
            "id": row.id,
            "task": row.task,
        }

    def add(self, row: SourceRow) -> None:
        self.fh.write(json.dumps(self.record(row), ensure_ascii=False, sort_keys=True) + "\n")
        self.count += 1

    def close(self) -> None:
        self.fh.close()


class SwiftWriter(_JsonRowsWriter):
    """``<out>/misi_bench_<split>.jsonl``: ms-swift's standard ``messages`` + ``images`` rows
    (image paths relative to the export folder; launch ms-swift from it)."""


class LlamaFactoryWriter(_JsonRowsWriter):
    """``<out>/misi_bench_<split>.json`` (a JSON list, written row by row) in LLaMA-Factory's
    ShareGPT layout with OpenAI-style ``role``/``content`` tags, plus ``<out>/dataset_info.json``
    registering it as ``misi_bench_<split>``; image paths are relative to the export folder,
    which is the ``dataset_dir`` (and so the default ``media_dir``)."""

    suffix = ".json"

    def __init__(self, out: Path, split: str):
        super().__init__(out, split)
        self.fh.write("[")

    def add(self, row: SourceRow) -> None:
        sep = ",\n" if self.count else "\n"
        self.fh.write(sep + json.dumps(self.record(row), ensure_ascii=False, sort_keys=True))
        self.count += 1

    def close(self) -> None:
        self.fh.write("\n]\n")
        super().close()
        info = {
            dataset_name(self.split): {
                "file_name": self.file_name,
                "formatting": "sharegpt",
                "columns": {"messages": "messages", "images": "images"},
                "tags": {
                    "role_tag": "role",
                    "content_tag": "content",
                    "user_tag": "user",
                    "assistant_tag": "assistant",
                },
            }
        }
        (self.out / "dataset_info.json").write_text(
            json.dumps(info, indent=2) + "\n", encoding="utf-8"
        )


WRITERS = {"hf": HFWriter, "llamafactory": LlamaFactoryWriter, "swift": SwiftWriter}
