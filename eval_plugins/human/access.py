"""Who may do what in the human app: the run's two access tokens and each participant's key.

- The **participant token** (in the link printed at start, like Jupyter's) lets a browser use
  the app: start a session, see questions and images, answer, and see its own scores at the end.
- The **administrator token** (a second link, for the person running the study) also shows the
  gold answers and any participant's results, at any time. Never give it to a participant.
- Each participant name gets a **session key** when its session starts (kept in
  ``<out>/.keys.json``, so it survives a restart); answering, resuming and results need it, so a
  second browser cannot take over or read someone else's session by typing their name. The page
  keeps the key and shows a resume link that carries it.

Tokens are compared in constant time (:func:`hmac.compare_digest`).
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import os
import re
import secrets
import threading
from dataclasses import dataclass
from pathlib import Path

from ...builder.core.secrets import Redactor, hide_matches

log = logging.getLogger(__name__)

PARTICIPANT = "participant"
ADMIN = "admin"
KEYS_FILE = ".keys.json"
TOKENS_FILE = ".tokens.json"


@dataclass(frozen=True)
class Tokens:
    """The run's participant and administrator tokens (random unless given)."""

    participant: str
    admin: str

    @classmethod
    def new(cls) -> Tokens:
        return cls(secrets.token_urlsafe(18), secrets.token_urlsafe(18))

    @classmethod
    def load_or_new(cls, out: str | Path, renew: bool = False) -> Tokens:
        """The tokens kept in ``<out>/.tokens.json`` (mode 0600), so that the printed links stay
        valid across restarts of one study; new ones when there are none or ``renew``."""
        path = Path(out) / TOKENS_FILE
        if path.exists() and not renew:
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                return cls(str(data[PARTICIPANT]), str(data[ADMIN]))
            except (OSError, ValueError, KeyError, TypeError) as exc:
                log.warning("%s: unreadable (%s); new tokens", path, exc)
        tokens = cls.new()
        _write_private(path, {PARTICIPANT: tokens.participant, ADMIN: tokens.admin})
        return tokens

    def role(self, given: str | None) -> str | None:
        """``admin``, ``participant`` or None for the token a request carries."""
        if not given:
            return None
        given_b = str(given).encode("utf-8", "replace")
        if hmac.compare_digest(given_b, self.admin.encode()):
            return ADMIN
        if hmac.compare_digest(given_b, self.participant.encode()):
            return PARTICIPANT
        return None


class SessionKeys:
    """Participant name -> session key, persisted in ``<out>/.keys.json`` (mode 0600)."""

    def __init__(self, out: str | Path) -> None:
        self.path = Path(out) / KEYS_FILE
        self._lock = threading.Lock()
        self._keys: dict[str, str] = {}
        if self.path.exists():
            try:
                data = json.loads(self.path.read_text(encoding="utf-8"))
                self._keys = {str(k): str(v) for k, v in dict(data).items()}
            except (OSError, ValueError, TypeError) as exc:
                log.warning(
                    "%s: unreadable (%s); participants get new session keys", self.path, exc
                )

    def claim(self, name: str, key: str | None, new_ok: bool = True) -> str | None:
        """The session key of ``name``: a new one for a name without a key when ``new_ok``
        (the caller refuses that for a name whose answers file exists, unless the administrator
        asks), the same one when ``key`` matches; None otherwise."""
        with self._lock:
            known = self._keys.get(name)
            if known is None:
                if not new_ok:
                    return None
                known = self._keys[name] = secrets.token_urlsafe(12)
                self._save()
                return known
            if key and hmac.compare_digest(str(key).encode("utf-8", "replace"), known.encode()):
                return known
            return None

    def values(self) -> tuple[str, ...]:
        """Every session key (for the log's redactor)."""
        with self._lock:
            return tuple(sorted(self._keys.values()))

    def key_of(self, name: str) -> str | None:
        with self._lock:
            return self._keys.get(name)

    def check(self, name: str, key: str | None) -> bool:
        with self._lock:
            known = self._keys.get(name)
        return bool(
            known
            and key
            and hmac.compare_digest(str(key).encode("utf-8", "replace"), known.encode())
        )

    def _save(self) -> None:
        _write_private(self.path, self._keys)


#: A value that is a secret in a logged request line (the run's tokens, session keys): after
#: ``token=`` or ``key=`` (also ``X-Misi-Token:``, ``access_token=``), found in the normalised
#: text, so ``%74oken=`` and a name split by invisible characters count too.
_SECRET_QUERY_RE = re.compile(
    r"(?<![A-Za-z0-9])[A-Za-z0-9_-]*(?:token|key)\s*[=:]\s*(?P<value>[^&;#\s\"']*)", re.I
)


def public_path(text: str) -> str:
    """``text`` (a request path or a log line quoting one) with the values of ``token=`` and
    ``key=`` replaced by ``***`` however they are spelled (``builder/core/secrets.py``
    normalises the text first): tokens and keys are never logged."""
    return hide_matches(text, _SECRET_QUERY_RE, "***")


def _write_private(path: Path, data: dict) -> None:
    """Write JSON readable by the owner only (0600), atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(data, fh, sort_keys=True)
    os.replace(tmp, path)


def is_loopback(host: str) -> bool:
    """True for an address only this machine can reach (127.0.0.0/8, ::1, ``localhost``)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def exposure_warning(host: str, port: int) -> str | None:
    """What listening on a non-loopback ``host`` exposes (None for loopback)."""
    if is_loopback(host):
        return None
    where = "every network interface" if host in ("", "0.0.0.0", "::") else host
    return (
        f"WARNING: --host {host or '0.0.0.0'} listens on {where}, port {port}: anyone who can reach "
        "it AND has the participant link can answer questions, see every question and image of the "
        "split, and create participants; anyone with the administrator link can read the gold "
        "answers and every participant's results. The traffic is plain HTTP (tokens and answers "
        "readable on the network): use it only on a trusted network, or keep the default "
        "127.0.0.1 behind an SSH tunnel (docs/human-baseline.md)."
    )


class LogHider:
    """What the app's log lines become: the run's tokens and every session key replaced in any
    spelling (a name, an id or a path that holds one; :class:`~...builder.core.secrets.Redactor`),
    then every ``token=`` / ``key=`` value (:func:`public_path`)."""

    def __init__(self, tokens: Tokens, keys: SessionKeys) -> None:
        self.tokens, self.keys = tokens, keys
        self._known: tuple[tuple[str, ...], Redactor] = ((), Redactor())

    def __call__(self, text: str) -> str:
        secrets_now = (self.tokens.participant, self.tokens.admin, *self.keys.values())
        if secrets_now != self._known[0]:
            self._known = (secrets_now, Redactor(secrets_now))
        return public_path(self._known[1].text(text))
