"""Scene layer: the perspective camera and our own renderer.

Owns: ``camera`` (perspective camera fitted to a scene; the one carrier of the image size),
``requests`` (render requests, style, colours, RENDER_VERSION; no Pillow), ``projection`` (scene
coordinates of a request), ``shading`` (light, fog, sprites), ``raster`` (request -> image),
``labels`` (text labels), ``cache`` (PNG encoding, render cache), ``sheet`` (contact sheets).
May import: ``builder.core`` and ``builder.operations``; never chemistry readers, tasks,
dataset, scoring or CLI. Only ``requests``, ``projection`` and ``camera`` load without Pillow.
"""
