"""``PUT /connectors/{c}/stop`` (KIP-875) on workers without it (before 3.5), through the config topic.

Mirrors DistributedHerder.stopConnector: the connector must exist ("Unknown connector <c>", 404), and two
records are written: the target state ``{"state":"PAUSED","state.v2":"STOPPED"}`` and the empty set of
task configs (``commit-<c>`` = ``{"tasks":0}``). An old worker reads ``state``: it pauses the connector, and
the empty task set makes it shut the tasks down; newer workers read ``state.v2``. Stopping a stopped,
paused or failed connector writes the same two records again (idempotent). The view shows the result
once it has read the records back, which is how the write is confirmed; statuses of an emulated STOPPED
connector are shown as 3.5+ shows them (``ClusterView.connector_state(stopped_overlay=True)``).

The target state comes first, where Connect's leader writes the empty task set first. The leader writes
both in its herder thread, between its own reconfigurations, and refuses task configs for a STOPPED
connector (DistributedHerder.writeTaskConfigs); the sidecar is serialized with no worker. A worker reads the
two records one at a time, and one that starts or reconfigures the connector between them
(a rebalance that moves it, a restart) works from what it has read so far:
- the empty task set alone, with the connector STARTED: it generates the connector's tasks again, they
  differ from none, and it writes them (DistributedHerder.reconfigureConnector writes changed configs only);
  a leader before 3.5 takes them, and so does a 3.5+ leader that has not read the target state yet. The
  STOPPED connector keeps a task config for good: a 3.5+ worker starts that task and shuts it down at once,
  and its status stays UNASSIGNED;
- the target state alone, with the connector's tasks: a 3.5+ worker skips the reconfiguration of a
  connector that is not STARTED, one before 3.5 starts it PAUSED without generating tasks, and a
  reconfiguration that still runs generates the task configs the connector already has: nothing is written.
A stop cut off between the two leaves the connector paused (STOPPED on 3.5+) with its task configs, where
Connect's order leaves it running without tasks until it generates them again: not stopped at all.

Resuming a stopped connector starts it again on 3.5+ (WorkerConnector.doStart from STOPPED), even one that
had failed before it was stopped (WorkerConnector.suspend lets a FAILED connector go to STOPPED). An old
worker only paused it, and its WorkerConnector stays FAILED ("Cannot transition connector to STARTED since
it has failed"): before the resume goes to the worker, the sidecar has it restart the connector
(DistributedHerder.restartConnector creates the connector anew, in its current target state: PAUSED,
answered once it is paused), and the resume then starts the new one, which is what brings it back RUNNING
as on 3.5+ (``failed_and_stopped``, ``resumed_connector``). The restart comes first because a restart after
the resume races the resume's target state: a 3.4 herder that creates the connector in PAUSED while the
STARTED record is on its way has the start pre-empted ("Could not begin changing connector state to
PAUSED ...") and answers the restart 500 although the connector starts. The same race runs the other way
when the resume closely follows the stop: a 3.4 herder that has read the stop's PAUSED record but not yet
applied it creates the connector STARTED, the PAUSED pre-empts the start ("Could not begin changing
connector state to STARTED ..."), and the restart answers 500 although it left a new connector, PAUSED.
Connect's answer is the same for a connector that cannot start ("Failed to start connector: <c>",
DistributedHerder.startConnector), so a restart answered 500 is sent again (``RESTART_ATTEMPTS`` in all):
the pre-empting PAUSED is applied by then, and the next restart creates the connector PAUSED and succeeds.
A restart the worker still refuses leaves the connector stopped, not resumed, and the 500 says so.

On 3.5+ the worker stops and resumes, and a resume that closely follows the stop of a failed connector is
lost there: a herder that reads the resume's STARTED before it applied the STOPPED applies only the latest
target state (DistributedHerder.processTargetStateChanges), and a FAILED WorkerConnector goes to STOPPED only,
never to STARTED, so the connector stays FAILED. The sidecar holds such a resume until the worker's status
shows the connector STOPPED (``failed_and_stopped`` no longer holds), bounded by
``read_your_writes_timeout_s``, then forwards it. A connector that failed before its WorkerConnector existed
(its plugin cannot be loaded, say) never shows STOPPED on 4.3.1: its resume waits out that bound.

The records are written at the moment the config topic, read to its end, still has the connector
(``cluster.writes``), and read back: a delete that raced the stop leaves no target state behind, and task
configs a leader before 3.5 writes after the empty set (a reconfiguration it started before it read the
stop) are replaced by the empty set again (``ConnectorStopper._confirm``).

A request that fails half-way says so: the target state alone leaves a connector paused with its task
configs (its offsets cannot be altered or reset), and the 500 says that repeating the request finishes the
stop.
"""

from __future__ import annotations

from urllib.parse import unquote

import structlog

from ...codecs import TargetState, TaskCommit, Tombstone
from ...codecs.config import ConfigKey, ConfigKind
from ...storage.config_writer import ConfigWriteFailed
from ...view import ClusterView
from ..cluster.writes import ConnectorWrites
from ..errors import NotFoundError, OperationFailed, ViewNotReady
from ..ports import ConfigLog, ViewSnapshot

log = structlog.get_logger(__name__)

VIEW_NEEDED = (
    "Stopping connectors on this Connect version needs the sidecar's view of the internal topics, which is {why}"
)


def unknown_connector(name: str) -> str:
    return f"Unknown connector {name}"  # DistributedHerder.stopConnector


# Reads back of an emulated stop that find late task configs and replace them (see ConnectorStopper._confirm).
LATE_TASKS_ATTEMPTS = 3

# Restarts sent before a resume of a connector stopped after it failed; a 500 is sent again (see above).
RESTART_ATTEMPTS = 3


def resumed_connector(method: str, path: str) -> str | None:
    """The connector of a ``PUT /connectors/{c}/resume`` (its path segment as sent, percent-encoded),
    else None."""
    parts = path.rstrip("/").split("/") if method == "PUT" else []
    if len(parts) == 4 and parts[0] == "" and parts[1] == "connectors" and parts[3] == "resume" and parts[2]:
        return parts[2]
    return None


def failed_and_stopped(state: ClusterView, segment: str) -> bool:
    """Whether this connector (its path segment) has the target state STOPPED while its worker's status of it
    is FAILED: an old worker, which the sidecar had pause it, keeps it FAILED (a resume needs a restart
    first); a 3.5+ worker shows it so until its herder applied the stop (a resume waits for that)."""
    name = unquote(segment)
    status = state.connector_statuses.get(name)
    return state.target_state(name) == "STOPPED" and status is not None and status.state == "FAILED"


def restart_refused(segment: str, status: int, body: str) -> str:
    return (
        f"Connector {unquote(segment)} was not resumed: it had failed before it was stopped, and the worker did not "
        f"restart it (POST /connectors/{segment}/restart answered {status}: {body[:300]}); it stays STOPPED until "
        "it is resumed again"
    )


class ConnectorStopper:
    def __init__(
        self,
        view: ViewSnapshot | None,
        writer: ConfigLog | None,
        writes: ConnectorWrites,
    ) -> None:
        self._view = view
        self._writer = writer
        self._writes = writes

    def _ready_view(self) -> ViewSnapshot:
        if self._view is None or self._writer is None:
            raise ViewNotReady(VIEW_NEEDED.format(why="not configured (no config.storage.topic, status.storage.topic)"))
        if not self._view.ready:
            raise ViewNotReady(VIEW_NEEDED.format(why="still reading the topics"))
        return self._view

    async def stop(self, name: str) -> None:
        """The two records written once the config topic, read to its end, has the connector (checked at
        the write, ``cluster.writes``), then read back (``_confirm``)."""
        self._ready_view()

        def exists(state: ClusterView) -> None:
            if state.connector_config(name) is None:
                raise NotFoundError(unknown_connector(name))

        async def write() -> None:
            await self._write_stop(name)
            await self._confirm(name)

        await self._writes.checked(
            name, exists, write, failure=f"Failed to stop connector {name}: cannot read the config topic"
        )
        log.info("connector stopped through the config topic", connector=name)

    async def _write_stop(self, name: str) -> None:
        assert self._writer is not None
        target, commit = TargetState.of(name, "STOPPED"), TaskCommit(name, 0)  # in this order: see the module
        try:
            await self._writer.write((target, commit))
        except ConfigWriteFailed as err:
            if not err.written:
                raise OperationFailed(
                    f"Failed to stop connector {name}: writing its STOPPED target state (target-state-{name}) to "
                    f"the config topic failed, nothing was written: {err.cause}"
                ) from err
            raise OperationFailed(
                f"Failed to stop connector {name}: its STOPPED target state (target-state-{name}) was written, but "
                f"writing its empty set of tasks (commit-{name}) failed: {err.cause.rstrip('.')}. The connector is "
                "not fully STOPPED: it is paused and keeps its task configs, so its offsets cannot be altered or "
                "reset. Repeat the request to stop it."
            ) from err

    async def _confirm(self, name: str) -> None:
        """The records read back. A delete that landed meanwhile leaves no target state behind (a later
        create of the name would start STOPPED): it is removed, as KafkaConfigBackingStore.removeConnectorConfig
        removes it, and the stop answers as if the delete came first. Task configs written after the empty
        set (a leader before 3.5 is not serialized with the sidecar: it still writes those of a
        reconfiguration it started before it read the stop) are replaced by the empty set again; the
        connector is paused there, so it generates no more."""
        assert self._writer is not None
        for attempt in range(1, LATE_TASKS_ATTEMPTS + 1):
            state = await self._writes.read_to_end(
                f"Connector {name}: the STOPPED target state and empty task set were written but not read back"
            )
            if state.connector_config(name) is None:
                await self._remove_target_state(name)
                raise NotFoundError(unknown_connector(name))
            tasks = state.task_counts.get(name, 0)
            if state.target_state(name) != "STOPPED" or (tasks and attempt == LATE_TASKS_ATTEMPTS):
                # read back, but something else was written after them (a resume, a new config): say so
                raise OperationFailed(
                    f"Connector {name}: the STOPPED target state and empty task set were written, but reading the "
                    f"config topic back shows target state {state.target_state(name)} and {tasks} tasks: another "
                    "request changed the connector meanwhile"
                )
            if not tasks:
                return
            log.info("task configs written after an emulated stop replaced by none", connector=name, tasks=tasks)
            await self._write_empty_tasks(name)

    async def _write_empty_tasks(self, name: str) -> None:
        assert self._writer is not None
        try:
            await self._writer.write((TaskCommit(name, 0),))
        except ConfigWriteFailed as err:
            raise OperationFailed(
                f"Failed to stop connector {name}: its target state is STOPPED, but task configs were written after "
                f"its empty set of tasks, and writing the empty set again failed: {err.cause.rstrip('.')}. Repeat "
                "the request to stop it."
            ) from err

    async def _remove_target_state(self, name: str) -> None:
        assert self._writer is not None
        try:
            await self._writer.write((Tombstone(ConfigKey(ConfigKind.TARGET_STATE, name)),))
        except ConfigWriteFailed as err:
            log.error("the target state of a connector deleted during its stop stays", connector=name, error=err.cause)


__all__ = [
    "RESTART_ATTEMPTS",
    "ConnectorStopper",
    "failed_and_stopped",
    "restart_refused",
    "resumed_connector",
    "unknown_connector",
]
