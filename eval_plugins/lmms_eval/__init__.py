"""MiSI-Bench for lmms-eval: the task folder ``tasks/misi`` and the ``misi-bench lmms-eval`` runner.

Tasks: ``misi_<config>`` (nine, test split), group ``misi``; ``tiny_misi_<config>`` (tiny split),
group ``tiny_misi``. See :mod:`.cli` for how the folder is handed to lmms-eval.
"""
