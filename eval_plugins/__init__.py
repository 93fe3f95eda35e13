"""Evaluation-harness adapters (lmms-eval, VLMEvalKit, lm-eval) over the one scorer."""
