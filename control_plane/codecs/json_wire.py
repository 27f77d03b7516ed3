"""JSON byte-for-byte as the worker writes its internal topics.

Every internal-topic value and offsets key goes through Connect's ``JsonConverter`` with
``schemas.enable=false`` (org.apache.kafka.connect.json.JsonConverter, serialized by Jackson's
``ObjectMapper.writeValueAsBytes``). Observed with the converters of Connect 3.4.1 and 4.3.1:

- compact: no white space; object members in insertion order (struct fields in schema order);
- strings: ``"`` and ``\\`` escaped; ``\\b \\t \\n \\f \\r`` as short escapes; other characters below
  U+0020 as ``\\u00XX`` with *upper-case* hex; characters outside the BMP written as an escaped UTF-16
  surrogate pair (``😀`` becomes ``\\uD83D\\uDE00``) and lone surrogates escaped too; everything else
  (DEL, U+2028, accented letters, BOM) as raw UTF-8; ``/`` not escaped;
- integers as plain decimals; doubles as Java's ``Double.toString`` (``1.0``, ``1.0E7``, ``1.0E-4``);
  NaN and infinities as the *strings* ``"NaN"``, ``"Infinity"``, ``"-Infinity"``; ``byte[]`` as base64.

Decoding is strict like Jackson's defaults (no NaN literals) and keeps each float's source text
(:class:`JsonFloat`) so that a double written by a JDK whose ``Double.toString`` is not the shortest
form (JDK 17 writes 1e23 as ``9.999999999999999E22``) re-encodes to the same bytes. ``loads_exact`` keeps
every number's text, integers' too (:class:`JsonInt`: ``-0``), for what reads a number as the text it was
written as (Jackson's ``StringDeserializer``: ``rules.config_values``).
"""

from __future__ import annotations

import base64
import json
import math
import re
from collections.abc import Callable, Mapping
from decimal import ROUND_HALF_EVEN, Context, Decimal
from typing import Any, TypeAlias

import orjson


def _no_orjson(data: bytes) -> Any:
    raise ValueError("orjson is not installed")


orjson_loads: Callable[[bytes], Any]
"""orjson's reader (ValueError for what it refuses), or where orjson is missing one that refuses all."""
try:  # the Spark workers' Python needs nothing but pyarrow: without orjson, loads_fast is loads
    from orjson import loads as orjson_loads
except ImportError:  # pragma: no cover - orjson is a dependency of the sidecar
    orjson_loads = _no_orjson

JsonValue: TypeAlias = Any  # None | bool | int | float | str | bytes | list | tuple | Mapping[str, ...]

_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}
_NEEDS_ESCAPE = re.compile('[\x00-\x1f"\\\\\ud800-\udfff\U00010000-\U0010ffff]')
_JAVA_FRACTION = r"\.(?:0|[0-9]*[1-9])"  # Double.toString: no trailing zeros but a lone ".0"
_JAVA_PLAIN = re.compile(r"-?(?:0|[1-9][0-9]*)" + _JAVA_FRACTION)
_JAVA_SCIENTIFIC = re.compile(r"-?[1-9]" + _JAVA_FRACTION + r"E-?[1-9][0-9]*")


class JsonFloat(float):
    """A float read from JSON that remembers the exact text it was written as."""

    text: str

    def __new__(cls, text: str) -> JsonFloat:
        value = super().__new__(cls, text)
        value.text = text
        return value


class JsonInt(int):
    """An integer read from JSON that remembers the exact text it was written as (``-0`` is not ``0``)."""

    text: str

    def __new__(cls, text: str) -> JsonInt:
        value = super().__new__(cls, text)
        value.text = text
        return value


def _escape(match: re.Match[str]) -> str:
    ch = match.group()
    short = _SHORT_ESCAPES.get(ch)
    if short is not None:
        return short
    code = ord(ch)
    if code >= 0x10000:
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04X}\\u{0xDC00 + (code & 0x3FF):04X}"
    return f"\\u{code:04X}"


def _string(text: str) -> str:
    return '"' + _NEEDS_ESCAPE.sub(_escape, text) + '"'


def _java_shaped(text: str, value: float) -> bool:
    """Whether ``text`` is something Java's Double.toString could have produced for ``value``."""
    plain = 1e-3 <= abs(value) < 1e7 or value == 0
    shape = _JAVA_PLAIN if plain else _JAVA_SCIENTIFIC
    return shape.fullmatch(text) is not None and float(text) == value


def java_double(value: float) -> str:
    """``Double.toString(value)`` for a finite double (the JDK 19+ specification: the shortest decimal
    that rounds to the value, at least two significant digits considered when one would do)."""
    if isinstance(value, JsonFloat) and _java_shaped(value.text, value):
        return value.text
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    magnitude = abs(value)
    decimal = Decimal(repr(magnitude)).normalize()
    if len(decimal.as_tuple().digits) == 1:  # JDK: choose the closest two-digit decimal instead
        decimal = Context(prec=2, rounding=ROUND_HALF_EVEN).plus(Decimal(magnitude)).normalize()
    digits = "".join(str(d) for d in decimal.as_tuple().digits)
    exponent = decimal.adjusted()  # position of the first digit
    sign = "-" if value < 0 else ""
    if 1e-3 <= magnitude < 1e7:
        if exponent >= 0:
            whole = digits[: exponent + 1].ljust(exponent + 1, "0")
            return f"{sign}{whole}.{digits[exponent + 1 :] or '0'}"
        return f"{sign}0.{'0' * (-exponent - 1)}{digits}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exponent}"


def _dump(value: JsonValue, out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True or value is False:
        out.append("true" if value else "false")
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, float):
        if math.isnan(value):
            out.append('"NaN"')
        elif math.isinf(value):
            out.append('"Infinity"' if value > 0 else '"-Infinity"')
        else:
            out.append(java_double(value))
    elif isinstance(value, str):
        out.append(_string(value))
    elif isinstance(value, (bytes, bytearray)):
        out.append(_string(base64.b64encode(bytes(value)).decode("ascii")))
    elif isinstance(value, Mapping):
        out.append("{")
        for i, (name, item) in enumerate(value.items()):
            if not isinstance(name, str):
                raise TypeError(f"JSON object keys must be strings, not {type(name).__name__}")
            out.append("," if i else "")
            out.append(_string(name))
            out.append(":")
            _dump(item, out)
        out.append("}")
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for i, item in enumerate(value):
            out.append("," if i else "")
            _dump(item, out)
        out.append("]")
    else:
        raise TypeError(f"cannot encode {type(value).__name__} as JSON")


def _as_written(value: object) -> orjson.Fragment:
    if isinstance(value, JsonFloat | JsonInt):
        return orjson.Fragment(value.text.encode("utf-8"))
    raise TypeError(f"Type is not JSON serializable: {type(value).__name__}")


def dumps_as_read(value: object) -> bytes:
    """A body read with ``loads_exact`` written back as compact JSON, each number as its text was (orjson
    alone cannot write a ``JsonFloat``, and writes a ``JsonInt`` ``-0`` as ``0``)."""
    return orjson.dumps(value, default=_as_written, option=orjson.OPT_PASSTHROUGH_SUBCLASS)


def dumps(value: JsonValue) -> bytes:
    """Encode as the worker's JsonConverter (schemas disabled) would."""
    out: list[str] = []
    _dump(value, out)
    return "".join(out).encode("utf-8")


def _reject_constant(name: str) -> None:
    raise ValueError(f"non-standard JSON constant {name}")


# what json.loads(text, parse_float=..., parse_constant=...) builds on every call, built once
_DECODER = json.JSONDecoder(parse_float=JsonFloat, parse_constant=_reject_constant)
_EXACT_DECODER = json.JSONDecoder(parse_float=JsonFloat, parse_int=JsonInt, parse_constant=_reject_constant)


def loads(data: bytes) -> tuple[JsonValue, None] | tuple[None, str]:
    """Decode strictly; returns ``(value, None)`` or ``(None, reason)``, never raises."""
    return _decoded(data, _DECODER)


def loads_exact(data: bytes) -> tuple[JsonValue, None] | tuple[None, str]:
    """``loads`` with every number as a ``JsonInt`` or ``JsonFloat`` that keeps its text (``1.50``,
    ``1e-7``, ``1E+3``, ``-0``, ``1e999``: each still a number to whoever reads it as one)."""
    return _decoded(data, _EXACT_DECODER)


def _decoded(data: bytes, decoder: json.JSONDecoder) -> tuple[JsonValue, None] | tuple[None, str]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return None, f"not UTF-8: {e.reason} at byte {e.start}"
    try:
        return decoder.decode(text), None
    except (ValueError, RecursionError) as e:
        return None, f"not JSON: {e}"


def loads_fast(data: bytes) -> tuple[JsonValue, None] | tuple[None, str]:
    """``loads`` for the decoders that keep no number but integers within Java's ``long`` and no float
    (the status and config values): orjson reads what it can, ``loads`` the rest.

    orjson accepts a subset of what ``loads`` does (it refuses lone surrogate escapes, ``1e999``, NaN,
    invalid UTF-8: those are read again by ``loads``, which accepts them or says why not), and differs
    in what those decoders ignore: a float is a plain ``float`` (no ``JsonFloat`` source text), an
    integer beyond 64 bits becomes a float. To a decoder that wants an ``int`` within a ``long`` or a
    string, both are "not an integer" or "not a string", as they were. tests/unit/codecs/test_fast_paths.py
    compares the two over odd values."""
    try:
        return orjson_loads(data), None
    except ValueError:  # orjson.JSONDecodeError is a ValueError
        return loads(data)
