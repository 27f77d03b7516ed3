"""Plan and apply (``domain.plan``): ``POST /_sidecar/plan`` (body ``{"documents": [{"source": "orders.yaml",
"document": {...}}], "prune": false}``: each document a connector, a list of them, as the files hold them)
answers the plan; ``POST /_sidecar/apply`` (body: a plan as answered) carries it out. Parse, one domain
call, render."""

from __future__ import annotations

import re
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ...domain.errors import BadRequestError
from ...domain.plan import Applied, Plan, PlanStep
from ...domain.plugins import PluginVersionReport
from ...domain.topic_creation import CreationPreview
from ...rules.config_values import read_json
from ..entities.responses import answered
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


def applied_json(applied: Applied) -> dict[str, Any]:
    return {
        "applied": [{"name": name, "action": action} for name, action in applied.steps],
        "fingerprint": applied.fingerprint,
    }


async def apply(request: Request) -> Response:
    return answered(await herder(request).plan.apply(await _body(request)), applied_json)
