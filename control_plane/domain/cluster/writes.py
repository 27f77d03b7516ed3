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
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Protocol, TypeVar

import structlog

from ...storage.errors import ReadTimeout
from ...view import ClusterView
from ..errors import CoordinationUnavailable, OperationFailed
from ..ports import ClusterMetadata, ViewSnapshot
from .fence import ConnectorFence, Lease

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
        unfenced: UnfencedWrites | None = None,
    ) -> None:
        self._view = view
        self._unfenced = unfenced
        self._kafka = kafka
        self.read_back_timeout_s = read_back_timeout_s
        self.fence = fence
        self.attribution: Attribution | None = None  # set where the config history is kept
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}  # per connector: its lock, how many use it
        self._holders: dict[str, asyncio.Task[object] | None] = {}  # per connector: the task inside
        self._leases: dict[str, Lease] = {}  # per connector: the fence its writer holds

    @contextlib.asynccontextmanager
    async def serialized(self, name: str, *, native: bool = False) -> AsyncIterator[str | None]:
        """One write of ``name`` at a time through this sidecar. Reentrant within one task: a request that
        serializes several steps (a PATCH's read, check and write) makes its checked write inside. Yields
        None, or for a ``native`` write that goes on without its fence, the warning that says so."""
        me = asyncio.current_task()
        if me is not None and self._holders.get(name) is me:
            yield None
            return
        lock, users = self._locks.get(name, (asyncio.Lock(), 0))
        self._locks[name] = (lock, users + 1)
        try:
            async with lock, self._fenced(name, native) as unfenced:
                self._holders[name] = me
                start = await self._attribution_start(name) if self.attribution is not None else None
                try:
                    yield unfenced
                    if start is not None:
                        await self._attribute(name, start)
                finally:
                    self._holders.pop(name, None)
        finally:
            lock, users = self._locks[name]
            if users == 1:
                del self._locks[name]
            else:
                self._locks[name] = (lock, users - 1)

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
            lease = self._leases.get(name)
            if lease is not None:
                lease.ensure(failure)
            return await write()


__all__ = ["Attribution", "ConnectorWrites", "Precondition", "UnfencedWrites", "read_failure"]
