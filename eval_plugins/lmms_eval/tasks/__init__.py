"""The lmms-eval task folder (``misi/``: YAML + ``utils.py``), found by ``--include_path`` or,
with ``LMMS_EVAL_PLUGINS=misi_bench.eval_plugins.lmms_eval``, by lmms-eval's plugin hook (which
includes this package's folder). Imports nothing."""
