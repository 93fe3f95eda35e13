"""Bottom layer: typed records, error types, constants and the task registry.

Owns: ``records`` (``ComplexRef``, ``Residue``, ``Complex``), ``errors`` (every error raised on
purpose), ``constants`` (versions, the Hub repo id, image size) and ``registry`` (the nine tasks:
names, order, answer format, headline membership, aliases). May import: numpy and the standard
library only. Everything else in the package may import it.
"""
