"""Small helpers that reproduce how the worker's Java code reads keys, so that the codecs accept and
reject exactly what the worker does: ``String.split("-")`` (trailing empty strings dropped),
``Integer.parseInt`` and the consumer's ``StringDeserializer`` (UTF-8)."""

from __future__ import annotations

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
