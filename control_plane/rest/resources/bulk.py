"""``POST /_sidecar/bulk`` (``domain.bulk``): one action on every connector a selector picks. Body
``{"action": "pause", "selector": {"pattern": "orders-.*"}, "dry_run": false}`` (``include_tasks`` and
``only_failed`` with ``restart``); answers 200 with each connector's result and the counts, whatever each
connector's result: a refused or failed connector is its own result, in Connect's error shape, as its single
request would have been answered. Parse, one domain call, render; and an audit line per connector acted on
or refused, as its single request gets from access control (``rest.steps.access``), besides the bulk
request's own."""

from __future__ import annotations

from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response

from ...access import AuditLog
from ...domain.bulk import RESTART, BulkRequest, BulkResult, ItemResult, request_of, single_request
from ...domain.errors import BadRequestError
from ...domain.outcomes import Answer
from ..entities.responses import answered
from ..errors import answer_for
from ..request.principal import PrincipalGate, principal_gate
from ..request.runtime import herder, runtime

RESULTS = ("selected", "done", "refused", "failed")


async def bulk(request: Request) -> Response:
    try:
        body = orjson.loads(await request.body())
    except orjson.JSONDecodeError as err:
        raise BadRequestError(f"The body is not JSON: {err}") from err
    bulk_request, gate = request_of(body), principal_gate()
    outcome = await herder(request).bulk.run(bulk_request, gate)
    if isinstance(outcome, Answer) and not bulk_request.dry_run:
        client = request.client.host if request.client else None
        audit_items(runtime(request).access.audit, gate, client, bulk_request, outcome.value.items)
    return answered(outcome, bulk_json)


def audit_items(
    audit: AuditLog, gate: PrincipalGate, client: str | None, request: BulkRequest, items: tuple[ItemResult, ...]
) -> None:
    """A line per connector, as its single request's (``AccessControl`` audits every mutating request)."""
    principal = gate.principal
    for item in items:
        single = single_request(request, item.connector)
        audit.record(
            who=principal.name,
            role=principal.role.value,
            client=client,
            method=single.method,
            path=single.path,
            query=single.query.decode(),
            connector=item.connector,
            status=item_json(item, dry_run=False).get("status") or 0,
            duration_ms=item.duration_s * 1000,
            body=None,
            refused=item.refused_by_gate,
        )


def item_json(item: ItemResult, *, dry_run: bool) -> dict[str, Any]:
    """One connector's result: ``done`` with the single request's status; ``refused`` (a 4xx: the access
    rules, the worker or the sidecar said no) or ``failed`` (5xx: the outcome may be unknown) with Connect's
    ``{"error_code", "message"}``; in a dry run ``selected``: it would be acted on."""
    if item.error is not None:
        answer = answer_for(item.error, "/_sidecar/bulk")
        error = orjson.loads(bytes(answer.body))
        result = "refused" if answer.status_code < 500 else "failed"
        return {"name": item.connector, "result": result, "status": answer.status_code, "error": error}
    if dry_run or item.status is None:
        return {"name": item.connector, "result": "selected"}
    return {"name": item.connector, "result": "done", "status": item.status}


def bulk_json(result: BulkResult) -> dict[str, Any]:
    request = result.request
    items = [item_json(item, dry_run=request.dry_run) for item in result.items]
    counts = dict.fromkeys(RESULTS, 0)
    for item in items:
        counts[item["result"]] += 1
    counts["selected"] = len(items)  # every connector the selector picked, whatever its result
    body: dict[str, Any] = {
        "action": request.action,
        "dry_run": request.dry_run,
        "selector": request.selector.as_json(),
    }
    if request.action == RESTART:
        body.update(include_tasks=request.include_tasks, only_failed=request.only_failed)
    body.update(counts=counts, connectors=items)
    return body


__all__ = ["audit_items", "bulk", "bulk_json", "item_json"]
