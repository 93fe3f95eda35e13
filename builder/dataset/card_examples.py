"""The card's example sheets: one PNG per task (``examples/<task>.png``), the pictures of one
question in prompt order, each tile named under it (``image 3 · reference front``, ``image 7 ·
option B``) so that a reader of the card can tell the reference from the options."""

from __future__ import annotations

import io
import json
from pathlib import Path

from ..store.parquet import iter_config_rows
from . import card_tasks

#: Side (px) of one tile (a 512 px picture shown at half size: its labels stay readable) and
#: height of its caption bar; tiles per row.
TILE_PX = 256
CAPTION_PX = 22
COLUMNS = 4
_LETTERS = frozenset("ABCDEFGH")


def tile_caption(k: int, view: str) -> str:
    """The caption of the ``k``-th picture (0-based) of a question whose view name is ``view``:
    its number in the prompt and what it shows (a bare option letter reads ``option A``)."""
    name = f"option {view}" if view in _LETTERS else view
    return f"image {k + 1} · {name}"


def example_sheet(out: Path, task: str) -> str | None:
    """Save the pictures of the first test (else train) question of ``task`` as a captioned
    grid in ``examples/<task>.png`` and return the card's paragraph for it (None: no question)."""
    from PIL import Image, ImageDraw  # noqa: PLC0415

    from ..scene.labels import font  # noqa: PLC0415

    row = next(iter_config_rows(out, task, "test"), None) or next(
        iter_config_rows(out, task, "train"), None
    )
    if row is None:
        return None
    tiles = [Image.open(io.BytesIO(img["bytes"])).convert("RGB") for img in row["images"]]
    views = list(row["image_views"])
    columns = min(COLUMNS, len(tiles))
    rows = -(-len(tiles) // columns)
    cell = TILE_PX + CAPTION_PX
    sheet = Image.new("RGB", (TILE_PX * columns, cell * rows), (40, 40, 40))
    draw = ImageDraw.Draw(sheet)
    face = font(13)
    for k, tile in enumerate(tiles):
        x, y = (k % columns) * TILE_PX, (k // columns) * cell
        sheet.paste(
            tile.resize((TILE_PX - 2, TILE_PX - 2), Image.Resampling.LANCZOS), (x + 1, y + 1)
        )
        caption = tile_caption(k, views[k] if k < len(views) else "")
        draw.text((x + 6, y + TILE_PX + 4), caption, font=face, fill=(235, 235, 235))
    (out / "examples").mkdir(exist_ok=True)
    sheet.save(out / "examples" / f"{task}.png", format="PNG", optimize=False, compress_level=6)
    answer = row["answer"].replace("|", "\\|")
    return (
        f"**{task}** ({row['pdb_id'].upper()}; {len(tiles)} images, named under each tile; "
        f"{_subject(row)}answer `{answer}`)\n\n![{task} example](examples/{task}.png)"
    )


def _subject(row: dict) -> str:
    """What the example's question is about beyond its pictures: the H-bond it names (a row whose
    metadata records one) and its text options, each as the prompt gives it ('' for neither)."""
    try:
        meta = json.loads(row.get("metadata") or "{}")
    except ValueError:
        meta = {}
    parts = [f"bond `{meta['hbond']}`"] if isinstance(meta.get("hbond"), str) else []
    options = [str(o) for o in row.get("options") or [] if isinstance(o, str) and o]
    if options:
        letters = "ABCDEFGH"
        parts.append(
            "options "
            + "; ".join(f"{letters[k]} `{o.replace('|', '')}`" for k, o in enumerate(options[:8]))
        )
    return "".join(f"{part}; " for part in parts)


def legibility_text(manifest: dict) -> str:
    """The card's paragraph on label legibility: how labels are laid out, and per task the
    share of answer-bearing labels legible in at least one view in the build's sampled audit
    (``audit.LEGIBLE_LABEL_FLOOR``: a build below it fails)."""
    from ..checks.audit_findings import LEGIBLE_LABEL_FLOOR  # noqa: PLC0415

    text = (
        "Labels are laid out so that none covers another or the ligand's atoms and sticks; a label "
        "with no room beside its atom sits in the nearest free space with a thin leader line. "
        "Residue labels carry the chain (`ASP 25 B`) when a picture shows more than one chain; "
        "a picture of one chain's residues names it once, in a corner (`chain E`). A question's "
        "later pictures (T6's options aside) keep each label's offset from its atom in its first "
        "picture wherever it fits, so labels move with their atoms; in T1's fourth picture (the model moved in the "
        "picture's plane) every label inside the frame keeps it, and neighbouring labels may "
        "touch there by a few pixels (perspective moves near atoms a little more than far ones)."
    )
    audit = manifest.get("audit") or {}
    tasks = audit.get("tasks", {})
    labelled = [task for task, t in tasks.items() if t.get("answer_labels")]
    rows = [
        f"| `{task}` | {t['answer_labels_legible']} / {t['answer_labels']} | "
        f"{100 * t['answer_label_share']:.1f}% |"
        for task, t in tasks.items()
        if t.get("answer_labels")
    ]
    if not rows:
        return text
    return (
        text + f" Answer-bearing labels ({card_tasks.answer_labels_text(labelled)}) legible in at "
        "least one view of their question, in "
        f"the build's sampled audit (a build below {100 * LEGIBLE_LABEL_FLOOR:.0f}% fails):\n\n"
        "| config | legible / needed | share |\n|---|---:|---:|\n" + "\n".join(rows)
    )


def update_card_legibility(out: Path, manifest: dict) -> None:
    """Put the sampled audit's legibility shares into the card written before the audit ran
    (its legibility paragraph then has no figures: ``legibility_text`` without an audit)."""
    card = out / "README.md"
    if not card.exists():
        return
    text = card.read_text(encoding="utf-8")
    bare, full = legibility_text({}), legibility_text(manifest)
    if full != bare and bare in text:
        card.write_text(text.replace(bare, full, 1), encoding="utf-8")
