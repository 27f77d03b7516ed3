"""A herder built on the fakes of its ports (``tests.support.fakes``), as the domain's tests drive it."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from control_plane.codecs import ConnectorConfig, ConnectorStatus, TaskCommit, TaskStatus
from control_plane.domain.auto_restart import AutoRestart
from control_plane.domain.capabilities import Capabilities, Feature
from control_plane.domain.cluster.forward_route import ForwardRoute
from control_plane.domain.cluster.membership import ClusterMembership
from control_plane.domain.configs import ConnectorConfigs
from control_plane.domain.herder import Herder
from control_plane.domain.history import ConfigHistory
from control_plane.domain.lag import Lags
from control_plane.domain.liveness import WorkerProbe
from control_plane.domain.offsets import StopAndOffsets
from control_plane.domain.plan import PlanAndApply
from control_plane.domain.plugins import PluginCatalog, Plugins
from control_plane.domain.reads import Reads
from control_plane.domain.topic_creation import CreationPreviews
from control_plane.domain.topics import Topics, TopicTracking
from control_plane.modes import FeatureMode

from .fakes import FakeStatusSink, FakeWorkerGroup, FakeWorkers, Kafka, configs_feature, newer_api, read_rule


class FakeCluster:
    """A herder on the fakes: ``version`` is what the workers report (None: no worker answers)."""

    def __init__(
        self,
        version: str | None,
        *,
        read_from_view: bool = True,
        modes: Mapping[Feature, FeatureMode] | None = None,
        view_read_sync: str = "never",
        view_read_sync_s: float = 1.0,
        writers_wait_s: Callable[[], float | None] = lambda: None,
    ) -> None:
        self.kafka = Kafka()
        self.workers = FakeWorkers(version)
        self.sink = FakeStatusSink()
        self.capabilities = Capabilities(
            self.workers,
            modes or {},
            refresh_s=60,
            first_detection_wait_s=0.05,
            view_answers=read_from_view,
        )
        catalog = PluginCatalog(self.workers, refresh_s=60)
        self.probe = WorkerProbe(self.workers, self.kafka.view, catalog, interval_s=60, plugins_refresh_s=60)
        view = self.kafka.view
        rule = read_rule(
            self.capabilities,
            self.workers,
            view,
            self.probe,
            reads_from_view=read_from_view,
            view_read_sync=view_read_sync,
            view_read_sync_s=view_read_sync_s,
            writers_wait_s=writers_wait_s,
        )
        membership = ClusterMembership(FakeWorkerGroup(), self.workers, "connect-cluster", version_timeout_s=1.0)
        self.herder = Herder(
            rule,
            reads=Reads(rule, self.sink, describe_settings=dict),
            offsets=StopAndOffsets(rule, self.kafka.stopper, self.kafka.offsets),
            topics=Topics(rule, TopicTracking(view.state, self.sink, enabled=True, allow_reset=True)),
            topic_creation=CreationPreviews(rule, None),
            plugins=Plugins(rule, None),
            configs=configs_feature(
                rule,
                ConnectorConfigs(self.workers, checks=(), view=view, writes=self.kafka.connector_writes),
                self.kafka,
            ),
            newer=newer_api(rule),
            auto_restart=AutoRestart(None),  # the operator features need the sidecars' topic: refused here
            history=ConfigHistory(None),
            lag=Lags(None, lambda: None),
            plan=PlanAndApply(None),
            writes=self.kafka.connector_writes,
            membership=membership,
            route=ForwardRoute(self.workers, membership.read_within),
        )

    async def detect(self) -> None:
        assert await self.capabilities.refresh()
        await self.probe.probe()

    def running(self, name: str, **config: str) -> None:
        state = self.kafka.view.state
        state.apply_config(ConnectorConfig(name, {"connector.class": "FileStreamSource", "name": name, **config}))
        state.apply_config(TaskCommit(name, 1))
        state.apply_status(ConnectorStatus(name, "RUNNING", None, "w1", 1))
        state.apply_status(TaskStatus(name, 0, "RUNNING", None, "w1", 1))
