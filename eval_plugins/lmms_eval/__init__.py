"""MiSI-Bench for lmms-eval: the task folder ``tasks/misi``, the ``misi-bench lmms-eval`` runner
(:mod:`.cli`) and the weight-free ``misi_oracle`` model (:mod:`.models`).

Tasks: ``misi_<config>`` (nine, test split), group ``misi``; ``tiny_misi_<config>`` (tiny split),
group ``tiny_misi``. lmms-eval finds them through ``--include_path`` (what :mod:`.cli` adds), or
through ``LMMS_EVAL_PLUGINS=misi_bench.eval_plugins.lmms_eval`` once lmms-eval reads that hook
before indexing tasks (``eval_plugins/upstream/lmms_eval``; the hook imports ``<plugin>.models``
and includes ``<plugin>.tasks``). The same folder, as a patch, is the upstream contribution.
May import :mod:`misi_bench.eval_plugins.common`; imports nothing at import time.
"""
