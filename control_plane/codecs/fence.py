"""The fence records of the sidecars' own topic: who may write a connector now. Pure, no I/O.

Key ``fence-<connector>`` (one key per connector, so compaction keeps the last record of each), value JSON:

- ``{"claim": {"token": "...", "sidecar": "...", "lease_ms": 10000}}``: a sidecar asks for the fence of the
  connector, or, already holding it under ``token``, extends its lease;
- ``{"release": {"token": "..."}}``: the holder gives it back.

What a sequence of them means is ``view.fences``'s to decide (the rule reads the records' broker timestamps).
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson

from .results import Malformed, UnknownKey
from .sidecar_record import split_record

FENCE_PREFIX = "fence-"


@dataclass(frozen=True, slots=True)
class FenceClaim:
    connector: str
    token: str
    sidecar: str
    lease_ms: int


@dataclass(frozen=True, slots=True)
class FenceRelease:
    connector: str
    token: str


FenceRecord = FenceClaim | FenceRelease


def encode_fence(record: FenceRecord) -> tuple[bytes, bytes]:
    key = (FENCE_PREFIX + record.connector).encode()
    if isinstance(record, FenceClaim):
        body = {"claim": {"token": record.token, "sidecar": record.sidecar, "lease_ms": record.lease_ms}}
    else:
        body = {"release": {"token": record.token}}
    return key, orjson.dumps(body)


def decode_fence(key: bytes | None, value: bytes | None) -> FenceRecord | UnknownKey | Malformed:
    """A record of the sidecars' topic: a fence record, ``UnknownKey`` for another kind (the topic holds
    more than fences), ``Malformed`` for a fence key whose value is not one."""
    split = split_record(key, value, FENCE_PREFIX)
    if isinstance(split, UnknownKey | Malformed):
        return split
    connector, body = split
    if not isinstance(body, dict) or len(body) != 1:
        return Malformed("value is not one fence record", key)
    ((kind, fields),) = body.items()
    if not isinstance(fields, dict) or not isinstance(fields.get("token"), str):
        return Malformed(f"{kind} has no token", key)
    token = fields["token"]
    if kind == "release":
        return FenceRelease(connector, token)
    lease, sidecar = fields.get("lease_ms"), fields.get("sidecar")
    if (
        kind != "claim"
        or not isinstance(lease, int)
        or isinstance(lease, bool)
        or lease <= 0
        or not isinstance(sidecar, str)
    ):
        return Malformed(f"not a claim or release: {kind}", key)
    return FenceClaim(connector, token, sidecar, lease)


__all__ = ["FENCE_PREFIX", "FenceClaim", "FenceRecord", "FenceRelease", "decode_fence", "encode_fence"]
