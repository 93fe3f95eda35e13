"""``misi-bench human``: a local web app in which a person answers the questions of a build.

Owns: the question queue of one participant (read from a build folder with pyarrow), the
predictions file (JSONL that ``misi-bench score`` reads), the standard-library HTTP server and its
one HTML/JS page. May import: ``builder.core``, ``builder.scoring``, pyarrow; never the builder's
chemistry, scene, tasks or dataset layers.
"""
