"""The Kafka side of the sidecar, decided once: with a view of the internal topics (``KafkaSide``) the
sidecar has the config writer, the sidecars' own topic with each connector's fence and every sidecar's
presence, the liveness probe, and what is built on them (topic tracking, the wait for stopped tasks, pin
health, lag, the one actor's work: auto-restart and the config history, plan and apply); without one
(``VIEW_ENABLED=false``, or no config or status topic: ``NoKafkaSide``) it has none of them, and each feature
answers its own refusal or does without. ``kafka_side`` chooses, as Connect's ``ConnectDistributed`` chooses
the distributed mode once; everything after asks the side it got, never whether there is a view.

The membership of the workers' group is read on either side (from the brokers, through the consumer
groups' client); only with a view does it also show the fences and the sidecars' presences.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Mapping

import structlog

from .. import __version__
from ..backoff import ProposalBackoff
from ..codecs.worker_plugins import InstalledOnWorker
from ..domain.auto_restart import AutoRestarter, Backoff, Budget, Selection, ViewStatuses
from ..domain.cluster.acting import OneActor, records_history, restarts, restarts_chosen
from ..domain.cluster.fence import ConnectorFence
from ..domain.cluster.membership import ClusterMembership
from ..domain.cluster.presence import Presence
from ..domain.cluster.writes import ConnectorWrites
from ..domain.configs import ConnectorConfigs
from ..domain.history import HistoryRecorder, KeptHistory, PendingRecords
from ..domain.lag import SinkLags
from ..domain.liveness import WorkerProbe
from ..domain.offsets import TaskShutdown
from ..domain.plan import Planner
from ..domain.plugins import PinHealth, Plugins, PluginVersions
from ..domain.ports import InstanceRestarts, PluginTypes, SinkGroupOf
from ..domain.read_rule import ReadRule
from ..domain.topic_creation import CreationPreviews
from ..domain.topics import TopicTracking
from ..heap import HeapFreezer
from ..storage.config_writer import ConfigWriter
from ..storage.sidecar_topic import SidecarTopic
from ..storage.status_writer import StatusWriter
from ..view import ClusterView, MaterializedView
from ..view.config_history import ConfigHistoryTable
from ..view.installed import InstalledTable
from ..view.sidecars import SidecarTable
from . import meetings
from .clients import Clients, build_view

log = structlog.get_logger(__name__)

Versions = Callable[[], Mapping[str, str | None]]


class NoKafkaSide:
    """The sidecar without a view: every part of the Kafka side absent."""

    view: MaterializedView | None = None
    config_log: ConfigWriter | None = None
    fence: ConnectorFence | None = None
    presence: Presence | None = None
    probe: WorkerProbe | None = None
    heap: HeapFreezer | None = None  # the view's heap out of the full collections once it is read
    sidecars: SidecarTable | None = None
    installed: InstalledTable | None = None
    history_table: ConfigHistoryTable | None = None

    def __init__(self, clients: Clients, *, plugins: Callable[[], Mapping[str, InstalledOnWorker]]) -> None:
        self.membership = membership(clients, None, None, plugins)

    def reads_from_view(self) -> bool:
        """Whether the view answers reads (and topic tracking): never without one."""
        return False

    def coordination(self) -> str | None:
        """Why the sidecars' topic cannot be used now (None when it can, and without one)."""
        return None

    def writers_wait_s(self) -> float | None:
        """The least wait between a write and its answer among the live sidecars (``ReadRule``): unknown."""
        return None

    def plugin_types(self) -> dict[str, str]:
        """The connector types the view knows (KIP-158's checks of a configuration's type)."""
        return {}

    def ready_state(self) -> ClusterView | None:
        """The view's state once it has caught up; None before, and always without a view."""
        return None

    def tracking(self, status_writer: StatusWriter) -> TopicTracking | None:
        return None

    def task_shutdown(self) -> TaskShutdown | None:
        return None

    def pin_health(self, versions: PluginVersions) -> PinHealth | None:
        return None

    def sink_lags(self, group_of: SinkGroupOf) -> SinkLags | None:
        return None

    def auto_restarter(self, rule: ReadRule, restarts: InstanceRestarts) -> AutoRestarter | None:
        return None

    def history(
        self, configs: ConnectorConfigs, writes: ConnectorWrites
    ) -> tuple[HistoryRecorder | None, KeptHistory | None]:
        return None, None

    def planner(
        self,
        configs: ConnectorConfigs,
        writes: ConnectorWrites,
        previews: CreationPreviews,
        plugins: Plugins,
    ) -> Planner | None:
        return None

    async def open(self, started: contextlib.AsyncExitStack) -> None:
        """The writers of this side ready, and stopped with ``started``: the sidecars' own topic created
        where missing (before its tail starts), the fence's releases written before its producer stops."""


class KafkaSide(NoKafkaSide):
    """The sidecar with a view, and everything the view makes possible."""

    def __init__(
        self,
        clients: Clients,
        view: MaterializedView,
        catalog: PluginTypes,
        *,
        versions: Versions,
        installed: Callable[[], InstalledOnWorker | None],
        plugins: Callable[[], Mapping[str, InstalledOnWorker]],
    ) -> None:
        settings = self._settings = clients.settings
        self._clients = clients
        self.view = self._view = view
        self.sidecars, self.installed, self.history_table = view.sidecars, view.installed, view.history
        self.config_log = self._config_log = ConfigWriter(  # a config topic: the view reads one
            settings.config_storage_topic or "", clients.producer, clients.attempt_s, clients.writes
        )
        self.topic = SidecarTopic(
            settings.sidecars_topic_name,
            clients.topic_admin(),
            clients.producer,
            clients.attempt_s,
            clients.writes,
            replication_factor=settings.sidecars_topic_replication_factor,
            write_timeout_s=settings.sidecars_topic_write_timeout_s,
            create=settings.sidecars_topic_create,
        )
        self.fence = (
            ConnectorFence(
                self.topic,
                view,
                sidecar=clients.me,
                lease_s=settings.fence_lease_ms / 1000,
                wait_s=settings.fence_wait_s,
                # a claim's read back: bounded as its write, so that a claim fails in seconds
                read_timeout_s=min(clients.read_back_s, settings.sidecars_topic_write_timeout_s),
            )
            if settings.fence_enabled
            else None
        )
        self.presence = self._presence = Presence(
            self.topic,
            view.sidecars,
            sidecar=clients.me,
            url=settings.advertised,
            version=__version__,
            interval_s=settings.presence_interval_s,
            workers=versions,
            view_lag=lambda: {tail: lag.records if lag else None for tail, lag in view.lag().items()},
            stop_timeout_s=settings.shutdown_flush_timeout_s,
            installed=installed,
            write_wait_s=settings.view_read_sync_window_s if settings.view_read_sync == "always" else 0.0,
            # what it will do, truthfully: the auto-restarter is built where the fence is, and acts on what its
            # settings choose only with AUTO_RESTART on (an operator's choices whatever AUTO_RESTART says)
            auto_restart=self.fence is not None and settings.auto_restart,
            auto_restart_chosen=self.fence is not None,
            history=self.fence is not None and settings.history_enabled,
            read=view.tails["sidecars"].caught_up.is_set,
            ready=lambda: view.ready and view.tails["sidecars"].caught_up.is_set(),
            until_ready=lambda: until_ready(view),
        )
        self.probe = WorkerProbe(
            clients.upstream,
            view,
            catalog,
            interval_s=settings.worker_probe_s,
            plugins_refresh_s=settings.capability_refresh_s,
        )
        self.membership = membership(clients, self.fence, self.presence, plugins)
        self.heap = HeapFreezer(view.wait_ready)

    def reads_from_view(self) -> bool:
        # the view serves topic tracking when it answers reads and the worker's switches are known
        return self._settings.read_from == "view" and self._settings.tracking_switches_known

    def writers_wait_s(self) -> float | None:
        return self._presence.least_write_wait_s()

    def coordination(self) -> str | None:
        return self.topic.trouble() if self.fence is not None else None

    def plugin_types(self) -> dict[str, str]:
        return self._view.state.plugin_types

    def ready_state(self) -> ClusterView | None:
        return self._view.state if self._view.ready else None

    def tracking(self, status_writer: StatusWriter) -> TopicTracking:
        settings = self._settings
        return TopicTracking(
            self._view.state,
            status_writer,
            enabled=settings.topic_tracking_enable,
            allow_reset=settings.topic_tracking_allow_reset,
        )

    def task_shutdown(self) -> TaskShutdown:
        return TaskShutdown(
            self._view,
            status_timeout_s=self._settings.emulation_task_stop_timeout_s,
            graceful_shutdown_s=self._settings.task_shutdown_graceful_timeout_ms / 1000,
        )

    def pin_health(self, versions: PluginVersions) -> PinHealth:
        view = self._view
        return PinHealth(versions, lambda: view.state.connector_configs)

    def sink_lags(self, group_of: SinkGroupOf) -> SinkLags:
        clients = self._clients
        return SinkLags(
            self.ready_state,
            group_of,
            clients.groups,
            clients.end_offsets,
            interval_s=self._settings.lag_refresh_s,
            worker_offset_reset=self._settings.worker_consumer_auto_offset_reset,
        )

    def auto_restarter(self, rule: ReadRule, restarts_: InstanceRestarts) -> AutoRestarter | None:
        """Where the fence is: failed connectors restarted by the one sidecar that restarts (``cluster.acting``)."""
        settings, fence = self._settings, self.fence
        if fence is None:
            return None
        return AutoRestarter(
            ViewStatuses(rule),
            self._view.auto_restarts,
            OneActor(self._view.sidecars, self._clients.me, restarts, fallback=restarts_chosen),
            fence,
            self.topic,
            self._view,
            restarts_,
            backoff=Backoff(
                settings.auto_restart_backoff_unit_s,
                settings.auto_restart_backoff_cap_s,
                settings.auto_restart_max_restarts or None,
            ),
            selection=Selection(settings.auto_restart, re.compile(settings.auto_restart_connectors)),
            interval_s=settings.auto_restart_check_s,
            budget=Budget(settings.auto_restart_budget, settings.auto_restart_budget_window_s),
            read_timeout_s=self._clients.read_back_s,
            audit=meetings.audited(self._clients.access.audit),
        )

    def history(
        self, configs: ConnectorConfigs, writes: ConnectorWrites
    ) -> tuple[HistoryRecorder | None, KeptHistory | None]:
        """Where the fence is: the config history's recorder (it records when this sidecar is the one that
        acts, and names the authors of this sidecar's writes) and what the endpoints ask."""
        settings, view, clients = self._settings, self._view, self._clients
        if self.fence is None:
            return None, None
        if settings.history_secret_key is None:
            log.warning(
                "HISTORY_SECRET_KEY is not set: the history keeps no digest of a secret, only whether it changed "
                "between versions (a change before this sidecar started may show as changed), a rollback "
                "restores a secret only where no change was recorded since, and a plan applies only through "
                "the sidecar that made it"
            )
        recorder = HistoryRecorder(
            view.history,
            OneActor(view.sidecars, clients.me, records_history),
            clients.me,
            self.topic,
            view,
            meetings.history_marks(settings, clients.access.secrets),
            retention_s=settings.history_retention_s,
            interval_s=settings.history_check_s,
            read_timeout_s=clients.read_back_s,
            ready=lambda: view.ready and view.tails["sidecars"].caught_up.is_set(),
            pending=PendingRecords(
                settings.history_max_pending_records,
                ProposalBackoff(
                    settings.history_retry_initial_backoff_ms, settings.history_retry_max_backoff_ms, 2.0, 0.2
                ),
            ),
        )
        if settings.history_enabled:  # off: this sidecar neither records nor names who made its writes
            writes.attribution = recorder
        current, rollback = meetings.rollback_writes(configs, writes)
        return recorder, KeptHistory(view.history, recorder, current, rollback)

    def planner(
        self,
        configs: ConnectorConfigs,
        writes: ConnectorWrites,
        previews: CreationPreviews,
        plugins: Plugins,
    ) -> Planner:
        digests = meetings.plan_digests(self._settings, self._clients.access.secrets)
        return meetings.planner(configs, writes, digests, previews, plugins, self._settings)

    async def open(self, started: contextlib.AsyncExitStack) -> None:
        started.push_async_callback(self._config_log.stop)
        await self.topic.ensure()
        started.push_async_callback(self.topic.stop)
        if self.fence is not None:
            started.push_async_callback(self.fence.stop)


def kafka_side(
    clients: Clients,
    catalog: PluginTypes,
    *,
    versions: Versions,
    installed: Callable[[], InstalledOnWorker | None],
    plugins: Callable[[], Mapping[str, InstalledOnWorker]],
) -> NoKafkaSide:
    """The Kafka side the settings give: ``versions``, the workers' versions the capabilities last decided
    from (what this sidecar's presence names); ``installed``, its worker's plugins; ``plugins``, every
    worker's, as the live sidecars report them (what the membership shows)."""
    view = build_view(clients.settings, clients.metrics)
    if view is None:
        return NoKafkaSide(clients, plugins=plugins)
    return KafkaSide(clients, view, catalog, versions=versions, installed=installed, plugins=plugins)


async def until_ready(view: MaterializedView) -> None:
    """Until the view has caught up, the sidecars' topic with it: the sidecar may act for the cluster."""
    await view.wait_ready()
    await view.tails["sidecars"].caught_up.wait()


def membership(
    clients: Clients,
    fence: ConnectorFence | None,
    presence: Presence | None,
    plugins: Callable[[], Mapping[str, InstalledOnWorker]],
) -> ClusterMembership:
    settings = clients.settings
    return ClusterMembership(
        clients.groups,
        clients.upstream,
        settings.group_id,
        version_timeout_s=settings.worker_probe_timeout_s,
        fence=fence,
        presence=presence,
        plugins=plugins,
    )


__all__ = ["KafkaSide", "NoKafkaSide", "kafka_side"]
