"""The fence of a connector: one writer of it at a time among every sidecar of the cluster.

A lease in the sidecars' own topic (``view.fences`` holds the rule, ``codecs.fence`` the records): to write
a connector, a sidecar appends a claim and reads the topic back; when the rule names its claim the holder,
it holds the fence, renews the lease while it works (a claim under the same token, every third of the
lease) and appends a release at the end. Otherwise it waits until the holder releases or its lease is over,
and claims again. A sidecar that dies holding the fence blocks nobody beyond its lease.

Why a lease in Kafka, not Connect's own means:

- a transactional producer (KIP-618, as Connect's leader fences its config-topic writes) fences only what
  that producer writes, while most writes of a connector are made by a worker (a PUT, a resume, a native
  PATCH), which the sidecar cannot make transactional;
- forwarding every write to one elected sidecar (as Connect's followers forward to the leader) needs the
  sidecars to reach each other over HTTP, with their own credentials and TLS: a second network path.
  Kafka is the one thing every sidecar already reaches.

The holder checks its lease at the moment of the write (``Lease.ensure``): a sidecar stalled past its lease
(a pause, a partition from the brokers) finds it over and fails the write rather than make it under a fence
another sidecar may hold now.

When the topic cannot be written or read back (its replicas down, the broker slow, the topic refused at
start), a claim fails fast, bounded by the topic's own write bound and ``read_timeout_s``, with
``CoordinationUnavailable`` naming the cause: the caller decides (``writes.ConnectorWrites``) whether the
write goes on without the fence or is refused. A fence held by another sidecar is a different failure
(``OperationFailed``, after ``wait_s``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

import structlog

from ...background import cancel_and_wait
from ...codecs.fence import FenceClaim, FenceRelease, encode_fence
from ...storage.errors import ReadTimeout, describe_error
from ...upstream import REQUEST_DEADLINE
from ...view.fences import FenceHolder, FenceTable
from ...view.model import ClusterView
from ..errors import CoordinationUnavailable, OperationFailed

log = structlog.get_logger(__name__)

TAIL = "sidecars"
RENEWALS_PER_LEASE = 3
MARGIN = 0.2  # of the lease: a write starts only with this much of it left


def within_budget(wait_s: float) -> float:
    """``wait_s``, or what is left of the request's budget when less (``upstream.REQUEST_DEADLINE``): a
    write that waits for another's fence answers within the budget, as one that waits for a worker."""
    deadline = REQUEST_DEADLINE.get()
    if deadline is None:
        return wait_s
    return max(0.0, min(wait_s, deadline - asyncio.get_running_loop().time()))


class SidecarLog(Protocol):
    """Appends one record to the sidecars' topic (``storage.sidecar_topic.SidecarTopic``)."""

    async def write(self, key: bytes, value: bytes | None) -> None: ...


class FenceReader(Protocol):
    """The view's tail of the sidecars' topic (``view.MaterializedView``)."""

    @property
    def fences(self) -> FenceTable: ...

    def tail_error(self, topic: str) -> str | None: ...

    async def read_to_end(self, topic: str, timeout_s: float) -> None: ...

    async def wait_for(self, topic: str, condition: Callable[[ClusterView], bool], timeout_s: float) -> None: ...


@dataclass
class Lease:
    """A held fence: until when (this process's monotonic clock, from the send of the last claim the
    log accepted), and whether the log has named another holder since."""

    connector: str
    token: str
    until: float
    lost: str | None = None

    def ensure(self, failure: str) -> None:
        """Raises ``OperationFailed`` (``failure`` prefixes it) unless the lease is still held, with a margin."""
        if self.lost is not None:
            raise OperationFailed(f"{failure}: {self.lost}")
        if time.monotonic() > self.until:
            raise OperationFailed(f"{failure}: this sidecar's fence of connector {self.connector} ran out")


class ConnectorFence:
    def __init__(
        self,
        log_: SidecarLog,
        reader: FenceReader,
        *,
        sidecar: str,
        lease_s: float,
        wait_s: float,
        read_timeout_s: float,
        now_ms: Callable[[], float] = lambda: time.time() * 1000,
    ) -> None:
        self._log = log_
        self._reader = reader
        self.sidecar = sidecar
        self.lease_s = lease_s
        self.wait_s = wait_s
        self._read_timeout_s = read_timeout_s
        self._now_ms = now_ms
        self._releasing: set[asyncio.Task[None]] = set()

    def holders(self) -> list[FenceHolder]:
        return self._reader.fences.live(self._now_ms())

    @contextlib.asynccontextmanager
    async def held(self, connector: str) -> AsyncIterator[Lease]:
        """The fence of ``connector``, held for the block (``OperationFailed`` when it cannot be taken
        within ``wait_s``)."""
        lease = await self._take(connector)
        renewing = asyncio.create_task(self._renew(lease), name=f"fence-renewal-{connector}")
        try:
            yield lease
        finally:
            await cancel_and_wait(renewing)
            # given back behind the answer: the request does not wait for the release's write. A next
            # claim that lands before it is ignored and claims again once the release is read
            self._release_behind(lease)

    def _release_behind(self, lease: Lease) -> None:
        releasing = asyncio.create_task(self._release(lease), name=f"fence-release-{lease.connector}")
        self._releasing.add(releasing)
        releasing.add_done_callback(self._releasing.discard)

    async def stop(self) -> None:
        """At shutdown: the releases still on their way written (each bounded by the write path)."""
        if self._releasing:
            await asyncio.gather(*self._releasing, return_exceptions=True)

    async def _claim(self, connector: str, token: str) -> tuple[float, FenceHolder | None]:
        """Appends a claim and reads the topic back: when it was sent, and who holds the fence now."""
        sent = time.monotonic()
        claim = FenceClaim(connector, token, self.sidecar, round(self.lease_s * 1000))
        await self._append(claim, f"Cannot claim the fence of connector {connector}")
        await self._read(lambda: self._reader.read_to_end(TAIL, self._read_timeout_s), connector)
        return sent, self._reader.fences.holder(connector)

    async def _take(self, connector: str) -> Lease:
        token = uuid.uuid4().hex
        try:
            return await self._claimed(connector, token)
        except BaseException:
            # a claim of ours may have taken it (a cancelled request, an acknowledgement that came too
            # late): given back behind the failure, which does not wait for the release's own write
            self._release_behind(Lease(connector, token, 0.0))
            raise

    async def _claimed(self, connector: str, token: str) -> Lease:
        wait_s = within_budget(self.wait_s)
        deadline = time.monotonic() + wait_s
        while True:
            sent, holder = await self._claim(connector, token)
            if holder is not None and holder.token == token:
                return Lease(connector, token, sent + self.lease_s * (1 - MARGIN))
            left = deadline - time.monotonic()
            if left <= 0:
                held_by = f"held by sidecar {holder.sidecar}" if holder is not None else "not taken"
                raise OperationFailed(f"Cannot write connector {connector}: its fence was {held_by} for {wait_s:g}s")
            if holder is None:  # released between the claim and the read: claim again
                continue

            def changed(_: ClusterView, seen: FenceHolder = holder) -> bool:
                now = self._reader.fences.holder(connector)
                return now is None or now.token != seen.token or not now.live_at(self._now_ms())

            # the holder's lease ends at a time the log says: wait for that, or for the log to free it
            until_expiry = max(0.0, (holder.expires_ms - self._now_ms()) / 1000) + 0.01
            with contextlib.suppress(ReadTimeout):
                await self._reader.wait_for(TAIL, changed, min(left, until_expiry))

    async def confirm(self, lease: Lease, failure: str) -> None:
        """The sidecars' topic read to its end still names ``lease``'s claim the holder (its token: a claim
        of another sidecar that took over a lease this one thinks it holds is seen here, whatever the
        clocks say; the lease's own clock is ``Lease.ensure``'s); ``OperationFailed`` prefixed by ``failure``
        else."""
        try:
            await self._reader.read_to_end(TAIL, self._read_timeout_s)
        except ReadTimeout as err:
            raise OperationFailed(f"{failure}: cannot confirm this sidecar's fence: {err}") from err
        holder = self._reader.fences.holder(lease.connector)
        if holder is None or holder.token != lease.token:
            lease.lost = f"the fence of connector {lease.connector} is no longer this sidecar's" + (
                f" (held by sidecar {holder.sidecar})" if holder is not None and holder.token != lease.token else ""
            )
            raise OperationFailed(f"{failure}: {lease.lost}")
        lease.ensure(failure)

    async def _renew(self, lease: Lease) -> None:
        while True:
            await asyncio.sleep(self.lease_s / RENEWALS_PER_LEASE)
            try:
                sent, holder = await self._claim(lease.connector, lease.token)
            except OperationFailed as err:
                log.warning("renewing a fence failed", connector=lease.connector, error=str(err))
                continue  # the lease runs out by itself unless a later renewal lands
            if holder is None or holder.token != lease.token:
                lease.lost = (
                    f"sidecar {holder.sidecar if holder else '?'} took the fence of connector {lease.connector}"
                )
                log.error("a fence was lost", connector=lease.connector, holder=holder.sidecar if holder else None)
                return
            lease.until = sent + self.lease_s * (1 - MARGIN)

    async def _release(self, lease: Lease) -> None:
        try:
            await self._append(FenceRelease(lease.connector, lease.token), "")
        except OperationFailed as err:  # the lease runs out by itself
            log.warning("releasing a fence failed", connector=lease.connector, error=str(err))

    async def _append(self, record: FenceClaim | FenceRelease, failure: str) -> None:
        try:
            await self._log.write(*encode_fence(record))
        except Exception as err:
            raise CoordinationUnavailable(
                f"{failure}: the sidecars' topic cannot be written: {describe_error(err)}"
            ) from err

    async def _read(self, read: Callable[[], Awaitable[None]], connector: str) -> None:
        try:
            await read()
        except ReadTimeout as err:
            raise CoordinationUnavailable(
                f"Cannot claim the fence of connector {connector}: the sidecars' topic cannot be read back: {err}"
            ) from err


__all__ = ["ConnectorFence", "FenceReader", "Lease", "SidecarLog"]
