"""The generation settings every route sends by default, defined once.

``misi-bench eval`` sends them in each request unless told otherwise (``--temperature``,
``--max-tokens``), and ``python -m misi_bench.eval_plugins.harness_files`` writes them into the
lmms-eval and lm-eval task templates, so one model is asked the same way by every route:
greedy decoding (temperature 0) and at most :data:`MAX_TOKENS` new tokens, room for a reasoning
model's answer (the answers themselves are a few tokens).
"""

from __future__ import annotations

#: Sampling temperature of every route (0: greedy).
TEMPERATURE = 0.0
#: Most new tokens of one answer (``max_tokens`` / ``max_new_tokens`` / ``max_gen_toks``).
MAX_TOKENS = 1024
#: Largest reply body ``misi-bench eval`` reads (bytes): an answer with its JSON envelope is a
#: few KB; a longer reply (a runaway or endless one) gives the question up.
MAX_REPLY_BYTES = 1 << 20
