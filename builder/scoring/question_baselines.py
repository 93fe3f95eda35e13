"""Per-question blind baselines (docs/decoys.md, "Blind floors"): every blind rule's score on
every question of a split, computed once and read by every route that shows baselines or floors.

A build writes them next to ``baselines.json`` as :data:`FILE` (its sha256 in the manifest's
``question_baselines`` entry): ``misi-bench score``, ``report`` and the front-ends read the
questions they score from it and take any subset's baseline cells, floor and margins as means
over the same questions. A build without it (an older build) has them computed here, once per
process, exactly as the build computes them.

What a question's value of a rule is (0-1 scale; NaN where the rule gives no answer, e.g. an
options-only rule on a question without text options):

* ``random``: the mean (``math.fsum`` over the draws) of :data:`RANDOM_DRAWS` random answers'
  metrics (:func:`.baselines.baseline_prediction`), drawn from one generator seeded with the
  build's seed and run through the split's questions in their build order (configs in registry
  order, rows in shard order), as the scorer always drew them for a whole split;
* ``always_no``: the constant answer's metrics;
* ``text_only``: the train split's most frequent answer of the task (:func:`.blind.fit_text_only`);
* the options-only rules (:data:`.blind.OPTION_RULES`), each with its own generator seeded with
  the seed (ties), in the same question order; ``option_image_medoid``: T5/T6's image rule, whose
  letters the build computed (``image_answers``).

Metrics per rule: ``score`` and ``exact`` (for T9 the exact match the paper's way,
:data:`.readings.T9_PAPER_EXACT`: the exact metric the question's paper column reads); each
question's paper column (T4 by its polarity) is stored beside them.

File format (:data:`FORMAT` 1): a zip of ``.npy`` arrays (``numpy.load`` reads it) with fixed
timestamps, so the same build gives the same bytes whatever its worker count: ``meta`` (JSON
bytes: format, seed, draws, rules, metrics, column keys, splits), and per split ``<split>/ids``
('\\n'-joined UTF-8 bytes), ``<split>/columns`` (int8 index into the column keys, -1: none) and
``<split>/<rule>/<metric>`` (float64).
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import math
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..core.registry import canonical_task
from .baselines import BASELINE_KINDS, baseline_prediction
from .blind import (
    IMAGE_RULE,
    OPTION_RULES,
    TEXT_ONLY,
    blind_cells,
    options_only_prediction,
    rule_cells,
    text_only_metrics,
)
from .bootstrap import complex_of
from .columns import COLUMN_KEYS, column_of
from .metrics import score_prediction
from .readings import T9_PAPER_EXACT

log = logging.getLogger(__name__)

FILE = "question_baselines.npz"
#: The manifest's entry naming the file's sha256 and size.
MANIFEST_KEY = "question_baselines"
FORMAT = 1
#: Every rule with per-question values, in the order a floor breaks ties.
RULES = (*BASELINE_KINDS, TEXT_ONLY, *OPTION_RULES, IMAGE_RULE)
METRICS = ("score", "exact")
RANDOM_DRAWS = 20
#: The seed of the rules' generators in every scoring route (``score``, ``report``, a build's
#: file), whatever the build's own seed.
SEED = 0
_DATE = (1980, 1, 1, 0, 0, 0)
#: Questions between two progress lines of a computation.
_PROGRESS_EVERY = 5000


@dataclass(frozen=True)
class QuestionBaselines:
    """Per-question values of every rule on a split's questions (see the module docstring):
    ``ids`` in question order, ``columns`` (int8 index into ``COLUMN_KEYS``, -1: none) and
    ``values`` (``"<rule>/<metric>"`` -> float64 array, NaN where the rule gives no answer)."""

    split: str
    seed: int
    draws: int
    ids: tuple[str, ...]
    columns: np.ndarray
    values: Mapping[str, np.ndarray]

    def value(self, rule: str, metric: str) -> np.ndarray:
        return self.values[f"{rule}/{metric}"]

    def select(self, ids: Sequence[str]) -> QuestionBaselines | None:
        """The values of ``ids`` in that order; None when one of them is not in the table."""
        where = {qid: i for i, qid in enumerate(self.ids)}
        try:
            index = np.fromiter((where[str(q)] for q in ids), dtype=np.int64, count=len(ids))
        except KeyError:
            return None
        return QuestionBaselines(
            self.split,
            self.seed,
            self.draws,
            tuple(str(q) for q in ids),
            self.columns[index],
            {k: v[index] for k, v in self.values.items()},
        )


def _mean_metrics(draws: list[dict]) -> dict[str, float]:
    keys = {k for d in draws for k in d}
    return {k: math.fsum(d.get(k, 0.0) for d in draws) / len(draws) for k in keys}


def _metrics_of(rule, row, task, options, rngs, text_model, image_answers, draws):
    """The metrics of ``rule``'s answer on one row (None where it gives none)."""
    meta = row.get("metadata")
    if rule in BASELINE_KINDS:
        n = draws if rule == "random" else 1
        got = [
            score_prediction(
                task,
                baseline_prediction(rule, task, row, rngs[rule]),
                row["answer"],
                meta,
                options=options,
            )
            for _ in range(n)
        ]
        return _mean_metrics(got)
    if rule == TEXT_ONLY:
        return text_only_metrics(task, text_model, row) if text_model else None
    if rule == IMAGE_RULE:
        letter = (image_answers or {}).get(str(row["id"]))
    else:
        letter = options_only_prediction(rule, row, rngs[rule])
    if letter is None:
        return None
    return score_prediction(task, letter, row["answer"], meta, options=options)


def compute_question_baselines(
    rows: Sequence[Mapping],
    text_model: Mapping[str, str] | None = None,
    image_answers: Mapping[str, str] | None = None,
    seed: int = 0,
    split: str = "",
    draws: int = RANDOM_DRAWS,
) -> QuestionBaselines:
    """Every rule's values on ``rows`` (id, task, answer, metadata, options), in their order
    (the generators run through them in that order: pass a split's rows in build order for the
    build's values). Logs a progress line every few thousand questions."""
    n = len(rows)
    values = {f"{r}/{m}": np.full(n, np.nan) for r in RULES for m in METRICS}
    columns = np.full(n, -1, dtype=np.int8)
    rngs = {rule: np.random.default_rng(seed) for rule in (*BASELINE_KINDS, *OPTION_RULES)}
    index = {key: i for i, key in enumerate(COLUMN_KEYS)}
    for i, row in enumerate(rows):
        if i and i % _PROGRESS_EVERY == 0:
            log.info("baselines: %d of %d questions (%.0f%%)", i, n, 100 * i / n)
        task = canonical_task(row["task"])
        options = list(row.get("options") or []) or None
        polar = score_prediction(task, None, row["answer"], row.get("metadata"))
        column = column_of(task, polar)
        columns[i] = index.get(column, -1)
        exact_key = T9_PAPER_EXACT if column == "T9" else "exact"
        for rule in RULES:
            m = _metrics_of(rule, row, task, options, rngs, text_model, image_answers, draws)
            if m is None:
                continue
            for metric, key in (("score", "score"), ("exact", exact_key)):
                if key in m:
                    values[f"{rule}/{metric}"][i] = float(m[key])
    return QuestionBaselines(
        split,
        int(seed),
        int(draws),
        tuple(str(r["id"]) for r in rows),
        columns,
        values,
    )


# --------------------------------------------------------------------------------------------
# Cells (the ``baselines`` block of a report) from a table
# --------------------------------------------------------------------------------------------


def reference_cells(table: QuestionBaselines, rows: Sequence[Mapping]) -> dict:
    """Every baseline's per-task cells on ``rows`` (aligned with ``table``): ``{baseline: {task:
    {"n", "complexes", "score", "ci95"}}}`` (0-1), as :func:`reference_scores` gives them."""
    keys = [(str(r["id"]), canonical_task(r["task"]), complex_of(r)) for r in rows]
    per_rule: dict[str, list[tuple[str, str, str, float]]] = {}
    for rule in RULES:
        v = table.value(rule, "score")
        per_rule[rule] = [(*k, float(x)) for k, x in zip(keys, v.tolist()) if not math.isnan(x)]
    out = {kind: rule_cells(per_rule[kind]) for kind in BASELINE_KINDS}
    out.update(blind_cells({r: s for r, s in per_rule.items() if r not in BASELINE_KINDS and s}))
    return out


def reference_scores(
    rows: Sequence[Mapping],
    train_rows: Sequence[Mapping] | None = None,
    image_answers: Mapping[str, str] | None = None,
    seed: int = 0,
    draws: int = RANDOM_DRAWS,
) -> dict:
    """Every baseline on ``rows`` (id, task, answer, metadata, options): ``{baseline: {task:
    {"n", "complexes", "score", "ci95"}}}`` (0-1 scale). The chance baselines (``random``
    averaged over ``draws`` draws per question, ``always_no``) and the blind ones (text only
    needs ``train_rows``, T5/T6's options-only rule ``image_answers``), computed here (a build's
    stored values: :func:`read_question_baselines` and :func:`reference_cells`)."""
    from .blind import fit_text_only  # noqa: PLC0415

    rows = list(rows)
    text_model = fit_text_only(train_rows) if train_rows else None
    table = compute_question_baselines(rows, text_model, image_answers, seed, draws=draws)
    return reference_cells(table, rows)


# --------------------------------------------------------------------------------------------
# The file
# --------------------------------------------------------------------------------------------


def _add(zf: zipfile.ZipFile, name: str, array: np.ndarray) -> None:
    info = zipfile.ZipInfo(f"{name}.npy", date_time=_DATE)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.ascontiguousarray(array), allow_pickle=False)
    zf.writestr(info, buf.getvalue(), compresslevel=6)


def _text(data: bytes | str) -> np.ndarray:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return np.frombuffer(raw, dtype=np.uint8)


def question_baselines_bytes(tables: Mapping[str, QuestionBaselines]) -> bytes:
    """The file's bytes for per-split tables (same tables, same bytes)."""
    first = next(iter(tables.values()), None)
    meta = {
        "format": FORMAT,
        "seed": first.seed if first else 0,
        "draws": first.draws if first else RANDOM_DRAWS,
        "rules": list(RULES),
        "metrics": list(METRICS),
        "columns": list(COLUMN_KEYS),
        "splits": list(tables),
    }
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        _add(zf, "meta", _text(json.dumps(meta, sort_keys=True)))
        for split, table in tables.items():
            _add(zf, f"{split}/ids", _text("\n".join(table.ids)))
            _add(zf, f"{split}/columns", table.columns.astype(np.int8))
            for key in sorted(table.values):
                _add(zf, f"{split}/{key}", table.values[key].astype(np.float64))
    return buf.getvalue()


def file_entry(data: bytes) -> dict:
    """The manifest's entry of the file: ``{"path", "sha256", "bytes"}``."""
    return {"path": FILE, "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def read_question_baselines(
    path: Path, split: str, sha256: str | None = None
) -> QuestionBaselines | None:
    """The stored table of ``split`` in the file at ``path``; None (with one warning line naming
    the file) when it is missing, unreadable, of another format, without that split, or when
    its sha256 differs from ``sha256`` (the manifest's): the caller computes the values then."""
    path = Path(path)
    if not path.is_file():
        return None
    try:
        data = path.read_bytes()
        if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
            log.warning("%s: sha256 differs from manifest.json; baselines computed again", path)
            return None
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            meta = json.loads(npz["meta"].tobytes().decode("utf-8"))
            if meta.get("format") != FORMAT or split not in meta.get("splits", ()):
                log.warning("%s: no split %r of format %d; baselines computed", path, split, FORMAT)
                return None
            raw = npz[f"{split}/ids"].tobytes().decode("utf-8")
            ids = tuple(raw.split("\n")) if raw else ()
            values = {
                f"{r}/{m}": npz[f"{split}/{r}/{m}"] for r in meta["rules"] for m in meta["metrics"]
            }
            columns = npz[f"{split}/columns"]
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
        log.warning("%s: unreadable (%s); baselines computed", path, exc)
        return None
    if list(meta["columns"]) != list(COLUMN_KEYS) or set(meta["rules"]) != set(RULES):
        log.warning("%s: written for other rules or columns; baselines computed", path)
        return None
    return QuestionBaselines(split, int(meta["seed"]), int(meta["draws"]), ids, columns, values)


def baselines_of_rows(
    rows: Sequence[Mapping],
    stored: QuestionBaselines | None,
    inputs: Callable[[], tuple[Mapping[str, str] | None, Mapping[str, str] | None]],
    seed: int = 0,
) -> QuestionBaselines:
    """The table of ``rows``: the stored one's values of these questions when it has them all,
    else computed once (``inputs()`` gives the text model and T5/T6's image letters, fetched
    only then), with progress lines."""
    if stored is not None:
        picked = stored.select([str(r["id"]) for r in rows])
        if picked is not None:
            return picked
        log.warning("the stored baselines lack some of these questions; computing them")
    else:
        log.warning(
            "no %s in this build (an older build): computing the baselines of %d questions once",
            FILE,
            len(rows),
        )
    text_model, image_answers = inputs()
    return compute_question_baselines(rows, text_model, image_answers, seed)
