"""The connectors' endpoints the sidecar can answer from its view (the herder decides from where), in
Connect's shapes and codes (ConnectorsResource): ``GET /connectors`` (``expand``), ``GET
/connectors/{c}/status``, ``GET /connectors/{c}/config``, ``GET /connectors/{c}/tasks/{t}/status``, and the
active topics of KIP-558, ``GET /connectors/{c}/topics`` and ``PUT /connectors/{c}/topics/reset``; with the
sidecar's own reads of the active topics, ``GET /_sidecar/topics/{t}/connectors`` and ``GET
/_sidecar/connectors/{c}/topics``. Parse, one herder call, render."""

from __future__ import annotations

import orjson
from starlette.requests import Request
from starlette.responses import Response

from ...domain.reads import ConnectorListing
from ...view import ConnectorStateView
from ..entities import render
from ..entities.responses import Serialized, answered, respond
from ..request.runtime import herder

# The last listing rendered, with its JSON: the herder gives the same listing object until the view
# changes, so a listing of thousands of connectors is serialized once per change, not once per request.
_rendered: tuple[ConnectorListing, Serialized] | None = None


def _listing_json(listing: ConnectorListing) -> object:
    global _rendered
    if _rendered is None or _rendered[0] is not listing:
        _rendered = (listing, Serialized(orjson.dumps(_listing_data(listing))))
    return _rendered[1]


# A connector's status rendered, with its JSON, by the status object: the herder gives the same object for
# the same answer until the view changes (domain.reads); bounded as the connectors are few.
_states: dict[int, tuple[ConnectorStateView, Serialized]] = {}


def _state_json(state: ConnectorStateView) -> object:
    known = _states.get(id(state))
    if known is not None and known[0] is state:
        return known[1]
    if len(_states) >= 4096:
        _states.clear()
    rendered = Serialized(orjson.dumps(render.connector_state_json(state)))
    _states[id(state)] = (state, rendered)
    return rendered


def _listing_data(listing: ConnectorListing) -> object:
    if listing.expanded is None:
        return list(listing.names)
    out: dict[str, dict[str, object]] = {}
    for name, connector in listing.expanded.items():
        expanded: dict[str, object] = {}
        if connector.status is not None:
            expanded["status"] = render.connector_state_json(connector.status)
        if connector.info is not None:
            expanded["info"] = render.connector_info_json(connector.info)
        out[name] = expanded
    return out


async def list_connectors(request: Request) -> Response:
    expand = request.query_params.getlist("expand") if "expand" in request.query_params else []
    return await respond(request, await herder(request).reads.list_connectors(expand), _listing_json)


async def connector_status(request: Request) -> Response:
    name = request.path_params["connector"]
    return await respond(request, await herder(request).reads.connector_status(name), _state_json)


async def connector_config(request: Request) -> Response:
    name = request.path_params["connector"]
    return await respond(request, await herder(request).reads.connector_config(name), dict)


async def task_status(request: Request) -> Response:
    name = request.path_params["connector"]
    task = int(request.path_params["task"])  # the route let through only what Integer.valueOf reads
    return await respond(
        request, await herder(request).reads.task_status(name, task), lambda s: render.state_json(s, task)
    )


async def connector_topics(request: Request) -> Response:
    name = request.path_params["connector"]
    outcome = await herder(request).topics.active(name)
    return await respond(request, outcome, lambda topics: render.active_topics_json(name, topics))


async def reset_connector_topics(request: Request) -> Response:
    return await respond(request, await herder(request).topics.reset(request.path_params["connector"]))


async def topic_connectors(request: Request) -> Response:
    """Beyond the KIP: the connectors whose active topics include this topic, and earlier configs that named it."""
    topic = request.path_params["topic"]
    outcome = herder(request).topics.connectors_using(topic)
    return answered(outcome, lambda users: render.topic_users_json(topic, users))


async def connector_topic_usage(request: Request) -> Response:
    """Beyond the KIP: per topic of the connector, the task that reported it and when."""
    name = request.path_params["connector"]
    return answered(herder(request).topics.usage(name), lambda usage: render.topic_usage_json(name, usage))
