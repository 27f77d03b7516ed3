"""Jackson's messages for request bodies it cannot read, as Connect 4.3.1 answers them (500, ``{"error_code":
500, "message": ...}``), for the endpoints the sidecar answers on workers that lack them. Each message ends
with Jackson's location of the offending token (``line: L, column: C``, 1-based, the token's first
character) and, inside an object, its reference chain.
"""

from __future__ import annotations

import json
from typing import Any

SOURCE = "REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled)"
STRING_MAP = "java.util.LinkedHashMap<java.lang.String,java.lang.String>"
WHITESPACE = " \t\r\n"


def members(body: bytes) -> list[tuple[str, int, Any]]:
    """The top-level object's members in document order: (key, byte offset of the value, value); [] for a
    body that is not an object (a member that cannot be read ends the list)."""
    text = body.decode("utf-8", "replace")
    decoder = json.JSONDecoder()
    found: list[tuple[str, int, Any]] = []
    pos = len(text) - len(text.lstrip(WHITESPACE))
    if text[pos : pos + 1] != "{":
        return found
    pos += 1
    while pos < len(text):
        while pos < len(text) and text[pos] in WHITESPACE + ",":
            pos += 1
        if pos >= len(text) or text[pos] != '"':
            break
        try:
            key, pos = json.decoder.scanstring(text, pos + 1)  # type: ignore[attr-defined]
        except ValueError:
            break
        while pos < len(text) and text[pos] in WHITESPACE + ":":
            pos += 1
        start = pos
        try:
            value, pos = decoder.raw_decode(text, pos)
        except ValueError:
            break
        found.append((str(key), len(text[:start].encode()), value))
    return found


def location(body: bytes, offset: int) -> str:
    before = body[:offset]
    line = before.count(b"\n") + 1
    column = offset - (before.rfind(b"\n") + 1) + 1
    return f"\n at [Source: {SOURCE}; line: {line}, column: {column}]"


def chain(container: str, key: str) -> str:
    return f" (through reference chain: {container}[{json.dumps(key)}])"


def _top_level(value: Any) -> str:
    if isinstance(value, list):
        return "Array value (token `JsonToken.START_ARRAY`)"
    if isinstance(value, bool):
        return f"Boolean value (token `JsonToken.VALUE_{'TRUE' if value else 'FALSE'}`)"
    if isinstance(value, int):
        return "Integer value (token `JsonToken.VALUE_NUMBER_INT`)"
    return "Floating-point value (token `JsonToken.VALUE_NUMBER_FLOAT`)"


def string_map_error(body: bytes) -> str | None:
    """Jackson's message for a body it cannot read as a ``Map<String, String>`` (a configuration or a
    PATCH of one); None when it can (an empty body and ``null`` read as no map)."""
    text = body.decode("utf-8", "replace")
    start = len(body) - len(body.lstrip(WHITESPACE.encode()))
    if not text.strip():
        return None
    try:
        data = json.loads(text)
    except ValueError as err:
        return f"Unexpected content in the request body, which is not JSON: {err}{location(body, start)}"
    if data is None:
        return None
    if isinstance(data, str):
        return (
            "Cannot construct instance of `java.util.LinkedHashMap` (although at least one Creator exists): no "
            f"String-argument constructor/factory method to deserialize from String value ('{data}')"
            + location(body, start)
        )
    if not isinstance(data, dict):
        return f"Cannot deserialize value of type `{STRING_MAP}` from {_top_level(data)}{location(body, start)}"
    for key, offset, value in members(body):
        if isinstance(value, dict | list):
            kind = "Object value (token `JsonToken.START_OBJECT`)" if isinstance(value, dict) else _top_level(value)
            return f"Cannot deserialize value of type `java.lang.String` from {kind}{location(body, offset)}" + chain(
                "java.util.LinkedHashMap", key
            )
    return None


__all__ = ["SOURCE", "chain", "location", "members", "string_map_error"]
