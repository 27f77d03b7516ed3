"""A connector config as Connect reads it from JSON (``Map<String, String>`` through Jackson): every scalar
becomes a string the way Jackson writes it, anything else is no config. Pure; the REST layer reads request
bodies with it, and a plan reads the files of desired connectors with it, so that ``1``, ``"1"`` and ``true``
compare as the worker stores them."""

from __future__ import annotations

import math
from typing import Any

Config = dict[str, str | None]


def as_string(value: Any) -> str | None:
    """How Jackson reads a JSON scalar into a ``Map<String, String>`` value; raises on anything else."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and math.isfinite(value) and "e" not in repr(value):
        return repr(value)
    raise ValueError(value)


def config_map(data: Any) -> Config | None:
    """A JSON object as Connect reads a config (``Map<String, String>``); None for anything else."""
    if not isinstance(data, dict):
        return None
    try:
        return {str(k): as_string(v) for k, v in data.items()}
    except ValueError:
        return None


__all__ = ["Config", "as_string", "config_map"]
