"""structlog, configured once by the entry point: JSON lines in production, readable in a terminal.

Libraries never configure logging; ``configure`` is called by ``cli.serve`` only. The fixed meaning
per level: debug per record and per proxied request (at info with ``log_requests``), info lifecycle,
warning discarded input or a worker skipped, error a failed write.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from typing import Any

import orjson
import structlog

from .rules.secrets import SecretRule, secret_rule


def masking(rule: SecretRule) -> Callable[[Any, str, MutableMapping[str, Any]], MutableMapping[str, Any]]:
    """A processor masking secret config values (``rules.secrets``) in every mapping a line carries (a
    connector's config passed as a field), so a config never reaches the log with its secrets."""

    def mask(_: Any, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
        for name, value in event.items():
            if isinstance(value, Mapping | list | tuple):
                event[name] = rule.mask_deep(value)
        return event

    return mask


def configure(log_format: str = "auto", level: str = "info", secret_patterns: Iterable[str] | None = None) -> None:
    if log_format == "auto":
        log_format = "console" if sys.stderr.isatty() else "json"
    renderer: structlog.typing.Processor
    if log_format == "json":
        options = orjson.OPT_NON_STR_KEYS

        def serialize(obj: object, **_: object) -> str:
            return orjson.dumps(obj, default=repr, option=options).decode()

        renderer = structlog.processors.JSONRenderer(serializer=serialize)
    else:
        renderer = structlog.dev.ConsoleRenderer()
    numeric = logging.getLevelNamesMapping()[level.upper()]
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            masking(secret_rule(secret_patterns)),
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        # no caching: a logger bound before a later configure() (tests' capture_logs) follows it
        cache_logger_on_first_use=False,
    )
    # aiokafka and asyncio log through the standard library: same stream, same level
    logging.basicConfig(stream=sys.stderr, level=numeric, format="%(levelname)s %(name)s %(message)s")
    # httpx logs every request at info; the proxy writes its own line per request
    logging.getLogger("httpx").setLevel(max(numeric, logging.WARNING))
