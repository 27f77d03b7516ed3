"""What every record of the sidecars' own topic shares: a key ``<prefix><name>`` and a JSON object as its
value (null: a tombstone). Pure, no I/O; each kind's codec (``fence``, ``presence``, ``worker_plugins``)
reads its fields from what this returns."""

from __future__ import annotations

from typing import Any

import orjson

from .results import Malformed, UnknownKey


def split_record(
    key: bytes | None, value: bytes | None, prefix: str
) -> tuple[str, dict[str, Any] | None] | UnknownKey | Malformed:
    """The name after ``prefix`` and the value's object (None for a tombstone); ``UnknownKey`` for a key of
    another kind, ``Malformed`` for a key or value that is not one."""
    try:
        text = key.decode() if key is not None else ""
    except UnicodeDecodeError:
        return Malformed("key is not UTF-8", key)
    if not text.startswith(prefix):
        return UnknownKey(key or b"")
    name = text[len(prefix) :]
    if value is None:
        return name, None
    try:
        body = orjson.loads(value)
    except orjson.JSONDecodeError:
        return Malformed("value is not JSON", key)
    if not isinstance(body, dict):
        return Malformed("value is not an object", key)
    return name, body


__all__ = ["split_record"]
