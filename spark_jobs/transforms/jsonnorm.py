"""One normal form for comparing JSON maps whose key order does not matter (logical identity):
sorted keys, compact. Used on both sides of every comparison, so the form itself is never shown."""

from __future__ import annotations

import json
from typing import Any


def normal_json(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (JSON allows "\ud800"): no UTF-8 text holds it raw
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    return text


def rank_of(offset: Any) -> list[int] | None:
    """An offset map as a tuple to order it by: its values in the map's own order, when every value is an
    integer (Kafka offsets, file positions, LSNs); ``None`` when the offsets cannot be ordered."""
    if not isinstance(offset, dict) or not offset:
        return None
    values = list(offset.values())
    if all(isinstance(v, int) and not isinstance(v, bool) and -(2**63) <= v < 2**63 for v in values):
        return values
    return None
