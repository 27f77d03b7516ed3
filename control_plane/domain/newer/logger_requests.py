"""``PUT /admin/loggers/{logger}``'s body read as Connect 4.0+ reads it (log4j 2), on workers before 4.0
(log4j 1, whose ``LoggingResource`` reads the level differently).

4.3.1's ``LoggingResource.setLevel`` takes the body as a ``Map<String, String>`` (Jackson's 500 for one it
cannot read; a null map, from an empty body or ``null``, is the ``NullPointerException``'s 500), then: no
``level`` (or a null one) 400 ``Desired 'level' parameter was not specified in request.``; an empty one 500
``Illegal null or empty Level name.`` (log4j 2's ``Level.getLevel`` throws); one log4j 2 does not know, once
trimmed as Java's ``String.trim`` trims and in capitals, 404 ``invalid log level '<level>'.``. Before 4.0
``Level.toLevel(level.toUpperCase())`` (log4j 1) neither trims (``" DEBUG "`` is 404 there) nor refuses an
empty level with a 500, and knows ``İNFO``. So on those workers the sidecar reads the body first, and sends
the worker the level as log4j 2 resolves it (trimmed, in capitals), which every version reads the same way.
"""

from __future__ import annotations

import json

from ...codecs.javalang import java_trim
from ..errors import BadRequestError, ControlPlaneError, NotFoundError, OperationFailed
from ..jackson import string_map_error

# log4j 2's standard levels (org.apache.logging.log4j.Level), the same names as log4j 1's
LEVELS = frozenset({"OFF", "FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE", "ALL"})
NULL_MAP = 'Cannot invoke "java.util.Map.get(Object)" because "levelMap" is null'
NO_LEVEL = "Desired 'level' parameter was not specified in request."
EMPTY_LEVEL = "Illegal null or empty Level name."


def requested_level(body: bytes) -> str:
    """The level of a level change, in the name log4j 2 resolves it to; raises the error 4.3.1 answers."""
    unreadable = string_map_error(body)
    if unreadable is not None:
        raise OperationFailed(unreadable)
    text = body.decode("utf-8", "replace")
    # numbers as Jackson reads them into a String: their text as written
    data = json.loads(text, parse_int=str, parse_float=str) if text.strip() else None
    if not isinstance(data, dict):
        raise OperationFailed(NULL_MAP)
    level = data.get("level")
    if level is None:
        raise BadRequestError(NO_LEVEL)
    level = level if isinstance(level, str) else json.dumps(level)  # true/false: Jackson's "true"/"false"
    if level == "":
        raise OperationFailed(EMPTY_LEVEL)
    resolved = java_trim(level).upper()
    if resolved not in LEVELS:
        raise NotFoundError(f"invalid log level '{level}'.")
    return resolved


def level_body(level: str) -> bytes:
    return json.dumps({"level": level}).encode()


__all__ = ["LEVELS", "ControlPlaneError", "level_body", "requested_level"]
