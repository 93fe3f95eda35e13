"""The one scorer of MiSI-Bench (docs/spec.md section 7), used by the CLI and every evaluation plugin.

Owns: answer parsing, per-question metrics, aggregation into reports, baselines. May import:
``builder.core`` (task registry, errors) and ``builder.operations`` (the operation language);
never Pillow, gemmi, RDKit, pyarrow, datasets or the chemistry, scene, tasks or dataset layers, so
that evaluation front-ends load it cheaply. The public names below are the stable API
(``misi_bench.builder.scoring.score_prediction`` etc.).

Modules: :mod:`.kinds` (one object per answer kind: gold, reply, metric, chance answers, options,
audit checks; everything here asks it), :mod:`.text` (clean-up of model output), :mod:`.parsing`
(the public parser), :mod:`.replies` (commands and letters in a reply), :mod:`.bonds` (bond
lists and the set rule), :mod:`.metrics` (per-question scores),
:mod:`.report` (aggregation, the paper's columns and averages, markdown report, record scoring),
:mod:`.baselines` (chance answers), :mod:`.blind` (options-only and text-only answers),
:mod:`.predictions` (reading prediction files), :mod:`.prediction_folders` (folders of them:
lmms-eval ``--log_samples``, VLMEvalKit work dirs, ``eval`` runs), :mod:`.per_item` (per-question
results as JSON Lines),
:mod:`.paper_reference` (the paper's published rows, from ``paper_reference.yaml``, and the
``--paper-rows`` choice), :mod:`.paper_rows` (those rows beside a result, as markdown),
:mod:`.readings` (the other readings of rules the paper leaves open, reported beside the score),
:mod:`.floors` (the blind floor per paper column and a result's margin above it),
:mod:`.columns` (the paper's columns), :mod:`.bootstrap` (THE interval method of every figure:
complexes resampled, percentile intervals, paired differences and the paired test),
:mod:`.compare` (one result against another).

Conventions
-----------
* Every metric is on a **0-1 scale** (per question and in reports, averages included); multiply
  by 100 for the paper's percentages.
* Distances are in ångström, angles in degrees, in the screen frame of docs/spec.md section 1.
* Model output is parsed leniently (:func:`parse_prediction`); an answer that cannot be parsed
  scores 0. Nothing here raises because of a model's output. Gold answers are parsed strictly
  (they are written by the builder) and always score exactly 1.0 against themselves.

Metrics per question (:func:`score_prediction`), keys of the returned dict:

* ``score``: the main metric of docs/spec.md section 7; ``exact``: exact match; ``parsed``: 1.0 when the
  output could be parsed at all (its mean is the parse rate).
* ``translation`` / ``rotation`` (T1, T2): 0 when the verb or axis is wrong; else, in ``paper``
  rows, ``1 - steps / (n - 1)`` with the error in steps of the n allowed non-zero values (over 7
  / 11), in ``explicit`` rows ``max(0, 1 - |pred - true| / R)`` with R = 8 Å / 180°; both are
  reported (``score_steps``, ``score_radius``). ``zooming`` (T3): exact match.
* ``docking`` (T7): ``0.5 * rotation_part + 0.5 * move_part`` (also reported as ``rotation_part``
  and ``move_part``). Rotation: the roll axis must match, scored as T2 in the row's profile. Move: a
  ``move x`` with the sign of the true one, ``max(0, 1 - |dD| / |D|)``. Angles are not wrapped.
* ``translation_rotation``, ``rotation_rotation``, ``interaction_location``: accuracy.
* ``residue_ligand`` (T4): negatives 1 iff the answer is ``No``; positives and ``pocket_ligand``
  (T9) use the set rule on predicted set P and true set G: 0 if ``|P| > 2|G|``; 0.5 if P strictly
  contains G; else ``|P ∩ G| / |G|``; T9 with G empty scores 1 only for ``None``. T4 rows also
  carry ``polarity`` (1.0 for a positive gold answer, 0.0 for a negative one).

Averages (:func:`aggregate`), each under its own name: ``paper_average`` (the paper's Table 1
average: mean of the eight columns T1, T2, T3, T4 positive, T4 negative, T7, T8, T9; None unless
all eight have questions), ``average_all_tasks`` and ``average_headline_tasks`` (macro means of
the task scores, all tasks or the headline's, without T5/T6; T4 once). No name counts tasks, so
a new task renames nothing.

How answers are read (the rules a model author can rely on; docs/answer-reading.md)
-------------------------------------------------------------------------------------------
* Clean-up: case, markdown (emphasis of any length, bullets, code, tables), LaTeX, units, ``+``
  and unicode minus signs are ignored; a ``<think>`` block is dropped when text follows it; only
  the last non-empty ``<answer>...</answer>`` block is read.
* Where: the text after the last answer marker (``Answer:``, ``Final answer``, ``The answer is``,
  ``\boxed{``) first, an answer right after the marker winning over later explanation; else the
  last answer in the text. A withdrawn answer never counts when a later one is given.
* Commands: integer magnitudes only; a final command with a fractional magnitude is an invalid
  answer (scores 0) and the withdrawn earlier command is not read instead.
* Letters: ``B``, ``(b)``, ``Option B``, ``the answer is b because``...; the article "A" before a
  word is not a letter; an option written out (its commands, or its text such as ``image 9``)
  counts as its letter.
* Bond lists: items separated by ``;``, commas, lines, bullets or markdown table rows;
  ``No``/``None`` wins when it comes last, but a closing remark about other bonds ("no bonds from
  the backbone", "... with other residues") does not withdraw a list.
* Length: the text after the last marker and the last :data:`MAX_CHARS` characters are read, of
  at most :data:`MAX_INPUT_CHARS` characters (cost linear in the length; a 1 MB output takes tens
  of milliseconds, see ``scripts/bench_scoring.py``).
"""

from __future__ import annotations

from ..core.registry import (
    HEADLINE_EXCLUDED,
    TASK_ALIASES,
    TASK_NAMES,
    canonical_task,
)
from .baselines import (
    BASELINE_KINDS,
    BASELINE_NAMES,
    BLIND_BASELINES,
    baseline_prediction,
)
from .blind import (
    BLIND_NAMES,
    answer_counts,
    blind_baselines,
    fit_text_only,
    format_blind_markdown,
    options_only_prediction,
    rule_cells,
    text_model_of,
    text_only_metrics,
    text_only_score,
)
from .bonds import BondAnswer
from .bootstrap import (
    METHOD as INTERVAL_METHOD,
)
from .bootstrap import (
    RESAMPLES,
    Interval,
    Items,
    bootstrap_intervals,
    complex_of,
    interval_json,
    items_from_per_item,
    paired,
    paired_test,
)
from .metrics import score_prediction
from .paper_reference import (
    NOT_COMPARABLE,
    PAPER_ROWS_HELP,
    PaperReferenceRow,
    PaperRowsError,
    default_paper_rows,
    paper_reference_rows,
    paper_row_names,
    select_paper_rows,
)
from .paper_rows import (
    T9_PAPER_EXACT,
    format_exact_markdown,
    format_paper_rows_markdown,
    format_readings_markdown,
    paper_exact_columns,
)
from .parsing import format_parsed, parse_prediction
from .per_item import per_item_jsonl, per_item_records
from .prediction_folders import PredictionSource, read_prediction_source
from .predictions import (
    PredictionFile,
    PredictionFileError,
    parse_predictions,
    read_predictions,
    resolve_positions,
)
from .question_baselines import (
    QuestionBaselines,
    compute_question_baselines,
    read_question_baselines,
    reference_cells,
    reference_scores,
)
from .readings import READINGS
from .report import (
    AVERAGE_DEFINITIONS,
    COLUMN_KEYS,
    PAPER_AVERAGE_COLUMNS,
    PAPER_COLUMNS,
    aggregate,
    format_report_markdown,
    paper_average,
    paper_columns,
    report_intervals,
    score_records,
)
from .text import MAX_CHARS, MAX_INPUT_CHARS

__all__ = [
    "AVERAGE_DEFINITIONS",
    "BASELINE_KINDS",
    "BASELINE_NAMES",
    "BLIND_BASELINES",
    "reference_scores",
    "QuestionBaselines",
    "compute_question_baselines",
    "read_question_baselines",
    "reference_cells",
    "BLIND_NAMES",
    "blind_baselines",
    "answer_counts",
    "fit_text_only",
    "format_blind_markdown",
    "options_only_prediction",
    "rule_cells",
    "text_model_of",
    "text_only_metrics",
    "text_only_score",
    "INTERVAL_METHOD",
    "RESAMPLES",
    "Interval",
    "Items",
    "bootstrap_intervals",
    "complex_of",
    "interval_json",
    "items_from_per_item",
    "paired",
    "paired_test",
    "report_intervals",
    "COLUMN_KEYS",
    "HEADLINE_EXCLUDED",
    "MAX_CHARS",
    "MAX_INPUT_CHARS",
    "NOT_COMPARABLE",
    "format_paper_rows_markdown",
    "PAPER_ROWS_HELP",
    "PaperRowsError",
    "READINGS",
    "format_exact_markdown",
    "format_readings_markdown",
    "T9_PAPER_EXACT",
    "default_paper_rows",
    "paper_exact_columns",
    "paper_row_names",
    "select_paper_rows",
    "PAPER_AVERAGE_COLUMNS",
    "PAPER_COLUMNS",
    "TASK_ALIASES",
    "TASK_NAMES",
    "BondAnswer",
    "PaperReferenceRow",
    "PredictionFile",
    "PredictionSource",
    "PredictionFileError",
    "aggregate",
    "baseline_prediction",
    "canonical_task",
    "format_parsed",
    "format_report_markdown",
    "paper_average",
    "paper_columns",
    "paper_reference_rows",
    "parse_prediction",
    "parse_predictions",
    "per_item_jsonl",
    "per_item_records",
    "read_prediction_source",
    "read_predictions",
    "resolve_positions",
    "score_prediction",
    "score_records",
]

#: Baselines that read images, and so live outside the scorer (which loads no image code):
#: ``pixel_registration`` is ``builder.checks.pixel_solver`` (T1, T3 by image registration),
#: shown in the dataset card's baselines table next to :data:`BASELINE_KINDS`;
#: ``option_image_medoid`` is ``builder.checks.blind`` (T5/T6 options only, docs/decoys.md).
IMAGE_BASELINES = ("pixel_registration", "option_image_medoid")
