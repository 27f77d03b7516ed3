"""The herder: the one entry point of the HTTP handlers (the role Connect's ``Herder`` plays for its
``ConnectorsResource``). It holds one facade per feature, and each facade holds its feature's decision,
native or emulated (``Capabilities.mode``, ``domain.capabilities``), and the read rule's
(``domain.read_rule``): who answers a read. A facade answers a domain outcome (``domain.outcomes``): an
answer with its provenance, a refusal, or "forward the request unchanged". A handler makes one call:
``herder.offsets.stop(name)``.

| attribute | facade | the feature |
|---|---|---|
| ``reads`` | ``reads.Reads`` | connector and task reads, the dashboards' states, the sidecar's own endpoints |
| ``offsets`` | ``offsets.StopAndOffsets`` | the STOPPED state and offsets (KIP-875) |
| ``topics`` | ``topics.Topics`` | topic tracking (KIP-558) |
| ``topic_creation`` | ``topic_creation.CreationPreviews`` | topic-creation previews (KIP-158) |
| ``plugins`` | ``plugins.Plugins`` | plugin listings (KIP-769), versions (KIP-891) |
| ``configs`` | ``configs.Configs`` | validate, create, update, PATCH; ``initial_state`` (KIP-980) |
| ``newer`` | ``newer.NewerApi`` | health, loggers, restart options, ``GET /`` |
| ``auto_restart`` | ``auto_restart.AutoRestart`` | restarts of failed connectors and tasks, with a backoff |
| ``history`` | ``history.ConfigHistory`` | every config's versions, diffs, rollback |
| ``lag`` | ``lag.Lags`` | sinks' consumer lag, sources' freshness |
| ``plan`` | ``plan.PlanAndApply`` | plan and apply of a folder of connector configs |
| ``bulk`` | ``bulk.BulkActions`` | one action on every connector a selector picks, each a single request's |
| ``membership`` | ``cluster.membership.ClusterMembership`` | the workers and sidecars of the cluster |

Every facade is there whatever the sidecar has: one that needs what this sidecar lacks (the view, the
sidecars' topic) answers its own refusal. The herder's own: ``forward`` (a request passed through to a
worker unchanged, with read-your-writes) and ``view_ready``. The facades are built from the ports in one
place, ``control_plane.composition``.
"""

from __future__ import annotations

import dataclasses
from urllib.parse import unquote

import orjson

from ..upstream import UpstreamRequest, UpstreamResponse
from .auto_restart import AutoRestart
from .bulk import BulkActions
from .cluster.forward_route import ForwardRoute
from .cluster.membership import ClusterMembership
from .cluster.writes import ConnectorWrites
from .configs import Configs
from .history import ConfigHistory
from .lag import Lags
from .newer import NewerApi
from .offsets import StopAndOffsets
from .plan import PlanAndApply
from .plugins import Plugins
from .read_rule import ReadRule
from .reads import Reads
from .topic_creation import CreationPreviews
from .topics import Topics

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
TOPICS_RESET = "/topics/reset"


class Herder:
    def __init__(
        self,
        rule: ReadRule,
        *,
        reads: Reads,
        offsets: StopAndOffsets,
        topics: Topics,
        topic_creation: CreationPreviews,
        plugins: Plugins,
        configs: Configs,
        newer: NewerApi,
        auto_restart: AutoRestart,
        history: ConfigHistory,
        lag: Lags,
        plan: PlanAndApply,
        writes: ConnectorWrites,
        membership: ClusterMembership,
        route: ForwardRoute,
        bulk_concurrency: int = 8,
        bulk_budget_s: float = 0.0,
    ) -> None:
        self.capabilities = rule.capabilities
        self.reads = reads
        self.offsets = offsets
        self.topics = topics
        self.topic_creation = topic_creation
        self.plugins = plugins
        self.configs = configs
        self.newer = newer
        self.auto_restart = auto_restart
        self.history = history
        self.lag = lag
        self.plan = plan
        self.membership = membership
        self._rule = rule
        self._writes = writes
        self._route = route
        self.bulk = BulkActions(
            self, rule, bulk_concurrency, bulk_budget_s
        )  # each connector's action: a call of the above

    @property
    def view_ready(self) -> bool:
        return self._rule.view_ready

    async def settle_write(self) -> None:
        """Before the answer to a write that succeeded, whoever did it (``ReadRule.settle_write``)."""
        await self._rule.settle_write()

    async def forward(self, request: UpstreamRequest) -> UpstreamResponse:
        """Pass a Connect REST request through to a worker of the cluster, unchanged.

        Read-your-writes: a worker answers a change of a connector (create, config, pause, resume, stop,
        delete) once the leader has written it to the config topic and read it back. When one succeeded,
        the view reads the config topic to its end before the answer goes back, so the client's next read
        through the view shows the change (bounded by ``read_your_writes_timeout_s``).

        A resume of a connector stopped after it had failed is the offsets feature's first
        (``StopAndOffsets.before_resume``): KIP-875 brings it back RUNNING.

        A change of one connector passes through one at a time with the sidecar's own writes of it
        (``ConnectorWrites.serialized``): a resume sent during an emulated offsets alter lands before the
        alter's check at the write, or after its write, never in between.

        These are the workers' own writes (``native``): when the sidecars' topic cannot be used, the fence is
        not held and the write goes through as it would with no sidecar in front, its answer warned.
        (Connect's own ``AbstractHerder.pauseConnector`` writes the target state and answers: a sidecar's
        coordination is no reason to refuse it.)"""
        connector = changed_connector(request)
        if connector is None:
            return await self._pass(request)
        async with self._writes.serialized(connector, native=True) as unfenced:
            answer = await self._pass(request)
        return answer if unfenced is None else dataclasses.replace(answer, warnings=(*answer.warnings, unfenced))

    async def _pass(self, request: UpstreamRequest) -> UpstreamResponse:
        await self.offsets.before_resume(request)
        answer = await self._route.send(request)
        if (
            changes_connectors(request.method, request.path)
            and 200 <= answer.status < 300
            and not request.path.endswith(TOPICS_RESET)  # a status-topic write, not a change of the config
            and self._rule.view_ready
        ):
            await self._rule.read_config_back("the view did not read a change back in time", path=request.path)
        return answer


def changes_connectors(method: str, path: str) -> bool:
    """A write to Connect's connector resources (``/connectors...``, a query or not): what the view shows. A
    validation or a logger's level changes nothing a read of the view answers."""
    return method in WRITE_METHODS and (path.split("?", 1)[0] + "/").startswith("/connectors/")


def changed_connector(request: UpstreamRequest) -> str | None:
    """The connector a write request to ``/connectors/{c}/...`` changes (decoded), or the one a
    ``POST /connectors`` creates, else None."""
    if request.method not in WRITE_METHODS:
        return None
    parts = request.path.split("?", 1)[0].split("/")
    if parts == ["", "connectors"] and request.method == "POST":
        return created_connector(request.body)
    if len(parts) < 3 or parts[0] != "" or parts[1] != "connectors" or not parts[2]:
        return None
    return unquote(parts[2])


def created_connector(body: bytes) -> str | None:
    """The connector a ``POST /connectors`` creates: its name as ConnectorsResource.createConnector trims it
    (None when the body names none: the worker refuses it)."""
    try:
        parsed = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    name = parsed.get("name") if isinstance(parsed, dict) else None
    return name.strip() or None if isinstance(name, str) else None


__all__ = ["WRITE_METHODS", "Herder", "changed_connector", "changes_connectors"]
