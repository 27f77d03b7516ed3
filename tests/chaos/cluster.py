"""The cluster under test, all of the campaign's own: a KRaft broker (``DedicatedBroker``), one Connect
worker of the given release (deploy/local/stack.py's ``start_connect``, from the stack's jars) and three
sidecar processes of the code under test in front of it, each on a fixed port so that a killed one comes
back on the same address. Nothing of the shared stack is touched."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import uuid
import warnings
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

from control_plane.storage.sidecar_topic import TOPIC_CONFIGS
from tests.support import sidecar_process
from tests.support.broker import DedicatedBroker
from tests.support.deploy_local import files_under, local_stack
from tests.support.kafka_topics import topic_configs
from tests.support.ports import free_port
from tests.support.sidecar_process import SidecarProcess

SIDECARS = 3
MIN_INSYNC = "min.insync.replicas"
MAX_MESSAGE_BYTES = "max.message.bytes"


@dataclass(frozen=True)
class SidecarSettings:
    """What the campaign's sidecars are set to: short leases and intervals, so that faults come and go
    within a short run; auto-restart on, on a schedule of seconds."""

    request_budget_s: float = 10.0
    fence_lease_ms: int = 2000
    presence_interval_s: float = 1.0
    auto_restart_backoff_unit_s: float = 1.0
    auto_restart_max_restarts: int = 3

    def env(self, topic: str) -> dict[str, str]:
        return {
            "CONTROL_PLANE_REQUEST_BUDGET_S": str(self.request_budget_s),
            "CONTROL_PLANE_FENCE_LEASE_MS": str(self.fence_lease_ms),
            "CONTROL_PLANE_PRESENCE_INTERVAL_S": str(self.presence_interval_s),
            "CONTROL_PLANE_AUTO_RESTART": "true",
            "CONTROL_PLANE_AUTO_RESTART_BACKOFF_UNIT_S": str(self.auto_restart_backoff_unit_s),
            "CONTROL_PLANE_AUTO_RESTART_MAX_RESTARTS": str(self.auto_restart_max_restarts),
            "CONTROL_PLANE_SIDECARS_TOPIC": topic,
            "CONTROL_PLANE_VIEW_READ_SYNC": "always",
            "CONTROL_PLANE_WORKER_PROBE_S": "0.5",
            "CONTROL_PLANE_WORKER_PROBE_TIMEOUT_S": "0.5",
        }


@dataclass
class Cluster:
    home: Path
    version: str
    broker: DedicatedBroker
    worker: local_stack.Proc
    properties: str
    sidecars_topic: str
    settings: SidecarSettings
    sidecars: list[SidecarProcess] = field(default_factory=list)
    ports: list[int] = field(default_factory=list)
    starts: int = 0

    @property
    def worker_url(self) -> str:
        return self.worker.url

    @property
    def worker_log(self) -> Path:
        return Path(self.worker.log)

    @property
    def group(self) -> str:
        return Path(self.properties).stem

    def topic(self, kind: str) -> str:
        """The worker's internal topic of ``kind`` (configs, offsets, status)."""
        return f"{self.group}-{kind}"

    def start_sidecar(self, index: int) -> SidecarProcess:
        """Sidecar ``index`` (again, after a kill: on the same port), returning at once."""
        self.starts += 1
        process = sidecar_process.start(
            ["serve", "--host", "127.0.0.1", "--port", str(self.ports[index]), "--worker-properties", self.properties],
            self.home / "logs" / f"sidecar-{index}.log",
            self.ports[index],
            name=f"sidecar-{index}",
            env={"CONTROL_PLANE_LOG_FORMAT": "json", **self.settings.env(self.sidecars_topic)},
        )
        if index < len(self.sidecars):
            self.sidecars[index] = process
        else:
            self.sidecars.append(process)
        return process

    async def sidecar_answering(self, index: int, path: str = "/readyz", timeout_s: float = 90) -> None:
        await asyncio.to_thread(self.sidecars[index].wait_answering, path, timeout_s)

    def signal_worker(self, sig: signal.Signals) -> None:
        os.kill(self.worker.pid, sig)

    def signal_broker(self, sig: signal.Signals) -> None:
        assert self.broker.pid is not None
        os.kill(self.broker.pid, sig)

    async def sidecars_topic_writable(self, writable: bool) -> None:
        """The sidecars' topic made unwritable by a record size limit no record meets
        (``max.message.bytes=16``): every write to it is refused (MESSAGE_TOO_LARGE) while it stays readable
        and Connect's own topics work on. (``min.insync.replicas`` above the replication factor would be the
        closer fault, but a 4.x broker no longer refuses writes for it.) ``writable``: the limit removed."""
        admin = AIOKafkaAdminClient(bootstrap_servers=self.broker.bootstrap)
        await admin.start()
        try:
            configs = await topic_configs(admin, self.sidecars_topic)
            # AlterConfigs replaces the topic's whole set: the sidecar's own settings are sent as they are
            kept = {k: v for k, v in configs.items() if k in TOPIC_CONFIGS or k == MIN_INSYNC}
            wanted = kept if writable else {**kept, MAX_MESSAGE_BYTES: "16"}
            await admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, self.sidecars_topic, wanted)])
        finally:
            await admin.close()


@contextlib.asynccontextmanager
async def running_cluster(
    home: Path, version: str, settings: SidecarSettings, worker_properties: Mapping[str, str] | None = None
) -> AsyncIterator[Cluster]:
    """A broker, a worker of ``version`` and three sidecars, each answering; all stopped after the block
    (resumed first, if a fault left one stopped)."""
    broker = DedicatedBroker(home / "broker")
    name = f"chaos-{uuid.uuid4().hex[:8]}"
    worker: local_stack.Proc | None = None
    cluster: Cluster | None = None
    try:
        await asyncio.to_thread(broker.start)
        await asyncio.to_thread(broker.wait_ready)
        discovery = local_stack.quick_discovery(version)
        with files_under(home), warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)  # the worker outlives its Popen, as the stack's do
            worker = local_stack.start_connect(
                name, version, broker.bootstrap, properties={**discovery, **(worker_properties or {})}
            )
        await asyncio.to_thread(
            local_stack.wait_until, worker, lambda: local_stack.connect_ready(worker.url), "answer on its REST port"
        )
        cluster = Cluster(home, version, broker, worker, worker.extra["properties"], f"{name}.control-plane", settings)
        cluster.ports = [free_port() for _ in range(SIDECARS)]
        for index in range(SIDECARS):
            cluster.start_sidecar(index)
        await asyncio.gather(*(cluster.sidecar_answering(i) for i in range(SIDECARS)))
        yield cluster
    finally:
        if cluster is not None:
            for process in cluster.sidecars:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(process.pid, signal.SIGCONT)
                process.kill()
        if worker is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(worker.pid, signal.SIGCONT)
            await asyncio.to_thread(local_stack.stop, [worker])
        if broker.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(broker.pid, signal.SIGCONT)
        await asyncio.to_thread(broker.stop)
