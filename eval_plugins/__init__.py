"""Thin adapters that run MiSI-Bench inside existing evaluation harnesses.

- :mod:`misi_bench.eval_plugins.lmms_eval`: task folder for lmms-eval (``--include_path``).
- :mod:`misi_bench.eval_plugins.vlmevalkit`: dataset classes registered into VLMEvalKit.
- :mod:`misi_bench.eval_plugins.lm_eval`: task folder for lm-evaluation-harness.
- :mod:`misi_bench.eval_plugins.preflight`: the launchers' checks (names, data location, results).
- ``eval_plugins/upstream``: patches that put the MiSI tasks into lmms-eval and VLMEvalKit themselves.
- :mod:`misi_bench.eval_plugins.harness_files`: writes (``--check``: checks) every per-task
  harness YAML and the upstream lmms-eval patch from the task registry (``docs/harnesses.md``).
- :mod:`misi_bench.eval_plugins.finetune`: ``export-sft``, the train split in the formats of SFT
  stacks (TRL / Hugging Face chat Parquet, LLaMA-Factory, ms-swift).

Every adapter reads rows of the published schema (docs/spec.md section 8), shows the row's images in
prompt order with the row's ``question`` text, and scores with the one scorer,
:mod:`misi_bench.builder.scoring`. The data location is ``misi_bench.hub_repo_id()`` (a Hub repo
id or a local dataset folder; ``$MISI_BENCH_REPO`` overrides it) plus an optional revision
(``$MISI_BENCH_REVISION``). Nothing here imports a harness at import time.
"""

if __name__ == "eval_plugins":  # the checkout root on sys.path (editable install, or run from it)
    raise ImportError(
        "import eval_plugins as misi_bench.eval_plugins: the top-level name 'eval_plugins' would load second "
        "copies of its modules and classes (a MisiError that misi_bench's except clauses miss)"
    )
