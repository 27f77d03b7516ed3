"""A connector config as the history keeps it, and the key-level difference of two. Pure; the sidecar
and the Spark jobs use the same rule.

Secret values (``rules.secrets``: by key name; a value made only of config provider references is no
secret and is kept as written) are never kept in clear: the stored config shows ``[hidden]`` and
``secrets`` holds a keyed digest of the value, HMAC-SHA256 under the cluster's history key
(``HISTORY_SECRET_KEY``, the same on every sidecar) over the connector, the key and the value. Two
versions then compare as changed or unchanged for a secret without either revealing it, and a digest
of one connector's password says nothing about another's.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass

from .secrets import DEFAULT_SECRET_RULE, MASK, SecretRule

DIGEST_PREFIX = "hmac-sha256:"

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


class SecretDigests:
    def __init__(self, key: bytes, rule: SecretRule = DEFAULT_SECRET_RULE) -> None:
        self._key = key
        self.rule = rule

    def digest(self, connector: str, key: str, value: str) -> str:
        message = b"\0".join(part.encode() for part in (connector, key, value))
        return DIGEST_PREFIX + hmac.new(self._key, message, hashlib.sha256).hexdigest()

    def secret_keys(self, config: Config) -> list[str]:
        """The keys whose value is a secret the history keeps only as a digest."""
        return [k for k, v in config.items() if v is not None and self.rule.masked_value(k, v) != v]

    def stored(self, connector: str, config: Config) -> StoredConfig:
        secrets = {k: self.digest(connector, k, v) for k in self.secret_keys(config) if (v := config[k]) is not None}
        return StoredConfig({k: MASK if k in secrets else v for k, v in config.items()}, secrets)


def diff(before: StoredConfig | None, after: StoredConfig | None) -> list[Change]:
    """Key by key, sorted by key: what ``after`` adds, removes and changes of ``before`` (None: no config,
    before a creation or after a deletion). A secret is changed when its digest is."""
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


__all__ = ["DIGEST_PREFIX", "Change", "SecretDigests", "StoredConfig", "diff"]
