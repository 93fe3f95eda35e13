"""Contributions to the harnesses themselves, kept as patch files next to a README each.

``lmms_eval/`` holds the patches against lmms-eval (the MiSI task folder in lmms-eval's own
layout, generated from ``eval_plugins/lmms_eval/tasks/misi`` by :mod:`..harness_files`, and the fix
that lets ``LMMS_EVAL_PLUGINS`` register tasks); ``vlmevalkit/`` holds the patch that lists the
MiSI dataset classes in VLMEvalKit's registry. Each folder's README says what each patch changes
and why. Patch files only; imports nothing at import time.
"""
