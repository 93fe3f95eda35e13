"""Read the answer-bearing residue labels back from the pocket pictures with tesseract (OCR).

For every complex of a data set with H-bonds, the pictures T8 and T9 show (the whole pocket in
the six views, as ``tasks.base.six_views`` requests them) are rendered and read by the
``tesseract`` binary (Debian's ``tesseract-ocr``; called as a subprocess, no Python binding).
A bond's residue label (``ASN 460``, with its chain where the picture names chains) counts as
found when its name and number appear as consecutive words in the OCR text of at least one
view. Prints, per set, the share of answer-bearing residue labels found in at least one view
and per view; with ``--json`` also a machine-readable line.

The same code reads the samples build's pictures in the slow lane (``tests/test_ocr.py``).
Run: ``python -m scripts.ocr_labels [--set samples|heldout|all] [--size 512] [--workers 2]``.
Runs against whatever ``misi_bench`` is importable (``PYTHONPATH`` picks the checkout), so the
same script measures an older checkout side by side.
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import os
import re
import shutil
import subprocess
from concurrent.futures import ProcessPoolExecutor

from PIL import Image, ImageOps

log = logging.getLogger(__name__)

SETS = ("samples", "heldout")
#: Upscaling before OCR (tesseract reads glyphs of 20-40 px best; labels are 13 px at 512).
OCR_SCALE = 3
OCR_TIMEOUT_S = 60


def have_tesseract() -> bool:
    return shutil.which("tesseract") is not None


def ocr_words(png: bytes) -> list[str]:
    """The words tesseract reads in a picture (light text on black: inverted, grey, upscaled;
    page segmentation 11, sparse text)."""
    with Image.open(io.BytesIO(png)) as image:
        grey = ImageOps.invert(image.convert("L"))
        big = grey.resize(
            (grey.width * OCR_SCALE, grey.height * OCR_SCALE), Image.Resampling.LANCZOS
        )
        buf = io.BytesIO()
        big.save(buf, format="PNG")
    done = subprocess.run(
        ["tesseract", "stdin", "stdout", "--psm", "11", "-l", "eng"],
        input=buf.getvalue(),
        capture_output=True,
        timeout=OCR_TIMEOUT_S,
        check=True,
        env={**os.environ, "OMP_THREAD_LIMIT": "1"},  # one core per call (a shared machine)
    )
    text = done.stdout.decode("utf-8", "replace").upper()
    return re.findall(r"[A-Z0-9]+", text)


def found_labels(words: list[str], labels: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """The (name, number) residue labels among ``words`` as consecutive words (or glued)."""
    pairs = set(zip(words, words[1:])) | {(w, "") for w in words}
    out = set()
    for name, number in labels:
        if (name, number) in pairs or (name + number, "") in pairs:
            out.add((name, number))
    return out


def answer_residues(cx, hbonds) -> set[tuple[str, str]]:
    """(residue name, number text) of each bond's residue (the label T8/T9 answers need)."""
    out = set()
    for b in hbonds:
        r = cx.residues[int(cx.residue_index[b.protein_atom])]
        out.add((r.name, r.number_text))
    return out


def measure_complex(args: tuple) -> dict:
    """OCR result of one complex: labels needed, found per view, found in any view."""
    ref, size = args
    from misi_bench.builder.chemistry.structure import load_complex  # noqa: PLC0415
    from misi_bench.builder.scene.cache import encode_png  # noqa: PLC0415
    from misi_bench.builder.scene.raster import render_image  # noqa: PLC0415
    from misi_bench.builder.tasks.annotation import annotate  # noqa: PLC0415
    from misi_bench.builder.tasks.base import six_views  # noqa: PLC0415

    cx = load_complex(ref)
    ann = annotate(cx, size)
    needed = answer_residues(cx, ann.hbonds)
    per_view: dict[str, int] = {}
    seen: set = set()
    if needed:
        for spec in six_views(ann):
            png = encode_png(render_image(cx, spec.request))
            got = found_labels(ocr_words(png), needed)
            per_view[spec.request.view] = len(got)
            seen |= got
    return {"pdb_id": ref.pdb_id, "needed": len(needed), "found": len(seen), "views": per_view}


def measure(refs, size: int, workers: int) -> list[dict]:
    jobs = [(ref, size) for ref in refs]
    if workers <= 1:
        return [measure_complex(j) for j in jobs]
    with ProcessPoolExecutor(workers) as pool:
        return list(pool.map(measure_complex, jobs))


def summary(results: list[dict]) -> dict:
    needed = sum(r["needed"] for r in results)
    found = sum(r["found"] for r in results)
    views: dict[str, int] = {}
    for r in results:
        for v, n in r["views"].items():
            views[v] = views.get(v, 0) + n
    return {
        "complexes": sum(1 for r in results if r["needed"]),
        "needed": needed,
        "found": found,
        "share": round(found / needed, 4) if needed else None,
        "per_view_share": {v: round(n / needed, 4) for v, n in views.items()} if needed else {},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--set", choices=(*SETS, "all"), default="all")
    parser.add_argument("--size", type=int, default=None)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    from misi_bench.builder.core.constants import DEFAULT_IMAGE_SIZE  # noqa: PLC0415
    from misi_bench.builder.store.sources import discover  # noqa: PLC0415

    from .fixtures import fixture_root  # noqa: PLC0415

    if not have_tesseract():
        raise SystemExit("tesseract not found: apt-get install -y tesseract-ocr")
    size = args.size or DEFAULT_IMAGE_SIZE
    for name in SETS if args.set == "all" else (args.set,):
        refs = discover("samples" if name == "samples" else str(fixture_root(name)))
        s = summary(measure(refs, size, args.workers))
        print(
            f"{name} ({s['complexes']} complexes with H-bonds, {size} px): OCR found "
            f"{s['found']}/{s['needed']} answer-bearing residue labels in at least one view "
            f"({100 * (s['share'] or 0):.1f}%); per view: "
            + ", ".join(f"{v} {100 * x:.1f}%" for v, x in s["per_view_share"].items())
        )
        if args.json:
            print(json.dumps({"set": name, "size": size, **s}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
