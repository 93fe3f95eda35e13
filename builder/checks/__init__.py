"""Checks stage: what a built folder is checked with before it is published.

Owns: ``validate`` (re-derivation of every answer), ``audit`` with ``audit_checks``,
``audit_findings``, ``audit_margins``, ``audit_rows`` (do the pictures carry exactly one answer:
reproduction, uniqueness, label legibility, rotamers), ``check_structures`` (the checks' own
reading of the structures), ``pixel_solver`` (the image-registration baseline of the card),
``blind`` with ``card_stats`` (the blind baselines and the options-only gate),
``build_warnings`` (what a build's manifest says was lost or is suspect). May import the layers
below it (core, operations, chemistry, scene, tasks, scoring, store); never the dataset
orchestration, the CLI, the facade or ``eval_plugins``.
"""
