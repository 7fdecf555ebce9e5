"""Who is calling: API keys, client tokens, and the caller every session belongs to.

**API keys** are on by default when the server listens on anything but loopback
(`ENVHUB_AUTH=auto`; `on`/`off` force it). A key is a random secret the client sends as
`Authorization: Bearer <key>` on REST, on the WebSocket handshake and on OpenEnv's routes. The
server holds only its SHA-256 (the keys are 256-bit random, so a plain hash is enough), from
`ENVHUB_API_KEYS` and/or the file `ENVHUB_API_KEYS_FILE`, one entry per line:

    # NAME  HASH  [families=a,b]  [max_sessions=N]  [admin]
    trainer-a  sha256:9f86d081884c7d65...  families=db,terminal  max_sessions=64
    operator   sha256:2c26b46b68ffc68f...  admin

`envhub keys new NAME` makes a key and prints its entry. A key may be limited to families (403
otherwise) and to a number of live sessions (429 + Retry-After beyond it). A key marked `admin`
reads every recorded episode, system runs' actions included (`envhub.store.viewer`); any other
caller reads its own.

**Ownership.** Every session belongs to its creator: the key, or without keys the *client token*
(the Bearer value the client sent, at least 16 characters, or one the server mints and returns
as `client_token` in the reset answer). Any other caller is told the session does not exist (404),
exactly as for an unknown id. A WebSocket connection is one caller (its handshake's credential,
or one token minted for the connection).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import logging
import secrets
from dataclasses import dataclass
from pathlib import Path

from envhub.config import Settings
from envhub.errors import Forbidden, Unauthorized
from envhub.store.viewer import PUBLIC, Viewer

log = logging.getLogger("envhub.auth")
MIN_TOKEN_CHARS = 16


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class ApiKey:
    name: str
    sha256: str
    families: frozenset[str] | None = None
    max_sessions: int | None = None
    admin: bool = False

    def entry(self) -> str:
        """The key's line for a keys file or `ENVHUB_API_KEYS`."""
        parts = [self.name, f"sha256:{self.sha256}"]
        if self.families:
            parts.append("families=" + ",".join(sorted(self.families)))
        if self.max_sessions is not None:
            parts.append(f"max_sessions={self.max_sessions}")
        if self.admin:
            parts.append("admin")
        return "  ".join(parts)


def new_key(name: str, families: list[str] | None = None, max_sessions: int | None = None,
            admin: bool = False) -> tuple[str, ApiKey]:
    """A fresh secret and its (hashed) entry; the secret is shown once and never stored."""
    secret = "ehk_" + secrets.token_urlsafe(32)
    return secret, ApiKey(name, digest(secret), frozenset(families) if families else None, max_sessions, admin)


def parse_entries(text: str, where: str) -> list[ApiKey]:
    """Key entries, one per line (or `;`-separated in an environment variable); `#` starts a comment."""
    keys = []
    for n, line in enumerate(text.replace(";", "\n").splitlines(), 1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        if len(fields) < 2 or not fields[1].startswith("sha256:") or len(fields[1]) != 71:
            raise ValueError(f"{where}, entry {n}: expected `NAME sha256:<64 hex digits> [families=a,b] "
                             f"[max_sessions=N] [admin]` (keys are stored hashed: `envhub keys new NAME` makes one)")
        families, quota, admin = None, None, False
        for opt in fields[2:]:
            name, _, value = opt.partition("=")
            if opt == "admin":
                admin = True
            elif name == "families" and value:
                families = frozenset(v for v in value.split(",") if v)
            elif name == "max_sessions" and value.isdigit() and int(value) > 0:
                quota = int(value)
            else:
                raise ValueError(f"{where}, entry {n}: unknown option {opt!r} (families=a,b, max_sessions=N or admin)")
        keys.append(ApiKey(fields[0], fields[1].removeprefix("sha256:").lower(), families, quota, admin))
    return keys


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class Caller:
    """Whoever sent a request; sessions are owned by `owner`."""

    owner: str
    key: ApiKey | None = None
    token: str | None = None  # without keys: the client token (returned at reset)

    @property
    def viewer(self) -> Viewer:
        """What this caller may read of the episode store: its own episodes, or every one with an admin key."""
        return Viewer(owner=self.owner, admin=self.key is not None and self.key.admin)

    def check_family(self, family: str) -> None:
        if self.key is not None and self.key.families is not None and family not in self.key.families:
            raise Forbidden(f"API key {self.key.name!r} may not use {family!r} "
                            f"(allowed: {', '.join(sorted(self.key.families))})")


class Access:
    """The server's access policy, built once from the settings."""

    def __init__(self, enabled: bool, keys: list[ApiKey], public_reads: bool = True) -> None:
        self.enabled = enabled
        self.keys = {k.sha256: k for k in keys}
        self.public_reads = public_reads

    @classmethod
    def from_settings(cls, settings: Settings) -> Access:
        keys = parse_entries(settings.api_keys, "ENVHUB_API_KEYS")
        if settings.api_keys_file is not None:
            path = Path(settings.api_keys_file)
            if not path.is_file():
                raise ValueError(f"ENVHUB_API_KEYS_FILE {path} does not exist")
            keys += parse_entries(path.read_text(encoding="utf-8"), str(path))
        enabled = settings.auth == "on" or (settings.auth == "auto" and not is_loopback(settings.host))
        if enabled and not keys:
            why = "ENVHUB_AUTH=on" if settings.auth == "on" else f"serving on {settings.host}"
            raise ValueError(f"API keys are required ({why}) "
                             "but none is configured: set ENVHUB_API_KEYS or ENVHUB_API_KEYS_FILE "
                             "(`envhub keys new NAME` makes one), or ENVHUB_AUTH=off to serve without keys")
        if not enabled and not is_loopback(settings.host):
            log.warning("serving on %s WITHOUT API keys (ENVHUB_AUTH=off): anyone who reaches it can run sessions",
                        settings.host)
        return cls(enabled, keys, settings.public_reads)

    def caller(self, authorization: str | None) -> Caller:
        """The caller of a request from its `Authorization` header (401 when keys are on and it fails)."""
        scheme, _, credential = (authorization or "").strip().partition(" ")
        credential = credential.strip()
        if authorization and (scheme.lower() != "bearer" or not credential):
            raise Unauthorized("the Authorization header must be `Bearer <key or client token>`")
        if self.enabled:
            if not credential:
                raise Unauthorized("this server requires an API key: send `Authorization: Bearer <key>` "
                                   "(the envhub client reads ENVHUB_API_KEY)")
            key = self._lookup(digest(credential))
            if key is None:
                raise Unauthorized("unknown API key")
            return Caller(owner=f"key:{key.name}:{key.sha256[:16]}", key=key)
        if not credential:  # anonymous: a fresh identity, which owns only what it creates now
            credential = secrets.token_urlsafe(24)
        elif len(credential) < MIN_TOKEN_CHARS:
            raise Unauthorized(f"a client token is at least {MIN_TOKEN_CHARS} characters (use the `client_token` "
                               "a reset returned, or any long random string)")
        return Caller(owner=f"token:{digest(credential)[:32]}", token=credential)

    def _lookup(self, hashed: str) -> ApiKey | None:
        for known, key in self.keys.items():  # constant-time compare; a handful of keys
            if hmac.compare_digest(known, hashed):
                return key
        return None

    def viewer(self, authorization: str | None) -> Viewer:
        """Who reads the episode store: the caller's view with a credential, the public's without one
        (a keyless server would otherwise mint a fresh identity, which owns nothing either)."""
        if not (authorization or "").strip():
            return PUBLIC
        return self.caller(authorization).viewer

    def reader(self, authorization: str | None) -> None:
        """Gate for the read-only routes (registry, health): open unless configured otherwise."""
        if self.enabled and not self.public_reads:
            self.caller(authorization)
