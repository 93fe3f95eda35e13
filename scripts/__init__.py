"""Maintainer scripts: benchmarks, the sample-set builder, the H-bond reference report.

Run as ``python -m scripts.<name>``. May import every builder layer; nothing
in the package imports them.
"""
