"""Typed errors. Every error about an input names the input and the reason."""

from __future__ import annotations


class MisiError(Exception):
    """Base class of every error MiSI-Bench raises on purpose."""


class InputError(MisiError):
    """A structure input that cannot be used: names the input (path or id) and the reason."""

    def __init__(self, source: object, reason: str):
        self.source = str(source)
        self.reason = reason
        super().__init__(f"{self.source}: {reason}")


class OperationSyntaxError(MisiError, ValueError):
    """Text that is not a valid operation of the command language."""


class RenderError(MisiError, ValueError):
    """A render request that cannot be drawn (empty selection, absurd size, ...)."""


class TaskError(MisiError):
    """A task cannot be generated for a complex (recorded as a skip reason, never fatal)."""


class InputTooLarge(InputError):
    """An input beyond the size limits (file bytes, pocket or ligand atoms)."""


class ShardMismatch(MisiError):
    """A build's shard file that differs from what its ``manifest.json`` records (sha256, size)
    or that the manifest does not list: never read, never scored."""
