"""Plan and apply (``domain.plan``): ``POST /_sidecar/plan`` (body ``{"documents": [{"source": "orders.yaml",
"document": {...}}], "prune": false}``: each document a connector, a list of them, as the files hold them)
answers the plan; ``POST /_sidecar/apply`` (body: a plan as answered, with ``concurrency``, ``deadline_s`` and
``continue_on_error`` beside it if wanted) carries it out: 200 when every step was applied, else the first
failure's status with what was applied, what failed and what was not tried. Parse, one domain
call, render."""

from __future__ import annotations

import re
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response

from ...domain.errors import BadRequestError, ControlPlaneError
from ...domain.outcomes import Refusal
from ...domain.plan import Applied, Plan, PlanStep, StepFailure
from ...domain.plugins import PluginVersionReport
from ...domain.topic_creation import CreationPreview
from ...rules.config_values import read_json
from ..entities.responses import answered, json_response
from ..errors import answer_for, error_status
from ..request.runtime import herder
from .plugin_versions import report_json
from .topic_creation import preview_json


async def _body(request: Request) -> Any:
    """The body, each number as written: a document's ``1.50`` is the config value ``1.50``, as a worker
    reads it (``rules.config_values``)."""
    body, error = read_json(await request.body())
    if error is not None:
        raise BadRequestError(f"The body is not JSON: {error}")
    return body


async def plan(request: Request) -> Response:
    body = await _body(request)
    documents = body.get("documents") if isinstance(body, dict) else None
    prune = body.get("prune", False) if isinstance(body, dict) else None
    if not isinstance(documents, list) or not isinstance(prune, bool):
        raise BadRequestError('The body must be {"documents": [{"source": "...", "document": {...}}], "prune": false}')
    parsed = []
    for i, item in enumerate(documents):
        if not isinstance(item, dict) or "document" not in item:
            raise BadRequestError(f'documents[{i}] must be {{"source": "...", "document": ...}}')
        source = item.get("source")
        parsed.append((item["document"], source if isinstance(source, str) else f"documents[{i}]"))
    matching = body.get("prune_matching", ".*")
    try:
        pattern = re.compile(matching) if isinstance(matching, str) else None
    except re.error as err:
        raise BadRequestError(f"prune_matching is not a regular expression: {err}") from err
    if pattern is None:
        raise BadRequestError("prune_matching must be a regular expression")
    return answered(await herder(request).plan.plan(parsed, prune=prune, prune_matching=pattern), plan_json)


def step_json(step: PlanStep) -> dict[str, Any]:
    body: dict[str, Any] = {
        "name": step.name,
        "action": step.action,
        "changes": [c.as_json() for c in step.changes],
        "seen": step.seen,
    }
    if step.config is not None:
        body["config"] = step.config
    if step.source is not None:
        body["source"] = step.source
    if step.errors:
        body["errors"] = list(step.errors)
    return body


def plan_json(plan: Plan) -> dict[str, Any]:
    """A plan as the sidecar answers it (and ``apply`` takes it back): per connector its step, with the
    KIP-158 preview and the KIP-891 report as their own endpoints render them."""
    connectors = []
    for step in plan.steps:
        body = step_json(step)
        if isinstance(step.topics, CreationPreview):
            body["topics"] = preview_json(step.topics)
        if isinstance(step.plugins, PluginVersionReport):
            body["plugins"] = report_json(step.plugins)
        connectors.append(body)
    return {"fingerprint": plan.fingerprint, "prune": plan.prune, "summary": plan.summary(), "connectors": connectors}


def failure_json(failure: StepFailure) -> dict[str, Any]:
    """A failed step with its last error as the sidecar would answer it alone (the one error mapper)."""
    error = failure.error
    if isinstance(error, ControlPlaneError):
        status, message = error_status(error), error.message
    else:  # the upstream's: no worker answered, or not in time
        body = orjson.loads(answer_for(error, "/_sidecar/apply").body)
        status, message = body["error_code"], body["message"]
    return {
        "name": failure.name,
        "action": failure.action,
        "error_code": status,
        "message": message,
        "attempts": failure.attempts,
    }


def applied_json(applied: Applied) -> dict[str, Any]:
    return {
        "applied": [{"name": name, "action": action} for name, action in applied.steps],
        "failed": [failure_json(f) for f in applied.failed],
        "not_tried": [{"name": name, "action": action} for name, action in applied.not_tried],
        "continue_on_error": applied.continued,
        "retries": applied.retries,
        "fingerprint": applied.fingerprint,
    }


def applied_response(applied: Applied) -> Response:
    """200 when every step was applied; else the first failure's status (504 when only the deadline stopped
    it) in Connect's error shape, with the three lists beside the message."""
    body = applied_json(applied)
    if applied.complete:
        return json_response(body)
    failed = body["failed"]
    status = failed[0]["error_code"] if failed else 504
    first = f" (first: {failed[0]['action']} of {failed[0]['name']}: {failed[0]['message']})" if failed else ""
    message = (
        f"Applied {len(applied.steps)} of {len(applied.steps) + len(failed) + len(applied.not_tried)} step(s); "
        f"{len(failed)} failed{first}; {len(applied.not_tried)} not tried"
        + ("" if failed else " (the apply's deadline passed)")
    )
    return json_response({"error_code": status, "message": message, **body}, status)


def options_of(body: Any) -> tuple[int | None, float | None, bool]:
    """The apply's options beside the plan: ``concurrency``, ``deadline_s``, ``continue_on_error``."""
    given = body if isinstance(body, dict) else {}
    concurrency, deadline_s = given.get("concurrency"), given.get("deadline_s")
    keep_on = given.get("continue_on_error", False)
    if concurrency is not None and (
        isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1
    ):
        raise BadRequestError("concurrency must be a whole number of 1 or more")
    if deadline_s is not None and (
        isinstance(deadline_s, bool) or not isinstance(deadline_s, int | float) or deadline_s <= 0
    ):
        raise BadRequestError("deadline_s must be a number of seconds above 0")
    if not isinstance(keep_on, bool):
        raise BadRequestError("continue_on_error must be true or false")
    return int(concurrency) if concurrency is not None else None, float(deadline_s) if deadline_s else None, keep_on


async def apply(request: Request) -> Response:
    body = await _body(request)
    concurrency, deadline_s, keep_on = options_of(body)
    done = await herder(request).plan.apply(
        body, concurrency=concurrency, deadline_s=deadline_s, continue_on_error=keep_on
    )
    if isinstance(done, Refusal):
        return answered(done, applied_json)
    return applied_response(done.value)
