"""Versioned plugins (KIP-891) as the herder's reads need them: whether the sidecar adds the version to
statuses, a connector's configuration from wherever it can be read, and the sidecar's own report of what
each plugin key resolves to."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ...rules.plugin_versions import PinResolution
from ...upstream import UpstreamError, UpstreamRequest
from ..capabilities import Feature, Mode
from ..configs.connector_configs import Config, config_path
from ..errors import NotFoundError
from ..outcomes import SIDECAR, Answer, Refusal
from ..ports import Workers
from ..read_rule import ReadRule
from .versions import PluginVersions


@dataclass(frozen=True)
class PluginVersionReport:
    """``/_sidecar/.../plugin-versions``: what each plugin key resolves to on this cluster, and why."""

    connector: str | None
    worker_version: str
    mode: Mode
    plugins: tuple[PinResolution, ...]


class VersionReports:
    def __init__(self, rule: ReadRule, workers: Workers, versions: PluginVersions | None) -> None:
        self._rule = rule
        self._workers = workers
        self._versions = versions

    def emulated(self) -> PluginVersions | None:
        """The sidecar adds the version to statuses: the workers do not (before 4.1)."""
        versions = self._versions
        return versions if versions is not None and versions.emulated() else None

    async def config_of(self, name: str) -> Mapping[str, str | None] | None:
        """A connector's configuration: the view's once it has caught up, else the worker's."""
        view = self._rule.view
        if self._rule.view_ready and view is not None:
            return view.state.connector_config(name)
        try:
            answer = await self._workers.forward(UpstreamRequest("GET", config_path(name)))
        except UpstreamError:
            return None
        config = answer.json() if answer.status == 200 else None
        return config if isinstance(config, dict) else None

    async def report(self, name: str | None, config: Config | None) -> Answer[PluginVersionReport] | Refusal:
        """The sidecar's own: what each plugin key of a connector (by name) or a configuration resolves to."""
        versions = self._versions
        if versions is None:
            return Refusal(NotFoundError("Plugin versions are not available"), SIDECAR)
        if config is None:
            config = await self.config_of(name or "")
            if config is None:
                return Refusal(NotFoundError(f"Connector {name} not found"), SIDECAR)
        capabilities = self._rule.capabilities
        mode = await capabilities.mode(Feature.PLUGIN_VERSIONS)  # the one the check uses
        resolutions = await versions.resolutions(config, native=mode is not Mode.EMULATED)
        return Answer(PluginVersionReport(name, str(capabilities.version or ""), mode, tuple(resolutions)))


__all__ = ["PluginVersionReport", "VersionReports"]
