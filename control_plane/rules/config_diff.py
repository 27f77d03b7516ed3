"""A connector config as the history keeps it, and the key-level difference of two. No I/O; the sidecar
and the Spark jobs use the same rule (``ChangeMarks`` alone keeps state: what its process recorded).

Secret values (``rules.secrets``: by key name; a value made only of config provider references is no
secret and is kept as written) are never kept in clear: the stored config shows ``[hidden]`` and
``secrets`` holds, per secret key, a mark that is equal in two versions when the value is. Two kinds:

- ``SecretDigests``: with a key (``HISTORY_SECRET_KEY``, the same on every sidecar), HMAC-SHA256 over the
  connector, the key and the value. Versions compare whoever recorded them, and a rollback tells whether
  the connector's current value is a version's; only a holder of the key can test a guess against one.
- ``ChangeMarks``: without a key, no digest at all. A mark names the version where the value was first
  recorded (``changed-at:<offset>``): kept while the value stays the same, a new one when it changes. The
  recording sidecar compares with the value before under a key of its process, held in memory only; where
  it does not know that value (it started after it was recorded, and the config topic no longer has it),
  or the version before holds a digest (recorded under a key), the secret is marked as changed.

Either way a digest of one connector's password says nothing about another's. ``redacted`` turns marks of
any kind into ones that only say "the same value or not", for what leaves the cluster (exports).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from .secrets import DEFAULT_SECRET_RULE, MASK, SecretRule

DIGEST_PREFIX = "hmac-sha256:"
CHANGE_PREFIX = "changed-at:"
REDACTED_PREFIX = "value-"

Config = Mapping[str, str | None]


@dataclass(frozen=True)
class StoredConfig:
    config: dict[str, str | None]  # secret values as [hidden]
    secrets: dict[str, str]  # secret key -> digest


@dataclass(frozen=True)
class Change:
    key: str
    op: str  # "added", "removed" or "changed"
    before: str | None = None  # [hidden] for a secret
    after: str | None = None
    secret: bool = False

    def as_json(self) -> dict[str, object]:
        body: dict[str, object] = {"name": self.key, "op": self.op}
        if self.op != "added":
            body["before"] = self.before
        if self.op != "removed":
            body["after"] = self.after
        if self.secret:
            body["secret"] = True
        return body


class SecretMarks(Protocol):
    """What stands for a secret value in the history (see the module's docstring)."""

    rule: SecretRule

    def secret_keys(self, config: Config) -> list[str]: ...

    def stored(
        self, connector: str, config: Config, before: StoredConfig | None = None, version: int = -1
    ) -> StoredConfig:
        """``config`` as the history keeps it; ``before``: the version before (None: none), ``version``:
        the config topic offset of this one."""
        ...

    def holds(self, connector: str, key: str, value: str, mark: str) -> bool:
        """Whether ``value`` is the one ``mark`` stands for (False: not, or it cannot tell)."""
        ...

    def know(self, connector: str, config: Config, stored: StoredConfig) -> None:
        """``config`` (in clear) is the one ``stored`` stands for (a version recorded before this process)."""
        ...


class _Rule:
    rule: SecretRule

    def secret_keys(self, config: Config) -> list[str]:
        """The keys whose value is a secret the history keeps only as a mark."""
        return [k for k, v in config.items() if v is not None and self.rule.masked_value(k, v) != v]

    def _masked(self, config: Config, marks: dict[str, str]) -> StoredConfig:
        return StoredConfig({k: MASK if k in marks else v for k, v in config.items()}, marks)


class SecretDigests(_Rule):
    """Marks that are keyed digests: the same value, the same digest, under the same key."""

    def __init__(self, key: bytes, rule: SecretRule = DEFAULT_SECRET_RULE) -> None:
        self._key = key
        self.rule = rule

    def __repr__(self) -> str:  # the key is a secret
        return "SecretDigests(...)"

    def keyed(self, data: bytes) -> str:
        return DIGEST_PREFIX + hmac.new(self._key, data, hashlib.sha256).hexdigest()

    def digest(self, connector: str, key: str, value: str) -> str:
        return self.keyed(b"\0".join(part.encode() for part in (connector, key, value)))

    def stored(
        self, connector: str, config: Config, before: StoredConfig | None = None, version: int = -1
    ) -> StoredConfig:
        marks = {k: self.digest(connector, k, v) for k in self.secret_keys(config) if (v := config[k]) is not None}
        return self._masked(config, marks)

    def holds(self, connector: str, key: str, value: str, mark: str) -> bool:
        return hmac.compare_digest(self.digest(connector, key, value), mark)

    def know(self, connector: str, config: Config, stored: StoredConfig) -> None:
        """Nothing to learn: a digest compares by itself."""


class ChangeMarks(_Rule):
    """Marks without a key: the version where the value was first recorded. The values' digests under a
    key of this process, which never leaves it, say whether a value is the one before."""

    def __init__(self, rule: SecretRule = DEFAULT_SECRET_RULE) -> None:
        self.rule = rule
        self._process = SecretDigests(secrets.token_bytes(32), rule)
        self._known: dict[tuple[str, str], tuple[str, str]] = {}  # (connector, key) -> (mark, digest here)

    def __repr__(self) -> str:
        return "ChangeMarks(...)"

    def know(self, connector: str, config: Config, stored: StoredConfig) -> None:
        """``config`` (in clear) is the one ``stored`` stands for: its values are known for the next version."""
        for key, mark in stored.secrets.items():
            if (value := config.get(key)) is not None:
                self._known[(connector, key)] = (mark, self._process.digest(connector, key, value))

    def stored(
        self, connector: str, config: Config, before: StoredConfig | None = None, version: int = -1
    ) -> StoredConfig:
        marks: dict[str, str] = {}
        for key in self.secret_keys(config):
            value, previous = config[key], before.secrets.get(key, "") if before is not None else ""
            # a digest (recorded under a key) is never carried on: the value is marked as changed instead
            same = previous.startswith(CHANGE_PREFIX) and self.holds(connector, key, value or "", previous)
            marks[key] = previous if same else f"{CHANGE_PREFIX}{version}"
        stored = self._masked(config, marks)
        self.know(connector, config, stored)
        return stored

    def holds(self, connector: str, key: str, value: str, mark: str) -> bool:
        known = self._known.get((connector, key))
        digest = self._process.digest(connector, key, value)
        return known is not None and known[0] == mark and hmac.compare_digest(known[1], digest)


def redacted(marks: Iterable[tuple[str, str, str]]) -> dict[tuple[str, str, str], str]:
    """Per (connector, key, mark), a mark that says only which marks of that connector's key are the same
    value: ``value-1`` for the first distinct one met, ``value-2`` for the next, in the order given."""
    out: dict[tuple[str, str, str], str] = {}
    counts: dict[tuple[str, str], int] = {}
    for connector, key, mark in marks:
        if (connector, key, mark) not in out:
            counts[(connector, key)] = counts.get((connector, key), 0) + 1
            out[(connector, key, mark)] = f"{REDACTED_PREFIX}{counts[(connector, key)]}"
    return out


def diff(before: StoredConfig | None, after: StoredConfig | None) -> list[Change]:
    """Key by key, sorted by key: what ``after`` adds, removes and changes of ``before`` (None: no config,
    before a creation or after a deletion). A secret is changed when its mark is."""
    old = before.config if before is not None else {}
    new = after.config if after is not None else {}
    old_secrets = before.secrets if before is not None else {}
    new_secrets = after.secrets if after is not None else {}
    changes = []
    for key in sorted(old.keys() | new.keys()):
        secret = key in old_secrets or key in new_secrets
        if key not in new:
            changes.append(Change(key, "removed", before=old[key], secret=secret))
        elif key not in old:
            changes.append(Change(key, "added", after=new[key], secret=secret))
        elif old[key] != new[key] or old_secrets.get(key) != new_secrets.get(key):
            changes.append(Change(key, "changed", old[key], new[key], secret))
    return changes


__all__ = [
    "CHANGE_PREFIX",
    "DIGEST_PREFIX",
    "REDACTED_PREFIX",
    "Change",
    "ChangeMarks",
    "SecretDigests",
    "SecretMarks",
    "StoredConfig",
    "diff",
    "redacted",
]
