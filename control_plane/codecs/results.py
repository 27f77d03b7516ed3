"""The explicit outcomes of decoding one internal-topic record. Decoders never raise for bad input:
they return a record type, a :class:`Tombstone` (value ``None``) for a known key, an :class:`UnknownKey`
for a key no stock worker writes, or :class:`Malformed` with a reason (the worker would log and skip it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

K = TypeVar("K")


@dataclass(frozen=True)
class Tombstone(Generic[K]):
    """A record with a null value for a key of a known type (deletion, or a reset of topic tracking)."""

    key: K


@dataclass(frozen=True)
class UnknownKey:
    """A well-formed key that matches none of the record types the worker knows; the worker skips it."""

    key: bytes


@dataclass(frozen=True)
class Malformed:
    """A record the worker would reject (log and skip): undecodable key or value, wrong JSON shape."""

    reason: str
    key: bytes | None = None
