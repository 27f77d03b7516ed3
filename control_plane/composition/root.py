"""``running``: the sidecar built from the settings, in order, started in that order and stopped in reverse,
a partial start undone (as Connect's ``ConnectDistributed.startConnect`` reads top to bottom: stores,
herder, REST server). It yields the ``Runtime``, the typed state the HTTP layer's lifespan hands its
handlers."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Protocol

from ..access import Access
from ..domain.capabilities import Capabilities, Feature
from ..domain.herder import Herder
from ..domain.plugins import PluginCatalog, WorkerCatalogs
from ..metrics import Metrics
from ..plugin_path import PluginPathScan
from ..settings import Settings
from ..storage.record_producer import RecordProducer
from ..storage.status_writer import StatusWriter
from ..upstream import ConnectUpstream, Transport
from ..view import MaterializedView
from .clients import Clients, build_clients
from .features import build_features
from .kafka_side import NoKafkaSide, kafka_side


@dataclass(frozen=True)
class Runtime:
    """What the handlers get: the herder, and the parts the sidecar's own endpoints and tests read."""

    settings: Settings
    herder: Herder
    metrics: Metrics
    upstream: ConnectUpstream
    status_writer: StatusWriter
    view: MaterializedView | None
    access: Access


@contextlib.asynccontextmanager
async def running(
    settings: Settings,
    metrics: Metrics,
    *,
    transport: Transport | None = None,
    status_producer: RecordProducer | None = None,
) -> AsyncIterator[Runtime]:
    """``transport`` and ``status_producer`` put fakes under the real upstream client and status writer (the
    unit tests' seams); nothing is swapped after construction."""
    async with contextlib.AsyncExitStack() as started:
        clients = build_clients(settings, metrics, transport, status_producer)
        started.push_async_callback(clients.upstream.aclose)
        started.push_async_callback(clients.end_offsets.stop)
        path_converters = PluginPathScan(settings.plugin_path, settings.capability_refresh_s)
        catalog = PluginCatalog(
            clients.upstream, refresh_s=settings.capability_refresh_s, path_converters=path_converters
        )
        side = kafka_side(  # the one place that decides whether the sidecar has a view
            clients,
            catalog,
            versions=lambda: capabilities.worker_versions,
            installed=lambda: catalogs.own(),
            plugins=lambda: catalogs.records(),
        )
        catalogs = WorkerCatalogs(  # this sidecar's worker's plugins, and the others' its peers report
            catalog,
            worker_versions=lambda: capabilities.worker_versions,
            worker_ids=settings.worker_ids(),
            sidecars=side.sidecars,
            installed=side.installed,
            sidecar=clients.me,
        )
        capabilities = build_capabilities(clients, side)
        started.push_async_callback(side.membership.stop)  # after the capabilities' stop: they read it
        features = build_features(clients, side, capabilities, catalog, catalogs, path_converters)
        herder = features.herder
        metrics.watch_states(herder.reads.state_gauges)
        metrics.watch_read_syncs(features.rule)
        metrics.watch_plugin_pins(features.pin_health)
        metrics.watch_auto_restarts(herder.auto_restart.restarter)
        metrics.watch_lags(herder.lag.readings())
        metrics.watch_history(features.recorder)
        metrics.watch_sidecars_topic(side.coordination if side.fence is not None else None)
        await clients.status_writer.start()  # stopped last: pending writes flushed first (graceful shutdown)
        started.push_async_callback(clients.status_writer.stop, settings.shutdown_flush_timeout_s)
        await side.open(started)
        started.push_async_callback(features.writes.stop)  # before the fence's: its holds given back first
        parts = (
            clients.access.audit.sink,
            side.view,
            side.probe,
            capabilities,
            side.presence,
            herder.auto_restart.restarter,
            features.recorder,
            features.sink_lags,
            side.heap,
        )
        for part in parts:
            if part is not None:
                await _start(started, part)
        yield Runtime(settings, herder, metrics, clients.upstream, clients.status_writer, side.view, clients.access)


def build_capabilities(clients: Clients, side: NoKafkaSide) -> Capabilities:
    """Per feature native or emulated, from the versions of every live worker of the group (not only the
    given workers') and the settings."""
    settings = clients.settings
    return Capabilities(
        clients.upstream,
        {Feature(name): mode for name, mode in settings.feature_modes().items()},
        group=side.membership if settings.workers_group_known else None,
        refresh_s=settings.capability_refresh_s,
        first_detection_wait_s=settings.upstream_connect_timeout_s,
        view_answers=side.reads_from_view(),
        on_answer=clients.metrics.worker_answered,
    )


class _Part(Protocol):
    async def start(self) -> None: ...

    async def stop(self) -> None: ...


async def _start(started: contextlib.AsyncExitStack, part: _Part) -> None:
    await part.start()
    started.push_async_callback(part.stop)


__all__ = ["Runtime", "build_capabilities", "running"]
