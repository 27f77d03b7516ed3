"""When the tasks of a stopped connector can no longer commit offsets (emulated KIP-875).

On a native worker an offsets request waits in the herder's queue behind the rebalance that shuts the
connector's tasks down, and that rebalance waits for each task to stop, up to
``task.shutdown.graceful.timeout.ms`` (Worker.stopAndAwaitTasks): a task's last offset commit
(AbstractWorkerSourceTask.execute ends with ``finalOffsetCommit``) lands before the new offsets.

The sidecar sees the same from the topics. The status topic shows the tasks leaving: a task that stopped
reports UNASSIGNED after its last commit (WorkerTask.run, ``onShutdown``); the leader deletes the statuses of
tasks no longer configured as soon as the rebalance completes (DistributedHerder.updateDeletedTaskStatus),
which can be before the task has stopped. So an offsets request waits until no task of the connector is
active in the status topic, then, if a task status was deleted less than the worker's graceful shutdown
timeout ago, until that timeout has passed since (a task still stopping commits within it, or is abandoned
by its worker), then reads the offsets topic to its end.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from ...storage.errors import ReadTimeout
from ...view import ClusterView
from ..cluster.fence import within_budget
from ..errors import ConflictError
from ..ports import ViewSnapshot

# task states of a task that may still produce records and commit offsets (AbstractStatus.State)
ACTIVE_TASK_STATES = frozenset({"RUNNING", "PAUSED", "RESTARTING"})


def active_tasks(state: ClusterView, name: str) -> list[int]:
    """The tasks of ``name`` the status topic still shows active."""
    return sorted(t for t, s in state.task_statuses.get(name, {}).items() if s.state in ACTIVE_TASK_STATES)


def still_stopping(name: str, remaining_s: float) -> str:
    return (
        f"The tasks of connector {name} may still commit offsets for {remaining_s:.1f}s (their worker's "
        "task.shutdown.graceful.timeout.ms since their statuses were deleted), more than is left of this request's "
        "budget. Nothing was written; retry the request once that time has passed."
    )


def still_active(name: str, tasks: list[int], timeout_s: float) -> str:
    shown = ", ".join(map(str, tasks)) or "?"
    return (
        f"The tasks of connector {name} have not stopped within {round(timeout_s, 1):g}s (still active in the status "
        f"topic: task {shown}), so their last offset commits could still overwrite new offsets. Nothing was written; "
        "retry the request once they have stopped."
    )


class TaskShutdown:
    def __init__(
        self,
        view: ViewSnapshot,
        *,
        status_timeout_s: float,
        graceful_shutdown_s: float,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._view = view
        self._status_timeout_s = status_timeout_s
        self._graceful_s = graceful_shutdown_s
        self._clock = clock
        self._sleep = sleep

    async def wait(self, name: str) -> None:
        """Returns once the tasks of ``name`` cannot commit offsets any more and every offset they
        committed is readable; ``ConflictError`` when they are still active after ``status_timeout_s``.
        Returns at once when the connector is no longer STOPPED (a resume landed meanwhile): the check at
        the write answers that, as Connect does, rather than a wait for tasks that now run. Every wait ends
        within the request's budget (``within_budget``): a wait it would outlast is refused, nothing written."""
        view = self._view
        status_s = within_budget(self._status_timeout_s)

        def done(state: ClusterView) -> bool:
            return not active_tasks(state, name) or state.target_state(name) != "STOPPED"

        try:
            await view.wait_for("status", done, status_s)
        except ReadTimeout:
            raise ConflictError(still_active(name, active_tasks(view.state, name), status_s)) from None
        if view.state.target_state(name) != "STOPPED":
            return  # the check at the write refuses it
        deleted_ms = view.state.task_status_deleted_ms.get(name)
        if deleted_ms is not None:
            remaining = deleted_ms / 1000 + self._graceful_s - self._clock()
            remaining = min(remaining, self._graceful_s)
            if remaining > 0:  # a deadline the worker itself keeps, not a guess
                if remaining > within_budget(remaining):
                    raise ConflictError(still_stopping(name, remaining))
                await self._sleep(remaining)
        if view.has_tail("offsets"):
            try:
                await view.read_to_end("offsets", within_budget(self._status_timeout_s))
            except ReadTimeout as err:
                raise ConflictError(
                    f"Cannot read the offsets topic to its end before modifying offsets: {err}"
                ) from err


__all__ = ["ACTIVE_TASK_STATES", "TaskShutdown", "active_tasks", "still_active", "still_stopping"]
