"""``PinHealth``: the version pins of the cluster's connectors that do not hold on some worker now.

A pin accepted when a connector was written can stop holding when a worker's installed plugins change (a
plugin upgraded or removed, a worker added with other plugins): before 4.1 the worker then runs a version
outside the range and nothing says so ("checked, not enforced by the worker"); from 4.1 a connector or task
assigned to that worker fails ("enforced by the worker"). Every pin of every connector in the view is
resolved on every worker whose plugins are known (``plugins.workers``), as the check of a new pin is
(``rules.pin_spread``): ``report`` for ``GET /_sidecar/plugin-pins`` (with the group's workers whose plugins
are unknown), ``counts`` for the metric. Kept per connector configuration and per state of the workers'
plugins, so a scrape costs a pass over the configurations when nothing changed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ...rules.pin_spread import WorkerPin
from ...rules.plugin_versions import PluginKey, plugin_keys
from ..capabilities import Feature, Mode
from .versions import PluginVersions
from .workers import KnownWorker

ConnectorConfigs = Callable[[], Mapping[str, Mapping[str, str | None]]]


@dataclass(frozen=True)
class PinNotHolding:
    connector: str
    pin: WorkerPin  # the pin on the worker where it does not hold


@dataclass(frozen=True)
class PinHealthReport:
    checked: tuple[tuple[KnownWorker, str], ...]  # the workers checked, each with who enforces pins there
    unknown: tuple[str, ...]  # the group's workers whose plugins no live sidecar reports
    pins: int  # the pins checked (a connector's pinned plugin keys)
    not_holding: tuple[PinNotHolding, ...]


class PinHealth:
    def __init__(self, versions: PluginVersions, configs: ConnectorConfigs) -> None:
        self._versions = versions
        self._configs = configs
        self._keys: dict[str, tuple[Mapping[str, str | None], tuple[PluginKey, ...]]] = {}  # per connector
        self._last: tuple[object, tuple[int, tuple[PinNotHolding, ...]]] | None = None

    def _native(self) -> bool:
        return self._versions.capabilities.decision(Feature.PLUGIN_VERSIONS).mode is not Mode.EMULATED

    def _pinned(self) -> tuple[dict[str, tuple[PluginKey, ...]], bool]:
        """Each connector's pinned keys, and whether any configuration changed since the last call."""
        configs = self._configs()
        changed = configs.keys() != self._keys.keys()
        kept: dict[str, tuple[Mapping[str, str | None], tuple[PluginKey, ...]]] = {}
        for name, config in configs.items():
            known = self._keys.get(name)
            if known is None or known[0] is not config:
                known = (config, tuple(k for k in plugin_keys(config) if k.spec is not None))
                changed = True
            kept[name] = known
        self._keys = kept
        return {name: keys for name, (_, keys) in kept.items() if keys}, changed

    def _check(self, workers: list[KnownWorker]) -> tuple[int, tuple[PinNotHolding, ...]]:
        pinned, changed = self._pinned()
        native = self._native()
        key = (tuple((w.worker, w.digest) for w in workers), native)
        if self._last is not None and self._last[0] == key and not changed:
            return self._last[1]
        found: list[PinNotHolding] = []
        count = 0
        for name in sorted(pinned):
            for plugin_key in pinned[name]:
                count += 1
                spread = self._versions.spread(plugin_key, workers, native=native)
                found.extend(PinNotHolding(name, pin) for pin in spread.not_holding)
        result = (count, tuple(found))
        self._last = (key, result)
        return result

    def counts(self) -> dict[tuple[str, str], int]:
        """(outcome, enforcement) -> the pins that do not hold, on the workers whose plugins are known."""
        _, found = self._check(list(self._versions.workers.known().values()))
        return dict(Counter((f.pin.resolution.outcome.value, f.pin.enforcement.value) for f in found))

    async def report(self) -> PinHealthReport:
        workers, unknown = await self._versions.scope()
        count, found = self._check(workers)
        native = self._native()
        checked = tuple((w, self._versions.enforcement(w.version, native=native).value) for w in workers)
        return PinHealthReport(checked, tuple(unknown), count, found)


__all__ = ["PinHealth", "PinHealthReport", "PinNotHolding"]
