"""Store stage: a build folder's files, the build's inputs and the one job runner.

Owns: ``parquet`` (schema, shard writing and reading), ``manifest`` (the manifest file, shard
checksums), ``sources`` with ``id_list`` and ``split_files`` (finding inputs, splits),
``identity_split`` (the sequence-identity split: the MMseqs2 binary run as a subprocess),
``runner`` with ``workers`` and ``progress`` (the one job runner), ``cluster`` (the shard and
workers of a Slurm array task, the merge's report of missing shards). May import core and
chemistry; never the checks, the dataset orchestration, the CLI, the facade or ``eval_plugins``.
"""
