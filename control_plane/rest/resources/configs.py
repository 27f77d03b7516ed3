"""Connector configurations: ``PUT /connector-plugins/{p}/config/validate``, ``POST /connectors``, ``PUT``
and ``PATCH /connectors/{c}/config`` (ConnectorPluginsResource, ConnectorsResource). The herder runs the
sidecar's checks; a body these handlers cannot read as a worker would goes to the worker unchanged, so the
client gets the worker's own answer to it."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ...domain.configs import read_initial_state
from ...domain.outcomes import Forward
from ...rules.config_values import as_string, config_map, read_json
from ..entities.responses import respond
from ..request.runtime import herder
from .params import raw_path


async def _json(request: Request) -> Any:
    """The body as Jackson reads it (numbers as written: ``rules.config_values``); None when not JSON."""
    body, _ = read_json(await request.body())
    return body


async def validate_config(request: Request) -> Response:
    config = config_map(await _json(request))
    if config is None:
        return await respond(request, Forward())
    return await respond(request, await herder(request).configs.validate(raw_path(request), config))


async def create_connector(request: Request) -> Response:
    raw = await request.body()
    body = await _json(request)
    config = config_map(body.get("config")) if isinstance(body, dict) else None
    name = body.get("name") if isinstance(body, dict) else None
    if isinstance(body, dict) and isinstance(name, bool | int | float):
        name = as_string(name)  # CreateConnectorRequest.name: a number or a boolean as Jackson reads it
        body = {**body, "name": name}
    if not isinstance(body, dict) or config is None or not (name is None or isinstance(name, str)):
        return await respond(request, Forward())
    initial = read_initial_state(body, raw)  # KIP-980
    return await respond(request, await herder(request).configs.create(name, config, body, initial))


async def put_or_patch_config(request: Request) -> Response:
    config = config_map(await _json(request))
    name = request.path_params["connector"]
    if request.method == "PATCH":
        outcome = await herder(request).configs.patch(name, config, await request.body())
        return await respond(request, outcome)
    if config is None:
        return await respond(request, Forward())
    return await respond(request, await herder(request).configs.put(name, config))
