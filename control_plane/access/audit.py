"""The audit log: one JSON line per mutating request (every method but GET, HEAD and OPTIONS, refused ones
included), on stdout whatever the log format, and optionally to a Kafka topic.

A line says who (the principal's name and role, the client's address), what (method, raw path, query,
connector, the request's JSON body with secrets masked), when (``timestamp``, UTC) and the result
(``status``, ``duration_ms``, and ``refused`` when the sidecar's access control answered). The Kafka copy
goes through an ``AuditSink`` (``storage.audit_sink``): ``offer`` never waits and never fails the request;
what the sink cannot keep is dropped and counted.
"""

from __future__ import annotations

import sys
from collections.abc import MutableMapping
from datetime import UTC, datetime
from typing import Any, Protocol, TextIO

import orjson
import structlog

from ..rules.secrets import SecretRule

BODY_LIMIT = 64 * 1024  # a larger body is not copied into the audit line


class AuditSink(Protocol):
    def offer(self, key: bytes, value: bytes) -> bool: ...

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


def _render(_: Any, __: str, event: MutableMapping[str, Any]) -> str:
    return orjson.dumps(event, default=repr).decode()


class AuditLog:
    def __init__(self, secrets: SecretRule, sink: AuditSink | None = None, out: TextIO | None = None) -> None:
        self._secrets = secrets
        self.sink = sink
        self._log = structlog.wrap_logger(
            structlog.PrintLogger(out or sys.stdout),
            processors=[structlog.processors.add_log_level, _render],
        )

    def record(
        self,
        *,
        who: str,
        role: str | None,
        client: str | None,
        method: str,
        path: str,
        query: str,
        connector: str | None,
        status: int,
        duration_ms: float,
        body: bytes | None,
        refused: bool,
    ) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "audit": True,
            "timestamp": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "who": who,
            "role": role,
            "client": client,
            "method": method,
            "path": path,
            "query": query or None,
            "connector": connector,
            "status": status,
            "duration_ms": round(duration_ms, 2),
            "refused": refused,
        }
        if body:
            entry["body"] = self._body(body)
        self._log.info("audit", **entry)
        if self.sink is not None:
            self.sink.offer((connector or "").encode(), orjson.dumps(entry, default=repr))
        return entry

    def _body(self, body: bytes) -> object:
        if len(body) > BODY_LIMIT:
            return {"omitted_bytes": len(body)}
        try:
            return self._secrets.mask_deep(orjson.loads(body))
        except orjson.JSONDecodeError:
            return {"unreadable_bytes": len(body)}  # not JSON: not copied (it may hold anything)


__all__ = ["BODY_LIMIT", "AuditLog", "AuditSink"]
