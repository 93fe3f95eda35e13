"""Models that lmms-eval's ``LMMS_EVAL_PLUGINS`` hook registers from this plugin.

With ``LMMS_EVAL_PLUGINS=misi_bench.eval_plugins.lmms_eval`` lmms-eval imports this module and
registers each ``AVAILABLE_MODELS`` entry as ``<this package>.<name>.<class>``: the weight-free
``misi_oracle`` (answers with the gold answer; for checking an installation end to end). Imports
nothing.
"""

#: ``{model name (= module name here): class name}``, the form lmms-eval's plugin hook reads.
AVAILABLE_MODELS = {"misi_oracle": "MisiOracle"}
