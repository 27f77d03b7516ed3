"""``PUT /connectors/{c}/stop`` (KIP-875) on workers without it (before 3.5), through the config topic.

Mirrors DistributedHerder.stopConnector: the connector must exist ("Unknown connector <c>", 404); the
empty set of task configs is written first (``commit-<c>`` = ``{"tasks":0}``), then the target state
``{"state":"PAUSED","state.v2":"STOPPED"}``. An old worker reads ``state``: it pauses the connector, and
the empty task set makes it shut the tasks down; newer workers read ``state.v2``. Stopping a stopped,
paused or failed connector writes the same two records again (idempotent). The view shows the result
once it has read the records back, which is how the write is confirmed; statuses of an emulated STOPPED
connector are shown as 3.5+ shows them (``ClusterView.connector_state(stopped_overlay=True)``).

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

A request that fails half-way says so: the task commit alone leaves a connector that is not STOPPED but
runs with no tasks until it generates them again, and the 500 says that repeating the request finishes
the stop.
"""

from __future__ import annotations

from urllib.parse import unquote

import structlog

from ...codecs import TargetState, TaskCommit
from ...storage.config_writer import ConfigWriteFailed
from ...storage.errors import ReadTimeout
from ...view import ClusterView
from ..errors import NotFoundError, OperationFailed, ViewNotReady
from ..ports import ClusterMetadata, ConfigLog, ViewSnapshot

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
        kafka: ClusterMetadata,
        read_back_timeout_s: float,
    ) -> None:
        self._view = view
        self._writer = writer
        self._kafka = kafka
        self.read_back_timeout_s = read_back_timeout_s

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
        log.info("connector stopped through the config topic", connector=name)


__all__ = [
    "RESTART_ATTEMPTS",
    "ConnectorStopper",
    "failed_and_stopped",
    "read_failure",
    "restart_refused",
    "resumed_connector",
    "unknown_connector",
]
