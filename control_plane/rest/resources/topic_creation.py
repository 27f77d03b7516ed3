"""KIP-158 previews, the sidecar's own endpoints (parse, one herder call, render):

- ``POST /_sidecar/topic-creation/preview`` with ``{"config": {...}, "topics": ["a", ...]}``;
- ``GET /_sidecar/connectors/{c}/topic-creation?topic=a&topic=b``: the connector's configuration.

The answer: whether Connect creates topics for the configuration (and why not), the checks' findings, and
per topic the group that claims it, what the group asks for (``-1``: the broker's default), what the
broker would create (every topic config, its defaults filled in) or its refusal, and the topic as it
exists, with the differences.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ...domain.errors import BadRequestError
from ...domain.topic_creation import CreationPreview, TopicPlan, TopicShape
from ...rules.config_values import config_map, read_json
from ...rules.topic_creation import BROKER_DEFAULT
from ..entities.responses import answered
from ..request.runtime import herder


def _shape(shape: TopicShape | None) -> dict[str, Any] | None:
    if shape is None:
        return None
    return {"partitions": shape.partitions, "replication_factor": shape.replication_factor, "configs": shape.configs}


def _plan(plan: TopicPlan) -> dict[str, Any]:
    requested = plan.requested
    return {
        "topic": plan.topic,
        "group": plan.group,
        "requested": None
        if requested is None
        else {
            "partitions": BROKER_DEFAULT if requested.partitions is None else requested.partitions,
            "replication_factor": BROKER_DEFAULT
            if requested.replication_factor is None
            else requested.replication_factor,
            "configs": dict(requested.configs),
        },
        "created_with": _shape(plan.created_with),
        "refused": plan.refused,
        "exists": plan.existing is not None,
        "existing": _shape(plan.existing),
        "differences": [
            {"setting": d.setting, "would_create": d.would_create, "exists_with": d.exists_with}
            for d in plan.differences
        ],
    }


def preview_json(preview: CreationPreview) -> dict[str, Any]:
    return {
        "connector": preview.connector,
        "creates_topics": preview.creates_topics,
        "reason": preview.reason,
        "problems": [
            {
                "key": p.key,
                "group": p.group,
                "entry": p.entry,
                "finding": p.finding.value,
                "severity": p.severity.value,
                "message": p.message,
            }
            for p in preview.problems
        ],
        "topics": [_plan(plan) for plan in preview.topics],
    }


def _topics(values: Any) -> list[str]:
    if not isinstance(values, list) or not values or not all(isinstance(t, str) and t for t in values):
        raise BadRequestError("Name one or more topics: a non-empty list of topic names")
    return values


async def preview(request: Request) -> Response:
    body, error = read_json(await request.body())
    if error is not None:
        raise BadRequestError(f"Not JSON: {error}")
    config = config_map(body.get("config")) if isinstance(body, dict) else None
    if config is None:
        raise BadRequestError('The body must be {"config": {...}, "topics": ["topic", ...]}')
    topics = _topics(body.get("topics"))
    return answered(await herder(request).topic_creation.preview(config, topics), preview_json)


async def connector_preview(request: Request) -> Response:
    topics = _topics(request.query_params.getlist("topic"))
    name = request.path_params["connector"]
    return answered(await herder(request).topic_creation.of_connector(name, topics), preview_json)
