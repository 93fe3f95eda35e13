"""Dataset stage: build orchestration, Parquet shards, manifest, card, validation, Hub.

Owns: ``sources`` (finding inputs, splits), ``build`` (per-complex units, resume, sharding,
merge), ``parquet`` (schema, shard writing and reading, manifest files), ``card`` (the dataset
card), ``validate`` (re-derivation of every answer), ``audit`` / ``audit_checks`` (do the
pictures carry exactly one answer: reproduction, uniqueness, label legibility),
``pixel_solver`` (the image-registration baseline of the card), ``hub`` (publishing),
``hf_builder`` (the ``datasets`` builder class), ``cluster`` (the shard and workers of a Slurm
array task, the merge's report of missing shards), ``slurm`` (the sbatch script of a cluster
build), ``id_list`` / ``archive`` (builds from PDB ids, entries fetched from the PDB archive).
May import every layer below it (core, operations, chemistry, scene, tasks, scoring); never the
CLI, the facade or ``eval_plugins``.
"""
