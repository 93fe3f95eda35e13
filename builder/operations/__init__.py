"""The operation language and its action on coordinates (numpy only).

Owns: ``language`` (``Move``/``Roll``, strict parse and format with exact round-trips) and
``transforms`` (rotation matrices, rigid poses with a body-fixed pivot, the six views).
May import: ``builder.core``. The scorer imports ``language`` alone.
"""
