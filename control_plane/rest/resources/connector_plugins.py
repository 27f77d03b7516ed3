"""Endpoints of newer Connect releases that the sidecar composes on older workers (the herder's ``newer``
and ``plugins`` decide): KIP-745's restart options and KIP-769's plugin listing and
plugin config, in Connect's shapes and codes (ConnectorsResource, ConnectorPluginsResource). Parse, one
herder call, render."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from ...domain.newer import RestartRequest
from ...domain.plugins import UNDEFINED_VERSION, ListedPlugin
from ..entities import render
from ..entities.responses import respond
from ..request.runtime import herder


def _query_bool(request: Request, name: str, default: bool) -> bool:
    """A JAX-RS ``@QueryParam @DefaultValue`` boolean as Jersey reads it (checked against 4.3.1): the first
    value, ``Boolean.valueOf`` of it untrimmed (``true`` in any case is true, `` true`` or ``yes`` false);
    absent, or present without a value: the default."""
    values = request.query_params.getlist(name)
    if not values or values[0] == "":
        return default
    return values[0].lower() == "true"


async def restart_connector(request: Request) -> Response:
    restart = RestartRequest(
        request.path_params["connector"],
        only_failed=_query_bool(request, "onlyFailed", False),
        include_tasks=_query_bool(request, "includeTasks", False),
    )
    return await respond(request, await herder(request).newer.restart(restart), render.connector_state_json)


def _plugin_json(plugin: ListedPlugin) -> dict[str, str]:
    """rest/entities/PluginInfo: ``version`` left out when undefined (its NoVersionFilter)."""
    out = {"class": plugin.class_name, "type": plugin.type}
    return out if plugin.version == UNDEFINED_VERSION else {**out, "version": plugin.version}


def _plugins_json(plugins: list[ListedPlugin]) -> list[dict[str, str]]:
    return [_plugin_json(p) for p in plugins]


async def connector_plugins(request: Request) -> Response:
    connectors_only = _query_bool(request, "connectorsOnly", True)
    return await respond(request, await herder(request).plugins.connector_plugins(connectors_only), _plugins_json)


async def plugin_config(request: Request) -> Response:
    version = request.query_params.get("version")  # KIP-891
    return await respond(request, await herder(request).plugins.config(request.path_params["pluginName"], version))
