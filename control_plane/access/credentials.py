"""The sidecar's credentials: bearer tokens and HTTP basic users, each with a role and optionally the
connector-name patterns it is limited to; kept hashed, read from a file (re-read when it changes) and from
the environment.

One entry per line; blank lines and ``#`` comments are skipped::

    token <name> <role> <credential> [<pattern>,<pattern>...]
    user  <name> <role> <credential> [<pattern>,<pattern>...]

``role`` is ``viewer``, ``operator`` or ``admin``; patterns are ``fnmatch`` globs of connector names. A
token's credential is ``sha256:<hex>`` (the SHA-256 of the token; tokens are long and random, one hash is
enough); a user's is ``pbkdf2_sha256$<iterations>$<salt hex>$<hash hex>`` (hashlib's PBKDF2, slow on
purpose; a checked password is remembered, by its SHA-256, so the cost is paid once per password).
``control-plane hash-credential`` prints either. In the environment (``CONTROL_PLANE_AUTH_CREDENTIALS``,
entries separated by newlines or ``;``) a credential may also be ``plain:<text>`` (a secret injected by
the platform): it is hashed when read, the text is not kept. A file must hold hashes only.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import hmac
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass

import structlog

from ..rules.access import Principal, Role

log = structlog.get_logger(__name__)

PBKDF2_ITERATIONS = 600_000  # OWASP's figure for PBKDF2-HMAC-SHA256
_REMEMBERED = 1024


class CredentialsError(ValueError):
    """A credentials entry cannot be read; the message names the file and line."""


@dataclass(frozen=True)
class _User:
    principal: Principal
    iterations: int
    salt: bytes
    digest: bytes


@dataclass(frozen=True)
class Entries:
    tokens: dict[bytes, Principal]  # SHA-256 of the token -> who
    users: dict[str, _User]


def hash_token(token: str) -> str:
    return "sha256:" + hashlib.sha256(token.encode()).hexdigest()


def hash_password(password: str, iterations: int = PBKDF2_ITERATIONS) -> str:
    salt = secrets.token_bytes(16)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations)
    return f"pbkdf2_sha256${iterations}${salt.hex()}${digest.hex()}"


def parse(text: str, origin: str, *, plain_allowed: bool) -> Entries:
    tokens: dict[bytes, Principal] = {}
    users: dict[str, _User] = {}
    for number, line in enumerate(text.replace(";", "\n").splitlines() if plain_allowed else text.splitlines(), 1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        where = f"{origin}, entry {number}" if plain_allowed else f"{origin}:{number}"
        if len(fields) not in (4, 5) or fields[0] not in ("token", "user"):
            raise CredentialsError(f"{where}: expected 'token|user <name> <role> <credential> [<patterns>]'")
        kind, name, role, credential = fields[:4]
        try:
            principal = Principal(name, Role(role), tuple(fields[4].split(",")) if len(fields) == 5 else None)
        except ValueError:
            raise CredentialsError(f"{where}: unknown role {role!r} (viewer, operator or admin)") from None
        if credential.startswith("plain:") and not plain_allowed:
            raise CredentialsError(f"{where}: a file holds hashed credentials only (control-plane hash-credential)")
        if kind == "token":
            tokens[_token_digest(credential, where)] = principal
        else:
            users[name] = _user(principal, credential, where)
    return Entries(tokens, users)


def _token_digest(credential: str, where: str) -> bytes:
    if credential.startswith("plain:"):
        return hashlib.sha256(credential[len("plain:") :].encode()).digest()
    try:
        if not credential.startswith("sha256:"):
            raise ValueError
        digest = bytes.fromhex(credential[len("sha256:") :])
        if len(digest) != 32:
            raise ValueError
        return digest
    except ValueError:
        raise CredentialsError(f"{where}: a token's credential is sha256:<64 hex digits>") from None


def _user(principal: Principal, credential: str, where: str) -> _User:
    if credential.startswith("plain:"):
        fresh = secrets.token_bytes(16)
        hashed = hashlib.pbkdf2_hmac("sha256", credential[len("plain:") :].encode(), fresh, PBKDF2_ITERATIONS)
        return _User(principal, PBKDF2_ITERATIONS, fresh, hashed)
    try:
        scheme, iterations, salt, digest = credential.split("$")
        if scheme != "pbkdf2_sha256" or int(iterations) < 1:
            raise ValueError
        return _User(principal, int(iterations), bytes.fromhex(salt), bytes.fromhex(digest))
    except ValueError:
        raise CredentialsError(f"{where}: a user's credential is pbkdf2_sha256$<iterations>$<salt>$<hash>") from None


class Credentials:
    """Who a request's ``Authorization`` header names, or None. The file is read again at most every
    ``check_s`` and its entries replaced when its content changed; a file that no longer reads keeps the
    entries read before, and ``reload_error`` says why (logged once)."""

    def __init__(self, path: str | None, environment: str | None, *, check_s: float = 2.0) -> None:
        self._path = path
        self._env = parse(environment, "CONTROL_PLANE_AUTH_CREDENTIALS", plain_allowed=True) if environment else None
        self._check_s = check_s
        self._content: bytes | None = None
        self._checked = 0.0
        self._file = Entries({}, {})
        self._entries = self._merged()
        self._remembered: OrderedDict[bytes, Principal] = OrderedDict()
        self.reload_error: str | None = None
        self.reloads = 0
        if path:
            self._read_file(raise_errors=True)

    @property
    def empty(self) -> bool:
        return not (self._entries.tokens or self._entries.users)

    def _merged(self) -> Entries:
        env = self._env or Entries({}, {})
        return Entries({**self._file.tokens, **env.tokens}, {**self._file.users, **env.users})

    def _read_file(self, *, raise_errors: bool) -> None:
        assert self._path is not None
        try:
            with open(self._path, "rb") as handle:  # small: compared whole (a change within a clock tick too)
                content = handle.read()
            if content == self._content:
                return
            entries = parse(content.decode("utf-8"), self._path, plain_allowed=False)
        except (OSError, UnicodeDecodeError, CredentialsError) as err:
            message = f"cannot read {self._path}: {err.strerror}" if isinstance(err, OSError) else str(err)
            if raise_errors:
                raise CredentialsError(message) from None
            if message != self.reload_error:
                log.error("credentials file not read again; the entries read before stay", error=message)
            self.reload_error = message
            return
        self._content, self._file, self.reload_error = content, entries, None
        self._entries = self._merged()
        self._remembered.clear()
        self.reloads += 1
        if self.reloads > 1:
            log.info("credentials file read again", path=self._path, entries=len(entries.tokens) + len(entries.users))

    def refresh(self, now: float | None = None) -> None:
        """Re-read the file when it changed (at most every ``check_s``)."""
        now = time.monotonic() if now is None else now
        if self._path and now - self._checked >= self._check_s:
            self._checked = now
            self._read_file(raise_errors=False)

    async def authenticate(self, authorization: str | None) -> Principal | None:
        """Who the ``Authorization`` header names, or None. A password not checked before is hashed on a
        thread: PBKDF2 is slow on purpose, and the event loop goes on meanwhile."""
        if not authorization:
            return None
        self.refresh()
        scheme, _, value = authorization.strip().partition(" ")
        scheme = scheme.lower()
        if scheme == "bearer":
            return self._entries.tokens.get(hashlib.sha256(value.strip().encode()).digest())
        if scheme != "basic":
            return None
        try:
            user, sep, password = base64.b64decode(value.strip(), validate=True).decode("utf-8").partition(":")
        except (binascii.Error, UnicodeDecodeError):
            return None
        entry = self._entries.users.get(user)
        if not sep or entry is None:
            return None
        memo = hashlib.sha256(f"{user}\0{password}".encode()).digest()
        if (known := self._remembered.get(memo)) is not None:
            self._remembered.move_to_end(memo)
            return known
        digest = await asyncio.to_thread(hashlib.pbkdf2_hmac, "sha256", password.encode(), entry.salt, entry.iterations)
        if not hmac.compare_digest(digest, entry.digest):
            return None
        self._remembered[memo] = entry.principal
        if len(self._remembered) > _REMEMBERED:
            self._remembered.popitem(last=False)
        return entry.principal


__all__ = ["Credentials", "CredentialsError", "Entries", "hash_password", "hash_token", "parse"]
