"""A connector config as Connect reads it from JSON (``Map<String, String>`` through Jackson): every scalar
becomes the string Jackson makes of it, anything else is no config. Pure; the REST layer reads request
bodies with it, and a plan reads the files of desired connectors with it, so that what the worker stores
and what was sent compare as the same text.

Jackson's ``StringDeserializer`` (``StdDeserializer._parseString``) gives a number token's text as written
(``JsonParser.getValueAsString``): ``1.50``, ``1e-7``, ``1E+3``, ``-0`` and ``10000000000000000000000`` stay
so, whatever double they denote; ``true`` and ``false`` their text; ``null`` a null value. ``read_json``
keeps that text for ``as_string`` (observed with the jackson-databind of Connect 2.8.2, 3.4.1, 4.3.1 and
4.4: 2.10.5.1, 2.13.5, 2.21.2, 2.21.7).
"""

from __future__ import annotations

import math
from typing import Any

from ..codecs.json_wire import JsonFloat, JsonInt, loads_exact

Config = dict[str, str | None]


def read_json(body: bytes) -> tuple[Any, str | None]:
    """A request body as Connect's Jackson reads it: ``(value, None)`` with every number keeping its text
    (a number still, to whoever reads one), or ``(None, reason)``. A string with a lone surrogate (which
    Java keeps, and nothing here can write back) is left to the worker: not read."""
    value, error = loads_exact(body)
    if error is None and b"\\u" in body and _lone_surrogate(value):
        return None, "not JSON this sidecar reads: a string with a lone surrogate"
    return (value, None) if error is None else (None, error)


def _lone_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, dict):
        return any(_lone_surrogate(k) or _lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_lone_surrogate(v) for v in value)
    return False


def as_string(value: Any) -> str | None:
    """How Jackson reads a JSON scalar into a ``Map<String, String>`` value; raises on anything else."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, JsonInt | JsonFloat):
        return value.text  # the number token's text (StdDeserializer._parseString)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and math.isfinite(value) and "e" not in repr(value):
        return repr(value)  # read by something that lost the text: its shortest form, the best guess
    raise ValueError(value)


def config_map(data: Any) -> Config | None:
    """A JSON object as Connect reads a config (``Map<String, String>``); None for anything else."""
    if not isinstance(data, dict):
        return None
    try:
        return {str(k): as_string(v) for k, v in data.items()}
    except ValueError:
        return None


__all__ = ["Config", "as_string", "config_map", "read_json"]
