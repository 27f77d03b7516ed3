"""``PUT /connectors/{c}/stop`` (KIP-875) on workers without it (before 3.5), through the config topic.

Mirrors DistributedHerder.stopConnector: the connector must exist ("Unknown connector <c>", 404); the
empty set of task configs is written first (``commit-<c>`` = ``{"tasks":0}``), then the target state
``{"state":"PAUSED","state.v2":"STOPPED"}``. An old worker reads ``state``: it pauses the connector, and
the empty task set makes it shut the tasks down; newer workers read ``state.v2``. Stopping a stopped,
paused or failed connector writes the same two records again (idempotent). The view shows the result
once it has read the records back, which is how the write is confirmed; statuses of an emulated STOPPED
connector are shown as 3.5+ shows them (``ClusterView.connector_state(stopped_overlay=True)``).

A request that fails half-way says so: the task commit alone leaves a connector that is not STOPPED but
runs with no tasks until it generates them again, and the 500 says that repeating the request finishes
the stop.
"""

from __future__ import annotations

import structlog

from ..codecs import TargetState, TaskCommit
from ..storage.config_writer import ConfigWriteFailed
from ..storage.errors import ReadTimeout
from ..view import ClusterView
from .errors import NotFoundError, OperationFailed, ViewNotReady
from .ports import ClusterMetadata, ConfigLog, ViewSnapshot

log = structlog.get_logger(__name__)

VIEW_NEEDED = (
    "Stopping connectors on this Connect version needs the sidecar's view of the internal topics, which is {why}"
)


def unknown_connector(name: str) -> str:
    return f"Unknown connector {name}"  # DistributedHerder.stopConnector


async def read_failure(view: ViewSnapshot, tail: str, err: ReadTimeout, kafka: ClusterMetadata) -> str:
    """A read-to-end that did not finish, with its cause: the tail's own last error, or why Kafka
    cannot be reached now."""
    cause = view.tail_error(tail) or await kafka.unreachable()
    return f"{err}: {cause}" if cause else str(err)


# task states of a task that may still produce records and commit offsets (AbstractStatus.State)
ACTIVE_TASK_STATES = frozenset({"RUNNING", "PAUSED", "RESTARTING"})


def active_tasks(state: ClusterView, name: str) -> list[int]:
    """The tasks of ``name`` the status topic still shows active."""
    return sorted(t for t, s in state.task_statuses.get(name, {}).items() if s.state in ACTIVE_TASK_STATES)


async def tasks_stopped(view: ViewSnapshot, name: str, timeout_s: float) -> list[int]:
    """Wait until the tasks of a connector whose task set is empty have stopped, and their last offset
    commits are readable; returns the tasks still active when ``timeout_s`` ran out (empty: all stopped).

    What a worker does when its tasks go (3.4 and later): a source task's last offset commit is
    acknowledged before the task reports its shutdown (AbstractWorkerSourceTask.execute ends with
    ``finalOffsetCommit``; WorkerTask.run then ``onShutdown``: UNASSIGNED through ``putSafe``), and after the
    rebalance the leader deletes the statuses of tasks no longer configured
    (DistributedHerder.updateDeletedTaskStatus). So once no task shows active, reading the offsets topic to
    its end reads every offset the tasks will ever commit: a new offset written after that is not
    overwritten by a task's last commit, as on a native worker, where the offsets request waits behind
    the rebalance that shut the tasks down."""
    try:
        await view.wait_for("status", lambda state: not active_tasks(state, name), timeout_s)
        if view.has_tail("offsets"):
            await view.read_to_end("offsets", timeout_s)
    except ReadTimeout:
        return active_tasks(view.state, name) or [-1]
    return []


def tasks_still_active(name: str, tasks: list[int], timeout_s: float) -> str:
    shown = ", ".join(str(t) for t in tasks if t >= 0) or "?"
    return (
        f"The tasks of connector {name} have not stopped within {timeout_s:g}s (still active in the status topic: "
        f"task {shown}), so their last offset commits could still overwrite new offsets"
    )


class ConnectorStopper:
    def __init__(
        self,
        view: ViewSnapshot | None,
        writer: ConfigLog | None,
        kafka: ClusterMetadata,
        read_back_timeout_s: float,
        task_stop_timeout_s: float,
    ) -> None:
        self._view = view
        self._writer = writer
        self._kafka = kafka
        self.read_back_timeout_s = read_back_timeout_s
        self.task_stop_timeout_s = task_stop_timeout_s

    def _ready_view(self) -> ViewSnapshot:
        if self._view is None or self._writer is None:
            raise ViewNotReady(VIEW_NEEDED.format(why="not configured (no config.storage.topic, status.storage.topic)"))
        if not self._view.ready:
            raise ViewNotReady(VIEW_NEEDED.format(why="still reading the topics"))
        return self._view

    async def stop(self, name: str) -> None:
        view = self._ready_view()
        assert self._writer is not None
        try:
            await view.read_to_end("config", self.read_back_timeout_s)  # the herder's refreshed snapshot
        except ReadTimeout as err:
            raise OperationFailed(
                f"Failed to stop connector {name}: cannot read the config topic: "
                f"{await read_failure(view, 'config', err, self._kafka)}"
            ) from err
        if view.state.connector_config(name) is None:
            raise NotFoundError(unknown_connector(name))
        commit, target = TaskCommit(name, 0), TargetState.of(name, "STOPPED")
        try:
            await self._writer.write((commit, target))
        except ConfigWriteFailed as err:
            if not err.written:
                raise OperationFailed(
                    f"Failed to stop connector {name}: writing its empty set of tasks (commit-{name}) to the config "
                    f"topic failed, nothing was written: {err.cause}"
                ) from err
            raise OperationFailed(
                f"Failed to stop connector {name}: its empty set of tasks (commit-{name}) was written, but writing "
                f"the STOPPED target state (target-state-{name}) failed: {err.cause.rstrip('.')}. The connector is "
                "not STOPPED: it keeps its target state and has no tasks until it generates them again. Repeat the "
                "request to stop it."
            ) from err
        try:
            await view.read_to_end("config", self.read_back_timeout_s)
        except ReadTimeout as err:
            raise OperationFailed(
                f"Connector {name}: the STOPPED target state and empty task set were written but not read back: "
                f"{await read_failure(view, 'config', err, self._kafka)}"
            ) from err
        state = view.state
        if state.target_state(name) != "STOPPED" or state.task_counts.get(name, 0) != 0:
            # read back, but something else was written after them (a resume, a new config): say so
            raise OperationFailed(
                f"Connector {name}: the STOPPED target state and empty task set were written, but reading the config "
                f"topic back shows target state {state.target_state(name)} and "
                f"{state.task_counts.get(name, 0)} tasks: another request changed the connector meanwhile"
            )
        # acknowledged means done: the 204 comes once the tasks are down and their last commits readable
        still = await tasks_stopped(view, name, self.task_stop_timeout_s)
        if still:
            raise OperationFailed(
                f"Connector {name} is STOPPED (its empty task set and STOPPED target state are in the config "
                f"topic), but: {tasks_still_active(name, still, self.task_stop_timeout_s)}. Repeat the request "
                "to wait for them again."
            )
        log.info("connector stopped through the config topic", connector=name)


__all__ = [
    "ACTIVE_TASK_STATES",
    "ConnectorStopper",
    "active_tasks",
    "read_failure",
    "tasks_still_active",
    "tasks_stopped",
    "unknown_connector",
]
