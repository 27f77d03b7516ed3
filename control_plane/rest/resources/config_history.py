"""Config history (``domain.history``): ``GET /_sidecar/connectors/{c}/history`` (every version kept, newest
first, each with its key-level diff; ``?limit=N&before=V``: a page), ``GET .../history/{version}`` (one, with
its config), ``GET .../history/diff?from=V[&to=W]`` and ``POST .../history/{version}/rollback`` (optional body
``{"secrets": {"key": "value"}}``). Parse, one domain call, render."""

from __future__ import annotations

from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response

from ...domain.errors import BadRequestError
from ...domain.history import ConfigVersion, HistoryPage, VersionDiff
from ..entities.responses import answered, respond
from ..request.runtime import herder


def version_json(version: ConfigVersion, *, config: bool) -> dict[str, Any]:
    """One version as a page lists it, or with ``config`` as it is answered alone (its config too)."""
    body: dict[str, Any] = {
        "version": version.version,
        "timestamp_ms": version.timestamp_ms,
        "change": version.change,
        "state": version.state,
        "who": version.who,
        "via_sidecar": version.via_sidecar,
        "changes": [c.as_json() for c in version.changes],
    }
    if version.first_kept:
        body["first_kept"] = True
    if config:
        body["config"] = dict(version.config) if version.config is not None else None
    return body


def page_json(page: HistoryPage) -> dict[str, Any]:
    return {
        "connector": page.connector,
        "retention_s": page.retention_s,
        "recorded_by": page.recorded_by,
        "versions": [version_json(v, config=False) for v in page.versions],
        "next_before": page.next_before,
    }


def one_version_json(version: ConfigVersion) -> dict[str, Any]:
    return {"connector": version.connector, **version_json(version, config=True)}


def diff_json(diff: VersionDiff) -> dict[str, Any]:
    return {
        "connector": diff.connector,
        "from": diff.source,
        "to": diff.target,
        "state": {"from": diff.source_state, "to": diff.target_state},
        "changes": [c.as_json() for c in diff.changes],
    }


def _version(text: str | None, what: str) -> int:
    if text is None or not text.isdigit():
        raise BadRequestError(f"{what} must be a number (a version of the connector's history), not {text!r}")
    return int(text)


async def history(request: Request) -> Response:
    query = request.query_params
    limit = _version(query["limit"], "limit") if "limit" in query else None
    before = _version(query["before"], "before") if "before" in query else None
    if limit == 0:
        raise BadRequestError("limit must be at least 1")
    connector = request.path_params["connector"]
    return answered(herder(request).history.history(connector, limit=limit, before=before), page_json)


async def version(request: Request) -> Response:
    number = _version(request.path_params["version"], "The version")
    return answered(herder(request).history.version(request.path_params["connector"], number), one_version_json)


async def diff(request: Request) -> Response:
    source = _version(request.query_params.get("from"), "from")
    to = request.query_params.get("to")
    target = _version(to, "to") if to is not None else None
    return answered(herder(request).history.diff(request.path_params["connector"], source, target), diff_json)


async def rollback(request: Request) -> Response:
    raw = await request.body()
    try:
        body = orjson.loads(raw) if raw.strip() else {}
    except orjson.JSONDecodeError:
        body = None
    secrets = body.get("secrets", {}) if isinstance(body, dict) else None
    if not isinstance(secrets, dict) or not all(isinstance(v, str) for v in secrets.values()):
        raise BadRequestError('The body must be empty or {"secrets": {"<key>": "<value>", ...}}')
    number = _version(request.path_params["version"], "The version")
    connector = request.path_params["connector"]
    return await respond(request, await herder(request).history.rollback(connector, number, secrets))
