"""``misi-bench report``: per-task scores of several models beside the paper's published rows and
the chance levels of the build, as one self-contained HTML page, a PNG and a markdown table.

Owns: reading result files (our score reports and the result files of lmms-eval, VLMEvalKit and
lm-eval), the paper's reference rows (:mod:`.reference`), chance levels of a build folder, the
plot and the page. May import: ``builder.core``, ``builder.scoring``, pyarrow, matplotlib (the
``report`` extra, imported only when drawing); never the builder's chemistry, scene, tasks or
dataset layers.
"""
