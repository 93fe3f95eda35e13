"""The one parser class of every ``misi-bench`` command line (subcommand parsers are made of
the same class): no abbreviated options, and no secret quoted in an error."""

from __future__ import annotations

import argparse
import re

#: An option whose name says its value is a secret, and that value (quoted in an error).
_SECRET_OPTION_RE = re.compile(r"(--[\w-]*(?:key|token|secret|passw)[\w-]*[= ])(?!-)(\S+)", re.I)


class Parser(argparse.ArgumentParser):
    """Every ``misi-bench`` parser (subcommand parsers are made of the same class): no
    abbreviated options (``--api-key sk-...`` is not taken for ``--api-key-env``) and no
    key-shaped word quoted in an error (:func:`..core.secrets.hide_keys`)."""

    def __init__(self, *args, allow_abbrev: bool = False, **kwargs) -> None:
        super().__init__(*args, allow_abbrev=allow_abbrev, **kwargs)

    def error(self, message: str):
        from ..core.secrets import hide_keys  # noqa: PLC0415

        clean = hide_keys(_SECRET_OPTION_RE.sub(r"\1[redacted]", message))
        if "--api-key " in message or "--api-key=" in message:
            clean += " (the key is never an argument: put it in a variable, --api-key-env NAME)"
        super().error(clean)
