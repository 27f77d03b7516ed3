"""The plugins installed on the workers, with their versions: ``GET /connector-plugins?connectorsOnly=false``.

``PluginCatalog.load`` is the one loader of the workers' plugin list: the ``WorkerProbe`` calls it every
``refresh_s`` (and takes the connector types for the view from it), and ``current()`` loads it on demand
when it was never loaded or is older than ``refresh_s`` (a sidecar without a view has no probe). A failed
load keeps the last list. Plugins change only when a worker restarts, so a cached list is good enough. It is
the list of one worker, the one that answered (``worker``: the sidecar's own, in front of one worker); the
other workers' lists reach this sidecar through the sidecars' topic (``plugins.workers``).

What the list says differs by version: 4.1+ lists one entry per installed version of every plugin,
ascending; before, connectors are listed per installed version but converters, transformations and
predicates once and without a version (``DelegatingClassLoader.versionFor`` reads only connectors'
versions), so their versions are unknown here (None). Before 3.2 the list has connectors only; the
converters are then Kafka's own and those of the workers' plugin.path (``listings.PluginListings.converters``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import orjson

from ...codecs.worker_plugins import PluginsByType
from ...rules.connectors import plugin_types
from ...rules.maven_range import sort_versions
from ...rules.plugin_versions import connect_aliases
from ...upstream import UpstreamError, UpstreamRequest
from ..ports import Workers
from .listings import KAFKA_CONVERTERS, KAFKA_HEADER_CONVERTERS, PathConverters

PLUGINS_QUERY = b"connectorsOnly=false"
CONVERTER_TYPES = ("converter", "header_converter")


@dataclass(frozen=True)
class InstalledPlugin:
    class_name: str
    type: str
    version: str | None  # None: the worker does not report it


@dataclass(frozen=True)
class PluginList:
    """An immutable snapshot of the workers' plugin list."""

    plugins: tuple[InstalledPlugin, ...] = ()
    aliases: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, plugins: Sequence[InstalledPlugin]) -> PluginList:
        return cls(tuple(plugins), connect_aliases((p.class_name, p.type) for p in plugins))

    def class_name(self, name: str, types: Sequence[str]) -> str | None:
        """The full class name of a class name or alias among the plugins of ``types``; None if none."""
        full = self.aliases.get(name, name)
        return full if any(p.class_name == full and p.type in types for p in self.plugins) else None

    def versions(self, class_name: str, types: Sequence[str]) -> list[str | None]:
        """Every installed copy's version (None where unreported), known ones ascending, unknown first."""
        found = [p.version for p in self.plugins if p.class_name == class_name and p.type in types]
        known = sort_versions(dict.fromkeys(v for v in found if v is not None))
        return [None for v in found if v is None] + list(known)

    def connector_types(self) -> dict[str, str]:
        return plugin_types((p.class_name, p.type) for p in self.plugins)

    def by_type(self) -> dict[str, dict[str, tuple[str | None, ...]]]:
        """type -> class -> its installed versions (``versions``' order): what a version pin is checked against."""
        out: dict[str, dict[str, tuple[str | None, ...]]] = {}
        for p in self.plugins:
            out.setdefault(p.type, {}).setdefault(p.class_name, ())
        for kind, classes in out.items():
            for name in classes:
                classes[name] = tuple(self.versions(name, (kind,)))
        return out

    @classmethod
    def from_types(cls, plugins: PluginsByType) -> PluginList:
        """The list ``by_type`` describes (another worker's, from its installed-plugins record)."""
        listed = [
            InstalledPlugin(name, kind, version)
            for kind, classes in plugins.items()
            for name, versions in classes.items()
            for version in versions
        ]
        return cls.of(listed)


class PluginCatalog:
    def __init__(
        self,
        workers: Workers,
        *,
        refresh_s: float,
        monotonic: Callable[[], float] = time.monotonic,
        path_converters: PathConverters | None = None,
    ) -> None:
        self._workers = workers
        self._path_converters = path_converters
        self._refresh_s = refresh_s
        self._monotonic = monotonic
        self.snapshot = PluginList()
        self.loaded_at: float | None = None
        self.worker: str | None = None  # the URL of the worker that listed ``snapshot``

    async def load(self) -> bool:
        try:
            answer = await self._workers.forward(UpstreamRequest("GET", "/connector-plugins", query=PLUGINS_QUERY))
        except UpstreamError:
            return False
        if answer.status != 200:
            return False
        listed = orjson.loads(answer.body)
        if not isinstance(listed, list):
            return False
        plugins = [
            InstalledPlugin(p["class"], str(p.get("type")), p["version"] if isinstance(p.get("version"), str) else None)
            for p in listed
            if isinstance(p, dict) and isinstance(p.get("class"), str)
        ]
        if not any(p.type in CONVERTER_TYPES for p in plugins):  # before 3.2: Kafka's own and plugin.path's
            plugins += await self._converters()
        self.snapshot = PluginList.of(plugins)
        self.loaded_at = self._monotonic()
        self.worker = answer.worker
        return True

    async def _converters(self) -> list[InstalledPlugin]:
        found = await self._path_converters() if self._path_converters is not None else None
        converters, headers = found or (frozenset(), frozenset())
        listed = (("converter", KAFKA_CONVERTERS | converters), ("header_converter", KAFKA_HEADER_CONVERTERS | headers))
        return [InstalledPlugin(name, kind, None) for kind, names in listed for name in sorted(names)]

    def connector_types(self) -> dict[str, str]:
        """The last list's connector classes and aliases -> source or sink (``ports.PluginTypes``)."""
        return self.snapshot.connector_types()

    async def current(self) -> PluginList:
        loaded = self.loaded_at
        if loaded is None or self._monotonic() - loaded > self._refresh_s:
            await self.load()
        return self.snapshot


__all__ = ["InstalledPlugin", "PluginCatalog", "PluginList"]
