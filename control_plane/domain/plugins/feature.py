"""``Plugins``: the plugins feature's one entry, where it is decided who answers what the workers have
installed: ``GET /connector-plugins?connectorsOnly=false`` and ``GET /connector-plugins/{p}/config``
(KIP-769, native from 3.2: composed of older endpoints before, ``plugins.listings``), a plugin config by
version (KIP-891's ``?version=``, native from 4.1: ``plugins.versions``) and in 4.2's shape
(``order_in_group``, ``definitions``); and the sidecar's own report of what each plugin key of a
configuration resolves to, and the pins of the cluster's connectors that do not hold on some worker now
(``plugins.pins``).

The rest of KIP-891 reaches the other features through ports, met by ``plugins.PluginVersions`` and handed
to them at composition: the version pins checked on the way to a worker (a ``ConfigCheck`` of ``configs``)
and the versions in statuses (``ports.StatusVersions``, for ``reads``); the workers' plugin list, loaded
by ``plugins.PluginCatalog``, gives the view its connector types (``ports.PluginTypes``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...rules.plugin_versions import PinResolution
from ..capabilities import Feature, Mode
from ..connect_api import Config
from ..definitions import newest_plugin_config
from ..errors import NotFoundError
from ..outcomes import SIDECAR, Answer, Forward, Refusal, json_reshaped
from ..read_rule import ReadRule
from .listings import ListedPlugin, PathConverters, PluginListings
from .pins import PinHealth, PinHealthReport
from .versions import PluginVersions


@dataclass(frozen=True)
class PluginVersionReport:
    """``/_sidecar/.../plugin-versions``: what each plugin key resolves to on this cluster, and why."""

    connector: str | None
    worker_version: str
    mode: Mode
    plugins: tuple[PinResolution, ...]


class Plugins:
    def __init__(
        self,
        rule: ReadRule,
        versions: PluginVersions | None,
        path_converters: PathConverters | None = None,
        pins: PinHealth | None = None,
    ) -> None:
        self._rule = rule
        self._versions = versions
        self._pins = pins
        self._listings = PluginListings(rule.workers, path_converters)

    async def connector_plugins(
        self, connectors_only: bool
    ) -> Forward[list[ListedPlugin]] | Answer[list[ListedPlugin]]:
        """``GET /connector-plugins``: the workers' own list, or, where they cannot list every plugin
        (before 3.2), the one composed of what they serve."""
        if connectors_only or not await self._rule.emulates(Feature.PLUGIN_LISTING):
            return Forward()
        plugins, complete = await self._listings.plugins()
        if complete:
            return Answer(plugins)
        warning = (
            "the converters and header converters of the workers' plugin.path are not listed (Kafka's own are): "
            "this Connect version does not tell them, and the sidecar does not know its plugin.path"
        )
        return Answer(plugins, warnings=(warning,))

    async def config(
        self, name: str, version: str | None = None
    ) -> Forward[Any] | Answer[list[dict[str, Any]]] | Refusal:
        """``GET /connector-plugins/{p}/config``: ``?version=`` (KIP-891) answered as 4.1+ does; then composed
        where the workers cannot describe plugins (already in 4.2's shape); otherwise the worker's answer, in
        the newest shape (``order_in_group``) unless the operator keeps the worker's."""
        if self._versions is not None and version is not None:
            checked = await self._versions.plugin_config(name, version)
            if isinstance(checked, Refusal):
                return checked
        if await self._rule.emulates(Feature.PLUGIN_LISTING):
            return Answer(await self._listings.config(name))
        if await self._rule.emulates(Feature.ORDER_IN_GROUP):
            return Forward(rewrite=json_reshaped(newest_plugin_config))
        return Forward()

    async def version_report(self, name: str | None, config: Config | None) -> Answer[PluginVersionReport] | Refusal:
        """The sidecar's own: what each plugin key of a connector (by name) or a configuration resolves to."""
        versions = self._versions
        if versions is None:
            return Refusal(NotFoundError("Plugin versions are not available"), SIDECAR)
        if config is None:
            config = await self._rule.connector_config(name or "")
            if config is None:
                return Refusal(NotFoundError(f"Connector {name} not found"), SIDECAR)
        capabilities = self._rule.capabilities
        mode = await capabilities.mode(Feature.PLUGIN_VERSIONS)  # the one the check uses
        resolutions = await versions.resolutions(config, native=mode is not Mode.EMULATED)
        return Answer(PluginVersionReport(name, str(capabilities.version or ""), mode, tuple(resolutions)))

    async def pin_health(self) -> Answer[PinHealthReport] | Refusal:
        """The sidecar's own: the pins of the connectors in the view that do not hold on some worker now."""
        if self._pins is None:
            return Refusal(NotFoundError("Plugin pins are checked only with the view"), SIDECAR)
        return Answer(await self._pins.report())


__all__ = ["PluginVersionReport", "Plugins"]
