"""``POST /connectors/{c}/restart?includeTasks=&onlyFailed=`` (KIP-745, Connect 3.0) on older workers,
composed of the restart endpoints they have: ``POST /connectors/{c}/restart`` (the connector instance)
and ``POST /connectors/{c}/tasks/{t}/restart`` (one task).

Mirrors Connect 4.3.1: ``RestartRequest`` (which instances a request restarts), ``AbstractHerder.
buildRestartPlan`` (the answer: the connector's status with every instance to restart shown RESTARTING)
and ``DistributedHerder.restartConnectorAndTasks`` (404 ``Unknown connector: <c>`` when the config topic
does not have it, 404 ``Status for connector <c> not found`` when the status topic does not). Without
either option (``forceRestartConnectorOnly``) the request is the old one, which every worker serves (204).

Where a 3.0+ worker writes the request to its config topic and restarts in the background, the sidecar
restarts synchronously: the connector first, then each task, as ``doRestartConnectorAndTasks`` orders
them; a restart the worker refuses is answered with the worker's own error (say, a rebalance 409 that
outlasted the retries) and the restarts after it are not sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from urllib.parse import quote

from ...upstream import UpstreamRequest
from ...view import ConnectorStateView, StateEntry
from ..errors import WorkerRefused
from ..ports import Workers

RESTARTING = "RESTARTING"
FAILED = "FAILED"


@dataclass(frozen=True)
class RestartRequest:
    """Connect's RestartRequest."""

    connector: str
    only_failed: bool
    include_tasks: bool

    @property
    def connector_only(self) -> bool:
        """``forceRestartConnectorOnly``: the pre-3.0 restart (204, no body)."""
        return not self.only_failed and not self.include_tasks

    def restarts_connector(self, state: str) -> bool:
        return not self.only_failed or state == FAILED

    def restarts_task(self, state: str) -> bool:
        return self.include_tasks and (not self.only_failed or state == FAILED)


@dataclass(frozen=True)
class RestartPlan:
    """What ``buildRestartPlan`` answers: the status, RESTARTING where the request restarts."""

    status: ConnectorStateView

    @property
    def restarts_connector(self) -> bool:
        return self.status.connector.state == RESTARTING

    @property
    def tasks(self) -> tuple[int, ...]:
        return tuple(task for task, entry in self.status.tasks if entry.state == RESTARTING)


def _restarting(entry: StateEntry, restart: bool) -> StateEntry:
    return replace(entry, state=RESTARTING) if restart else entry


def restart_plan(request: RestartRequest, status: ConnectorStateView) -> RestartPlan:
    connector = _restarting(status.connector, request.restarts_connector(status.connector.state))
    tasks = tuple((task, _restarting(entry, request.restarts_task(entry.state))) for task, entry in status.tasks)
    return RestartPlan(replace(status, connector=connector, tasks=tasks))


class ConnectorRestarter:
    """Carries a plan out through the worker's own restart endpoints (``restart_instances``: the
    ``InstanceRestarts`` port, which auto-restart uses too)."""

    def __init__(self, workers: Workers) -> None:
        self._workers = workers

    async def restart(self, plan: RestartPlan) -> None:
        await self.restart_instances(plan.status.name, connector_instance=plan.restarts_connector, tasks=plan.tasks)

    async def restart_instances(self, connector: str, *, connector_instance: bool, tasks: Sequence[int]) -> None:
        base = f"/connectors/{quote(connector, safe='')}"
        paths = [f"{base}/restart"] if connector_instance else []
        paths += [f"{base}/tasks/{task}/restart" for task in tasks]
        for path in paths:
            answer = await self._workers.forward(UpstreamRequest("POST", path))
            if not 200 <= answer.status < 300:
                raise WorkerRefused.of(answer.status, answer.body)


__all__ = ["ConnectorRestarter", "RestartPlan", "RestartRequest", "restart_plan"]
