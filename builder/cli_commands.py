"""Subcommands beyond ``inspect``: render, preview, build, validate, score, push, harness runners."""
from __future__ import annotations
