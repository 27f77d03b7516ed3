"""The installed plugins (ConnectorPluginsResource): ``GET /connector-plugins`` with KIP-769's
``connectorsOnly``, and ``GET /connector-plugins/{p}/config``, a plugin's configuration definitions (KIP-769;
``version``: KIP-891), in Connect's shapes and codes on every worker version: the herder's ``plugins``
decides whether the workers answer or the sidecar composes the answer. Parse, one herder call, render.

(``PUT /connector-plugins/{p}/config/validate`` checks a connector configuration: ``configs``.)"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from ...domain.plugins import UNDEFINED_VERSION, ListedPlugin
from ..entities.responses import respond
from ..request.runtime import herder
from .params import query_bool


def _plugin_json(plugin: ListedPlugin) -> dict[str, str]:
    """rest/entities/PluginInfo: ``version`` left out when undefined (its NoVersionFilter)."""
    out = {"class": plugin.class_name, "type": plugin.type}
    return out if plugin.version == UNDEFINED_VERSION else {**out, "version": plugin.version}


def _plugins_json(plugins: list[ListedPlugin]) -> list[dict[str, str]]:
    return [_plugin_json(p) for p in plugins]


async def connector_plugins(request: Request) -> Response:
    connectors_only = query_bool(request, "connectorsOnly", True)
    return await respond(request, await herder(request).plugins.connector_plugins(connectors_only), _plugins_json)


async def plugin_config(request: Request) -> Response:
    version = request.query_params.get("version")  # KIP-891
    return await respond(request, await herder(request).plugins.config(request.path_params["pluginName"], version))
