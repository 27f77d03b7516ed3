"""The one step of every write the sidecar makes for a connector under a precondition (an emulated stop,
offsets alter and reset, PATCH, ``initial_state``): the precondition is checked at the moment of the
write, on the config topic read to its end, never before a wait.

Connect's leader is the model: ``DistributedHerder.modifyConnectorOffsets`` refreshes its config snapshot
and runs ``modifyConnectorOffsetsChecks`` (STOPPED, no tasks) in the same herder tick that starts the
write, and every other change of the connector (a resume, a delete, a new config) is a request of the same
queue, so none lands between the check and the write. Here:

- the writes of one connector through this sidecar run one at a time (``serialized``): the emulated ones,
  and the changes the herder passes through to a worker (a resume, a pause, a config, a delete), so a
  resume sent through this sidecar waits for an alter's write, or the alter sees it;
- inside, the config topic is read to its end (what the worker's own herder reads), the precondition is
  checked on what it holds, and the write is made (``checked``). Whatever a request waited for before
  (the tasks' last commits, a worker's answer) is behind it: a change in between is seen here.

With several sidecars in front of one cluster, each write of a connector also holds the connector's fence
(``fence.ConnectorFence``, a lease in the sidecars' own topic) inside the sidecar's own serialization: one
writer of a connector at a time among them all, and the lease is checked again at the moment of the write.
Without the sidecars' topic (no Kafka settings) a sidecar serializes only its own writes.

A change written straight to a worker between the check and the write is not seen: the window is the
write's own time (milliseconds), where it was every wait before it.

When the fence cannot be claimed because the sidecars' own topic cannot be used (``CoordinationUnavailable``:
its replicas down, the broker slow, the topic refused), a write the workers do natively (``native=True``:
what the herder passes through) goes on without it, as it would with no sidecar in front: the block is told
why (``serialized`` yields the warning), and the unfenced write is counted (``UnfencedWrites``). Any other
write (the sidecar's own emulations) fails with that error, a 503 that names the cause.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Protocol, TypeVar

import structlog

from ...background import cancel_and_wait
from ...storage.errors import ReadTimeout
from ...upstream import UpstreamError, UpstreamTimeout, WorkerDisconnected
from ...view import ClusterView
from ..errors import CoordinationUnavailable, OperationFailed, OutcomeUnknown
from ..ports import ClusterMetadata, ViewSnapshot
from .fence import ConnectorFence, Lease, within_budget
from .outcome import OutcomeBarrier, unknown_outcome

log = structlog.get_logger(__name__)

T = TypeVar("T")


class Attribution(Protocol):
    """Who made the changes a write put in the config topic (``history.HistoryRecorder``)."""

    def position(self) -> int: ...

    async def attribute(self, connector: str, after: int) -> None: ...


class UnfencedWrites(Protocol):
    """Counts the native writes that went through without their fence (``metrics.Metrics``)."""

    def unfenced_write(self) -> None: ...


Precondition = Callable[[ClusterView], None]  # raises the domain error the request answers when it fails


async def read_failure(view: ViewSnapshot, tail: str, err: ReadTimeout, kafka: ClusterMetadata) -> str:
    """A read-to-end that did not finish, with its cause: the tail's own last error, or why Kafka
    cannot be reached now."""
    cause = view.tail_error(tail) or await kafka.unreachable()
    return f"{err}: {cause}" if cause else str(err)


class ConnectorWrites:
    def __init__(
        self,
        view: ViewSnapshot | None,
        kafka: ClusterMetadata,
        read_back_timeout_s: float,
        fence: ConnectorFence | None = None,
        barrier: OutcomeBarrier | None = None,
        wait_s: float | None = None,
        unfenced: UnfencedWrites | None = None,
    ) -> None:
        """``barrier``: when a write of unknown outcome can no longer land (None: not waited for);
        ``wait_s``: how long a write waits for this sidecar's other write of the connector (None: as long
        as it takes)."""
        self._view = view
        self._unfenced = unfenced
        self._kafka = kafka
        self.read_back_timeout_s = read_back_timeout_s
        self.fence = fence
        self.attribution: Attribution | None = None  # set where the config history is kept
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}  # per connector: its lock, how many use it
        self._holders: dict[str, asyncio.Task[object] | None] = {}  # per connector: the task inside
        self._leases: dict[str, Lease] = {}  # per connector: the fence its writer holds
        self.barrier = barrier
        self.wait_s = wait_s
        self._settled: dict[str, Callable[[], Awaitable[None]]] = {}  # per connector: run once a held write settles
        self._holding: set[asyncio.Task[None]] = set()  # writes of unknown outcome, holding their connector

    @contextlib.asynccontextmanager
    async def serialized(self, name: str, *, native: bool = False) -> AsyncIterator[str | None]:
        """One write of ``name`` at a time through this sidecar. Reentrant within one task: a request that
        serializes several steps (a PATCH's read, check and write) makes its checked write inside. Yields
        None, or for a ``native`` write that goes on without its fence, the warning that says so.

        A write the worker took and did not answer (``outcome.unknown_outcome``) keeps the lock and the fence
        after the block, until the worker can no longer apply it (``outcome.OutcomeBarrier``); the block's
        caller gets ``OutcomeUnknown`` at once."""
        me = asyncio.current_task()
        if me is not None and self._holders.get(name) is me:
            yield None
            return
        async with contextlib.AsyncExitStack() as held:
            lock = held.enter_context(self._using(name))
            await self._acquire(lock, name)
            held.callback(lock.release)
            unfenced = await held.enter_async_context(self._fenced(name, native))
            self._holders[name] = me
            held.callback(self._holders.pop, name, None)
            start = await self._attribution_start(name) if self.attribution is not None else None
            try:
                yield unfenced
            except BaseException as err:
                settled = self._settled.pop(name, None)
                worker = unknown_outcome(err)
                if worker is None or self.barrier is None:
                    raise
                self._holders.pop(name, None)
                self._hold(name, worker, start, settled, held.pop_all())
                if isinstance(err, asyncio.CancelledError):
                    raise
                timed_out = not isinstance(err, WorkerDisconnected)
                raise OutcomeUnknown(
                    f"{'Request timed out: ' if timed_out else ''}{_failure(err)}; whether connector {name} was "
                    "changed is not known yet (this sidecar holds the connector's writes until the worker can no "
                    "longer change it)",
                    timed_out=timed_out,
                ) from err
            self._settled.pop(name, None)
            if start is not None:
                await self._attribute(name, start)

    def if_unknown(self, name: str, settled: Callable[[], Awaitable[None]]) -> None:
        """Inside ``serialized(name)``: ``settled`` runs, still holding the connector's writes, once the
        worker can no longer make a write of this block whose outcome is unknown."""
        self._settled[name] = settled

    def _hold(
        self,
        name: str,
        worker: str,
        start: int | None,
        settled: Callable[[], Awaitable[None]] | None,
        held: contextlib.AsyncExitStack,
    ) -> None:
        async def holding() -> None:
            async with held:
                assert self.barrier is not None
                if await self.barrier.settled(worker, name):
                    await self._landing(name, self.barrier.settle_s)
                    if settled is not None:
                        await settled()
                    if start is not None:
                        await self._attribute(name, start)

        task = asyncio.create_task(holding(), name=f"unknown-outcome-{name}")
        self._holding.add(task)
        task.add_done_callback(self._holding.discard)
        log.warning("a write's outcome is unknown: the connector's writes held", connector=name, worker=worker)

    async def _landing(self, name: str, settle_s: float) -> None:
        """A write the worker took may still be on its way once the worker answers again: Connect validates a
        config (``AbstractHerder.validateConnectorConfig``) off the herder's thread, then queues its write
        again. Waited for up to ``settle_s``: over at once when the config topic shows a change of ``name``."""
        view = self._view
        if view is None or settle_s <= 0 or not view.has_tail("config"):
            return
        try:
            await view.read_to_end("config", self.read_back_timeout_s)
            state = view.state
            before = (state.connector_config(name), state.target_state(name))
            await view.wait_for(
                "config", lambda now: (now.connector_config(name), now.target_state(name)) != before, settle_s
            )
        except ReadTimeout:
            return

    async def stop(self) -> None:
        """At shutdown: writes of unknown outcome no longer waited for (the fence's lease runs out)."""
        for task in list(self._holding):
            await cancel_and_wait(task)

    @contextlib.contextmanager
    def _using(self, name: str) -> Iterator[asyncio.Lock]:
        """The lock of ``name``, kept while anyone uses it (a held write of unknown outcome among them)."""
        lock, users = self._locks.get(name, (asyncio.Lock(), 0))
        self._locks[name] = (lock, users + 1)
        try:
            yield lock
        finally:
            lock, users = self._locks[name]
            if users == 1:
                del self._locks[name]
            else:
                self._locks[name] = (lock, users - 1)

    async def _acquire(self, lock: asyncio.Lock, name: str) -> None:
        if self.wait_s is None:
            await lock.acquire()
            return
        wait_s = within_budget(self.wait_s)
        try:
            async with asyncio.timeout(wait_s):
                await lock.acquire()
        except TimeoutError:
            raise OperationFailed(
                f"Cannot write connector {name}: another write of it through this sidecar did not end "
                f"within {wait_s:g}s"
            ) from None

    @contextlib.asynccontextmanager
    async def _fenced(self, name: str, native: bool) -> AsyncIterator[str | None]:
        if self.fence is None:
            yield None
            return
        async with contextlib.AsyncExitStack() as held:
            try:
                lease = await held.enter_async_context(self.fence.held(name))
            except CoordinationUnavailable as err:
                if not native:
                    raise
                log.warning("a native write goes through without its fence", connector=name, error=err.message)
                if self._unfenced is not None:
                    self._unfenced.unfenced_write()
                yield f"Written without the sidecars' fence of connector {name} ({err.message})"
                return
            self._leases[name] = lease
            try:
                yield None
            finally:
                self._leases.pop(name, None)

    async def _attribution_start(self, name: str) -> int | None:
        """Where the config topic ends as the write starts (read to its end: a change another sidecar made
        before this one took the fence is not this write's); None when it cannot be read (no author then)."""
        assert self.attribution is not None
        try:
            await self.read_to_end(f"Naming who changes connector {name}")
        except OperationFailed as err:
            log.warning("the author of a change will not be recorded", connector=name, error=str(err))
            return None
        return self.attribution.position()

    async def _attribute(self, name: str, start: int) -> None:
        """The request's changes of ``name`` named as its principal's, still under the fence: no other
        sidecar's write of ``name`` is among them. The write is done: a failure here is only logged."""
        assert self.attribution is not None
        try:
            await self.read_to_end(f"Naming who changed connector {name}")
            await self.attribution.attribute(name, start)
        except Exception as err:  # noqa: BLE001 - the history then shows the change without who
            log.warning("the author of a change was not recorded", connector=name, error=str(err))

    async def read_to_end(self, failure: str) -> ClusterView:
        """The config topic read to its end, as the worker's herder refreshes its snapshot; ``failure``
        prefixes the 500 when it cannot be."""
        view = self._view
        if view is None:
            raise OperationFailed(f"{failure}: the sidecar has no view of the config topic")
        try:
            await view.read_to_end("config", self.read_back_timeout_s)
        except ReadTimeout as err:
            raise OperationFailed(f"{failure}: {await read_failure(view, 'config', err, self._kafka)}") from err
        return view.state

    async def checked(
        self, name: str, precondition: Precondition, write: Callable[[], Awaitable[T]], *, failure: str
    ) -> T:
        """``write`` once ``precondition`` holds on the config topic read to its end, with no other write
        of ``name`` through this sidecar in between."""
        async with self.serialized(name):
            precondition(await self.read_to_end(failure))
            await self.confirm(name, failure)
            return await write()

    async def confirm(self, name: str, failure: str) -> None:
        """Inside ``serialized(name)``, right before a write the sidecar makes itself into Connect's topics:
        this sidecar's claim is still the fence's holder, as the sidecars' topic read to its end names it
        (the claim's token, not only the lease's clock); ``OperationFailed`` prefixed by ``failure`` else."""
        lease = self._leases.get(name)
        if lease is None or self.fence is None:
            return
        lease.ensure(failure)
        await self.fence.confirm(lease, failure)


def _failure(err: BaseException) -> str:
    if isinstance(err, UpstreamTimeout):
        return f"Kafka Connect worker {err.worker} did not answer in time: {err.detail}"
    if isinstance(err, UpstreamError):
        return f"Kafka Connect worker {err.worker} failed: {err.detail}"
    return str(err)


__all__ = ["Attribution", "ConnectorWrites", "Precondition", "UnfencedWrites", "read_failure"]
