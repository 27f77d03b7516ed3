"""Small helpers that reproduce how the worker's Java code reads keys, so that the codecs accept and
reject exactly what the worker does: ``String.split("-")`` (trailing empty strings dropped), ``String.trim``,
``Integer.parseInt`` and the consumer's ``StringDeserializer`` (UTF-8); and the Java semantics the
worker's writes depend on: ``String.hashCode`` and ``java.util.HashMap`` iteration order (the field order
of offsets the worker writes), ``String.valueOf`` and the number parsing of ``SinkUtils``. Each Java
rule lives here once; the sidecar and the Spark jobs import it.

Written by hand because the records must be the bytes a worker writes and reads, and no Python library
reproduces Java's hashing and map order; checked against records real workers wrote.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from . import json_wire

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


def java_split_dash(text: str) -> list[str]:
    """``text.split("-")`` in Java: like Python's split, but trailing empty strings are removed."""
    parts = text.split("-")
    while parts and parts[-1] == "":
        parts.pop()
    return parts


# ``String.trim()``: every char up to and including U+0020 (space and the C0 controls), nothing else.
_JAVA_TRIMMED = "".join(chr(c) for c in range(0x21))


def java_trim(text: str) -> str:
    """``java.lang.String#trim``: strips the characters ``<= ' '`` at both ends (not Unicode whitespace)."""
    return text.strip(_JAVA_TRIMMED)


def java_parse_int(text: str) -> int | None:
    """``Integer.parseInt(text)``, or ``None`` where Java throws ``NumberFormatException``."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    # Java accepts any BMP decimal digit (Character.digit), nothing else: no spaces, no underscores.
    if not digits or not all(ch.isdecimal() and ord(ch) < 0x10000 for ch in digits):
        return None
    value = int(digits) * (-1 if text[0] == "-" else 1)
    return value if INT32_MIN <= value <= INT32_MAX else None


def as_int32(value: object) -> int | None:
    """A JSON integer that fits Java's ``int``, else ``None`` (booleans and floats are not integers)."""
    if isinstance(value, int) and not isinstance(value, bool) and INT32_MIN <= value <= INT32_MAX:
        return value
    return None


def as_int64(value: object) -> int | None:
    """A JSON integer that fits Java's ``long``, else ``None``."""
    if isinstance(value, int) and not isinstance(value, bool) and INT64_MIN <= value <= INT64_MAX:
        return value
    return None


def key_text(key: bytes | None) -> str | None:
    """The key as the worker's ``StringDeserializer`` sees it; ``None`` if absent or not UTF-8."""
    if key is None:
        return None
    try:
        return key.decode("utf-8")
    except UnicodeDecodeError:
        return None


INT32_BOUNDS = (INT32_MIN, INT32_MAX)
INT64_BOUNDS = (INT64_MIN, INT64_MAX)
_JAVA_INTEGER = re.compile(r"[+-]?[0-9]+")


def java_string(value: object) -> str:
    """``String.valueOf`` of a value Jackson read, for Connect's parse-failure messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return json_wire.java_double(value)
    if isinstance(value, str):
        return value
    return json_wire.dumps(value).decode()


def java_value_as_int(value: object, bounds: tuple[int, int]) -> int | None:
    """``Integer.parseInt`` / ``Long.parseLong`` of ``String.valueOf(value)`` (SinkUtils): "10" and 10
    both parse; ``bounds`` is ``INT32_BOUNDS`` or ``INT64_BOUNDS``."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and _JAVA_INTEGER.fullmatch(value):
        number = int(value)
    else:
        return None
    return number if bounds[0] <= number <= bounds[1] else None


# -- java.util.HashMap iteration order ------------------------------------------------------------
def java_string_hash(text: str) -> int:
    """``String.hashCode``: over UTF-16 code units, 32-bit overflow."""
    h = 0
    data = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h


def java_hash_map_order(mapping: Mapping[str, Any]) -> dict[str, Any]:
    """``mapping`` re-ordered as a ``java.util.HashMap`` filled in its order iterates.

    The worker writes altered source offsets after a round trip through its JsonConverter
    (Worker.normalizeSourceConnectorOffsets), which reads a JSON object into a HashMap: the key and
    value bytes it writes list the fields in this order, not in the order of the request."""
    capacity = 16
    while len(mapping) > capacity * 0.75:  # HashMap resizes past its load factor
        capacity *= 2

    def bucket(key: str) -> int:
        h = java_string_hash(key)
        return (h ^ (h >> 16)) & (capacity - 1)  # HashMap.hash spreads the high bits down

    ordered = sorted(enumerate(mapping), key=lambda pair: (bucket(pair[1]), pair[0]))
    return {key: mapping[key] for _, key in ordered}


def canonical_partition(partition: Mapping[str, Any] | None) -> bytes:
    """A source partition's identity regardless of field order (types kept: 1, 1.0 and true differ)."""
    return json_wire.dumps(None if partition is None else dict(sorted(partition.items())))
