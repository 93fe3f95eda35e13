"""Scene layer: the perspective camera and our own renderer.

Owns: ``camera`` (perspective camera fitted to a scene), ``render`` (render requests and style,
rasteriser, PNG encoding, render cache, contact sheets). May import: ``builder.core`` and
``builder.operations``; never chemistry readers, tasks, dataset, scoring or CLI.
"""
