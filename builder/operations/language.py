"""The operation language of MiSI-Bench (docs/spec.md section 1): typed ``move``/``roll`` operations.

* ``move x|y|z D`` translates the shown model by D Å along a screen axis (screen frame: +x right,
  +y up, +z toward the viewer); ``roll x|y|z A`` rotates it by A degrees (right-hand rule) about
  the screen axis through the model's own centre. Magnitudes are integers.
* A sequence is written ``op, op, ...`` and applied in order. :func:`parse_operations` and
  :func:`format_operations` round-trip exactly (strict syntax; the scorer parses leniently).

Pure Python: this module is what the scorer needs, so it imports nothing but numpy (for integer
checks) and the error types.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from ..core.errors import OperationSyntaxError

Axis = Literal["x", "y", "z"]
AXES: tuple[str, str, str] = ("x", "y", "z")
AXIS_INDEX = {"x": 0, "y": 1, "z": 2}


@dataclass(frozen=True)
class Move:
    """Translate the shown model by ``distance`` Å along screen ``axis``."""

    axis: str
    distance: int

    def __post_init__(self) -> None:
        check_axis(self.axis)
        if not isinstance(self.distance, (int, np.integer)) or isinstance(self.distance, bool):
            raise OperationSyntaxError(f"move distance must be an integer, got {self.distance!r}")
        object.__setattr__(self, "distance", int(self.distance))

    verb = "move"

    @property
    def magnitude(self) -> int:
        return self.distance

    def inverse(self) -> Move:
        return Move(self.axis, -self.distance)

    def __str__(self) -> str:
        return f"move {self.axis} {self.distance}"


@dataclass(frozen=True)
class Roll:
    """Rotate the shown model by ``angle`` degrees about screen ``axis`` through its centre."""

    axis: str
    angle: int

    def __post_init__(self) -> None:
        check_axis(self.axis)
        if not isinstance(self.angle, (int, np.integer)) or isinstance(self.angle, bool):
            raise OperationSyntaxError(f"roll angle must be an integer, got {self.angle!r}")
        object.__setattr__(self, "angle", int(self.angle))

    verb = "roll"

    @property
    def magnitude(self) -> int:
        return self.angle

    def inverse(self) -> Roll:
        return Roll(self.axis, -self.angle)

    def __str__(self) -> str:
        return f"roll {self.axis} {self.angle}"


Operation = Move | Roll


def check_axis(axis: object) -> None:
    if axis not in AXIS_INDEX:
        raise OperationSyntaxError(f"axis must be one of x, y, z, got {axis!r}")


_OP_RE = re.compile(r"^\s*(move|roll)\s+([xyz])\s+([+-]?\d+)\s*$")


def parse_operation(text: str) -> Operation:
    """Parse one operation, e.g. ``"roll y -30"`` (strict: lower-case, integer magnitude)."""
    match = _OP_RE.match(text)
    if match is None:
        raise OperationSyntaxError(
            f"not an operation: {text!r} (expected e.g. 'move x 4' or 'roll y -30')"
        )
    verb, axis, value = match.groups()
    return Move(axis, int(value)) if verb == "move" else Roll(axis, int(value))


def parse_operations(text: str) -> tuple[Operation, ...]:
    """Parse ``"op, op, ..."`` into a tuple of operations (strict; see the scorer for lenient).

    >>> parse_operations("roll x 75, move x -14")
    (Roll(axis='x', angle=75), Move(axis='x', distance=-14))
    >>> parse_operations("roll x 75 and then move")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    OperationSyntaxError: not an operation
    """
    parts = [p for p in text.split(",")]
    if not text.strip() or any(not p.strip() for p in parts):
        raise OperationSyntaxError(f"not an operation sequence: {text!r}")
    return tuple(parse_operation(p) for p in parts)


def format_operations(ops: Iterable[Operation] | Operation) -> str:
    """Format operations as the benchmark writes them; parsing the text gives them back.

    >>> format_operations(parse_operations("roll x 75,move x -14"))
    'roll x 75, move x -14'
    >>> format_operations(Move("z", 45))
    'move z 45'
    """
    if isinstance(ops, (Move, Roll)):
        ops = (ops,)
    return ", ".join(str(op) for op in ops)


def invert_operations(ops: Sequence[Operation]) -> tuple[Operation, ...]:
    """The sequence that undoes ``ops`` (inverses in reverse order)."""
    return tuple(op.inverse() for op in reversed(ops))
