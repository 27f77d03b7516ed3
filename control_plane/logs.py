"""structlog, configured once by the entry point: JSON lines in production, readable in a terminal.

Libraries never configure logging; ``configure`` is called by ``cli.serve`` only. The fixed meaning
per level: debug per record and per proxied request (at info with ``log_requests``), info lifecycle,
warning discarded input or a worker skipped, error a failed write.
"""

from __future__ import annotations

import logging
import sys

import orjson
import structlog


def configure(log_format: str = "auto", level: str = "info") -> None:
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
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        # no caching: a logger bound before a later configure() (tests' capture_logs) follows it
        cache_logger_on_first_use=False,
    )
    # uvicorn and aiokafka log through the standard library: same stream, same level
    logging.basicConfig(stream=sys.stderr, level=numeric, format="%(levelname)s %(name)s %(message)s")
    # httpx logs every request at info; the proxy writes its own line per request
    logging.getLogger("httpx").setLevel(max(numeric, logging.WARNING))
