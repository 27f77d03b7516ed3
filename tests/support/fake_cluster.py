"""A herder built on the fakes of its ports (``tests.support.fakes``), as the domain's tests drive it."""

from __future__ import annotations

from collections.abc import Mapping

from control_plane.codecs import ConnectorConfig, ConnectorStatus, TaskCommit, TaskStatus
from control_plane.domain.capabilities import Capabilities, Feature
from control_plane.domain.connector_configs import ConnectorConfigs
from control_plane.domain.herder import Herder
from control_plane.domain.liveness import WorkerProbe
from control_plane.domain.topics import TopicTracking
from control_plane.modes import FeatureMode

from .fakes import FakeStatusSink, FakeWorkers, Kafka, newer_api


class FakeCluster:
    """A herder on the fakes: ``version`` is what the workers report (None: no worker answers)."""

    def __init__(
        self,
        version: str | None,
        *,
        read_from_view: bool = True,
        modes: Mapping[Feature, FeatureMode] | None = None,
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
        self.probe = WorkerProbe(self.workers, self.kafka.view, interval_s=60, plugins_refresh_s=60)
        self.herder = Herder(
            capabilities=self.capabilities,
            workers=self.workers,
            view=self.kafka.view,
            probe=self.probe,
            tracking=TopicTracking(self.kafka.view.state, self.sink, enabled=True, allow_reset=True),
            stopper=self.kafka.stopper,
            offsets=self.kafka.offsets,
            configs=(configs := ConnectorConfigs(self.workers, checks=(), view=self.kafka.view)),
            newer=newer_api(self.capabilities, self.workers, configs, self.kafka),
            status_writes=self.sink,
            reads_from_view=read_from_view,
            describe_settings=dict,
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
