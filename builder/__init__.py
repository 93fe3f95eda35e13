"""MiSI-Bench builder: from protein-ligand structures to a verified, rendered benchmark.

Layers, bottom to top (an arrow may only point down; see README "Architecture"):

``core`` (records, errors, constants, task registry)
-> ``operations`` (the operation language, numpy only) and ``chemistry`` (reading, H-bonds)
-> ``scene`` (camera, renderer)
-> ``tasks`` (the nine question generators)
-> ``dataset`` (build, Parquet, card, validation, Hub)
-> ``cli`` (the builder's commands).
``scoring`` stands beside them and imports only ``core`` and ``operations``.
"""

if __name__ == "builder":  # the checkout root on sys.path (editable install, or run from it)
    raise ImportError(
        "import builder as misi_bench.builder: the top-level name 'builder' would load second "
        "copies of its modules and classes (a MisiError that misi_bench's except clauses miss)"
    )
