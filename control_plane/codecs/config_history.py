"""The config history records of the sidecars' own topic. Pure, no I/O; the Spark jobs read them too.

Connect's config topic is compacted: a connector's earlier configs are gone once it is compacted. The
sidecar that records for the cluster (``domain.history``) writes one record per change it reads
there, keyed by the change's offset in the config topic, so that recording a change twice (two sidecars
that both thought they record, for an interval) writes the same key:

- Key ``config-history-<offset>-<connector>``, value ``{"ts": ms, "change": "created"|"updated"|"state"|
  "deleted", "config": {...}|null, "secrets": {key: digest}, "state": "STARTED"|"PAUSED"|"STOPPED"|null,
  "sidecar": "..."}``: the connector as it was after the config topic's record at ``offset`` (its broker
  timestamp ``ts``): the whole config with each secret value replaced by ``[hidden]`` and kept only as a
  keyed digest in ``secrets`` (``rules.config_diff``), and its target state. A tombstone: past retention.
- Key ``config-author-<offset>-<connector>``, value ``{"who": "...", "sidecar": "..."}``: the change at
  ``offset`` was written through a sidecar, by the authenticated principal ``who``, written by that sidecar
  under the connector's fence. Changes written straight to a worker have none.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import orjson

from .results import Malformed, Tombstone, UnknownKey
from .sidecar_record import split_record

ENTRY_PREFIX = "config-history-"
AUTHOR_PREFIX = "config-author-"
CHANGES = ("created", "updated", "state", "deleted")


@dataclass(frozen=True, slots=True)
class HistoryKey:
    offset: int  # the change's offset in the config topic: the version's id
    connector: str


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    offset: int
    connector: str
    timestamp_ms: int
    change: str  # one of CHANGES
    config: Mapping[str, str | None] | None  # secrets as [hidden]; None once deleted
    state: str | None
    sidecar: str
    secrets: Mapping[str, str] = field(default_factory=dict)  # secret key -> keyed digest

    @property
    def key(self) -> HistoryKey:
        return HistoryKey(self.offset, self.connector)


@dataclass(frozen=True, slots=True)
class Author:
    offset: int
    connector: str
    who: str | None
    sidecar: str


def _key(prefix: str, key: HistoryKey) -> bytes:
    return f"{prefix}{key.offset}-{key.connector}".encode()


def encode_entry(record: HistoryEntry | Tombstone[HistoryKey]) -> tuple[bytes, bytes | None]:
    if isinstance(record, Tombstone):
        return _key(ENTRY_PREFIX, record.key), None
    body = {
        "ts": record.timestamp_ms,
        "change": record.change,
        "config": dict(record.config) if record.config is not None else None,
        "secrets": dict(record.secrets),
        "state": record.state,
        "sidecar": record.sidecar,
    }
    return _key(ENTRY_PREFIX, record.key), orjson.dumps(body)


def encode_author(record: Author | Tombstone[HistoryKey]) -> tuple[bytes, bytes | None]:
    if isinstance(record, Tombstone):
        return _key(AUTHOR_PREFIX, record.key), None
    body = {"who": record.who, "sidecar": record.sidecar}
    return _key(AUTHOR_PREFIX, HistoryKey(record.offset, record.connector)), orjson.dumps(body)


def _split(
    key: bytes | None, value: bytes | None, prefix: str
) -> tuple[HistoryKey, dict[str, object] | None] | UnknownKey | Malformed:
    split = split_record(key, value, prefix)
    if isinstance(split, UnknownKey | Malformed):
        return split
    name, body = split
    offset, dash, connector = name.partition("-")
    if not offset.isdigit() or not dash or not connector:
        return Malformed("a config history key without <offset>-<connector>", key)
    return HistoryKey(int(offset), connector), body


def _string_map(value: object) -> bool:
    return isinstance(value, dict) and all(isinstance(v, str) or v is None for v in value.values())


def decode_entry(
    key: bytes | None, value: bytes | None
) -> HistoryEntry | Tombstone[HistoryKey] | UnknownKey | Malformed:
    split = _split(key, value, ENTRY_PREFIX)
    if isinstance(split, UnknownKey | Malformed):
        return split
    hkey, body = split
    if body is None:
        return Tombstone(hkey)
    ts, change, config = body.get("ts"), body.get("change"), body.get("config")
    secrets, state, sidecar = body.get("secrets", {}), body.get("state"), body.get("sidecar")
    if not isinstance(ts, int) or isinstance(ts, bool) or change not in CHANGES or not isinstance(sidecar, str):
        return Malformed("a config history entry without ts, change or sidecar", key)
    if not (config is None or _string_map(config)) or not (state is None or isinstance(state, str)):
        return Malformed("a config history entry whose config or state is not one", key)
    if not isinstance(secrets, dict) or not all(isinstance(v, str) for v in secrets.values()):
        return Malformed("a config history entry whose secrets are not digests", key)
    return HistoryEntry(hkey.offset, hkey.connector, ts, str(change), config, state, sidecar, secrets)  # type: ignore[arg-type]


def decode_author(key: bytes | None, value: bytes | None) -> Author | Tombstone[HistoryKey] | UnknownKey | Malformed:
    split = _split(key, value, AUTHOR_PREFIX)
    if isinstance(split, UnknownKey | Malformed):
        return split
    hkey, body = split
    if body is None:
        return Tombstone(hkey)
    who, sidecar = body.get("who"), body.get("sidecar")
    if not (who is None or isinstance(who, str)) or not isinstance(sidecar, str):
        return Malformed("a config author without who or sidecar", key)
    return Author(hkey.offset, hkey.connector, who, sidecar)


__all__ = [
    "AUTHOR_PREFIX",
    "CHANGES",
    "ENTRY_PREFIX",
    "Author",
    "HistoryEntry",
    "HistoryKey",
    "decode_author",
    "decode_entry",
    "encode_author",
    "encode_entry",
]
