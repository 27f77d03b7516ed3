"""Newer endpoints composed of older ones where the workers lack them: restart with options (KIP-745),
the plugin listing and plugin configs (KIP-769), a plugin config by version (KIP-891)."""

from __future__ import annotations

from typing import Any

from ...view import ConnectorStateView
from ..capabilities import Feature
from ..errors import NotFoundError, ViewNotReady
from ..newer.feature import NewerApi
from ..newer.restart import ConnectorRestarter, RestartRequest, restart_plan
from ..outcomes import Accepted, Answer, Forward, Refusal
from ..ports import Workers
from ..read_rule import ReadRule
from .listings import PathConverters, PluginCatalog, PluginInfo
from .versions import PluginVersions


class ComposedEndpoints:
    def __init__(
        self,
        rule: ReadRule,
        workers: Workers,
        newer: NewerApi,
        plugin_versions: PluginVersions | None,
        path_converters: PathConverters | None = None,
    ) -> None:
        self._rule = rule
        self._newer = newer
        self._plugin_versions = plugin_versions
        self._restarter = ConnectorRestarter(workers)
        self._plugins = PluginCatalog(workers, path_converters)

    async def restart_connector(
        self, request: RestartRequest
    ) -> Forward[ConnectorStateView] | Accepted[ConnectorStateView]:
        """``POST /connectors/{c}/restart``: the pre-3.0 request, or a worker that has the options, goes
        through; otherwise 202 with the plan (``domain.restart``), once the restarts are sent."""
        if request.connector_only or not await self._rule.emulates(Feature.RESTART_OPTIONS):
            return Forward()
        view = self._rule.view
        if view is None or not view.ready:
            raise ViewNotReady("Restart options on this Connect version need the sidecar's view, which is not ready")
        # a connector just created elsewhere: the config topic read to its end, as the worker's leader has it
        await self._rule.read_config_back("the view did not reach the config topic's end")
        state = view.state
        name = request.connector
        if state.connector_config(name) is None:
            raise NotFoundError(f"Unknown connector: {name}")  # DistributedHerder.restartConnectorAndTasks
        status = state.connector_state(name, stopped_overlay=self._rule.stop_emulated())
        if status is None:
            raise NotFoundError(f"Status for connector {name} not found")
        plan = restart_plan(request, status)
        await self._restarter.restart(plan)
        return Accepted(plan.status)

    async def connector_plugins(self, connectors_only: bool) -> Forward[list[PluginInfo]] | Answer[list[PluginInfo]]:
        if connectors_only or not await self._rule.emulates(Feature.PLUGIN_LISTING):
            return Forward()
        plugins, complete = await self._plugins.plugins()
        if complete:
            return Answer(plugins)
        warning = (
            "the converters and header converters of the workers' plugin.path are not listed (Kafka's own are): "
            "this Connect version does not tell them, and the sidecar does not know its plugin.path"
        )
        return Answer(plugins, warnings=(warning,))

    async def plugin_config(
        self, name: str, version: str | None = None
    ) -> Forward[Any] | Answer[list[dict[str, Any]]] | Refusal:
        """``?version=`` (KIP-891) answered as 4.1+ does; then composed where the workers cannot describe
        plugins (already in 4.2's shape); otherwise the worker's answer, in the newest shape
        (``order_in_group``) unless the operator keeps the worker's."""
        if self._plugin_versions is not None and version is not None:
            checked = await self._plugin_versions.plugin_config(name, version)
            if isinstance(checked, Refusal):
                return checked
        if await self._rule.emulates(Feature.PLUGIN_LISTING):
            return Answer(await self._plugins.config(name))
        return await self._newer.plugin_config()


__all__ = ["ComposedEndpoints"]
