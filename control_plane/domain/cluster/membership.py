"""Who is in the Connect cluster: every live worker, from the workers' own group (Connect's ``group.id``),
as a ``DescribeGroups`` answers it, and the leader; each worker's version from its ``GET /``.

Connect's own mechanism is the model: a worker joins the group with its advertised URL in its member
metadata, and the leader's assignment names the leader and its URL (``ConnectProtocol``,
``IncrementalCooperativeConnectProtocol``; ``codecs.connect_group``). What each worker runs is not read
from the assignment: with the incremental cooperative protocols it holds only what the last rebalance
changed. Each worker's installed plugins are shown where a live sidecar in front of it reports them
(``plugins.workers``, through the sidecars' topic): null for a worker no sidecar is in front of. A worker
that leaves is out of the group once it has left or its session timed out (``session.timeout.ms``), so the
answer forgets it within that bound; it is read again at most every ``refresh_s``. The capabilities are
decided from these members' versions (``live_workers``), so that every sidecar of the cluster decides the
same.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

import orjson

from ...codecs.connect_group import GroupRecordError, decode_assignment, decode_metadata
from ...codecs.worker_plugins import InstalledOnWorker
from ...storage.consumer_groups import GroupDescription, GroupMember
from ...storage.errors import GroupOperationError
from ...upstream import UpstreamError, UpstreamRequest
from ...view.fences import FenceHolder
from ...view.sidecars import KnownSidecar
from ..ports import WorkerGroup, Workers
from .fence import ConnectorFence
from .presence import Presence
from .versions import LiveWorkers

CONNECT_PROTOCOL_TYPE = "connect"  # ConnectProtocol: the workers' group protocol type


@dataclass(frozen=True)
class ClusterWorker:
    member_id: str
    url: str  # its advertised REST URL, without the trailing slash
    host: str  # the address the broker sees it from
    config_offset: int  # the config-topic offset it has read, as it joined
    leader: bool
    version: str | None  # its GET /; None when it did not answer


@dataclass(frozen=True)
class Membership:
    group: str
    state: str
    protocol: str
    leader_url: str | None
    workers: tuple[ClusterWorker, ...]
    read_at: float  # time.time() of the DescribeGroups
    error: str | None = None  # why the group could not be read (then no workers)
    sidecar: str | None = None  # how this sidecar names itself in the sidecars' topic
    fences: tuple[FenceHolder, ...] = ()  # the connectors' fences held now, as the sidecars' topic says
    sidecars: tuple[KnownSidecar, ...] = ()  # the live sidecars of the cluster, as their presence says
    # the least wait between a write and its answer among them (``domain.read_rule``'s window), if known
    least_write_wait_s: float | None = None
    # each worker's installed plugins where a live sidecar in front of it reports them, by worker id
    plugins: Mapping[str, InstalledOnWorker] = field(default_factory=dict)


class ClusterMembership:
    def __init__(
        self,
        groups: WorkerGroup,
        workers: Workers,
        group_id: str,
        *,
        version_timeout_s: float,
        refresh_s: float = 1.0,
        clock: Callable[[], float] = time.time,
        fence: ConnectorFence | None = None,
        presence: Presence | None = None,
        plugins: Callable[[], Mapping[str, InstalledOnWorker]] | None = None,
    ) -> None:
        self._plugins = plugins
        self._fence = fence
        self._presence = presence
        self._groups = groups
        self._workers = workers
        self._group_id = group_id
        self._version_timeout_s = version_timeout_s
        self._refresh_s = refresh_s
        self._clock = clock
        self._last: Membership | None = None
        self._reading: asyncio.Lock = asyncio.Lock()
        self._pending: asyncio.Task[Membership] | None = None

    async def read(self) -> Membership:
        """The cluster's members, read at most every ``refresh_s`` (concurrent callers share one read), and
        the fences held now."""
        async with self._reading:
            last = self._last
            if last is None or self._clock() - last.read_at >= self._refresh_s:
                last = self._last = await self._read_now()
        if self._fence is not None:
            last = replace(last, sidecar=self._fence.sidecar, fences=tuple(self._fence.holders()))
        if self._presence is not None:
            presence = self._presence
            last = replace(last, sidecars=tuple(presence.live()), least_write_wait_s=presence.least_write_wait_s())
        if self._plugins is not None:
            last = replace(last, plugins=self._plugins())
        return last

    async def live_workers(self, timeout_s: float) -> LiveWorkers:
        """Every live member's version, as the capabilities read them (``versions.GroupVersions``): a
        member without a URL (none has one while the group rebalances) is named by its member id, its version
        unknown. Bounded by ``timeout_s``: Kafka's own bound on the read (twice its request timeout) would
        hold the first decision back as long."""
        read = await self.read_within(timeout_s)
        if read is None:
            return LiveWorkers(self._group_id, {}, f"DescribeGroups not answered within {timeout_s:g} s")
        return LiveWorkers(read.group, {w.url or w.member_id: w.version for w in read.workers}, read.error)

    async def read_within(self, timeout_s: float) -> Membership | None:
        """``read``, None when it does not answer within ``timeout_s``. The read itself is not cut short: it
        goes on (bounded by Kafka's own timeout) and the next caller shares it. A Kafka client cancelled
        in the middle of its bootstrap would leave its connection open."""
        if self._pending is None or self._pending.done():
            self._pending = asyncio.create_task(self.read(), name="group-read")
            self._pending.add_done_callback(_retrieved)
        try:
            async with asyncio.timeout(timeout_s):
                return await asyncio.shield(self._pending)
        except TimeoutError:
            return None

    async def stop(self) -> None:
        """At shutdown: a read still going on after its caller's bound is ended, its Kafka client closed
        (left to the loop's end, its connections would stay open). Its outcome is no one's: not raised."""
        pending = self._pending
        if pending is not None and not pending.done():
            pending.cancel()
            await asyncio.wait({pending})

    async def _read_now(self) -> Membership:
        read_at = self._clock()
        try:
            group = await self._groups.describe(self._group_id)
        except GroupOperationError as err:
            return Membership(self._group_id, "", "", None, (), read_at, str(err))
        if group.members and group.protocol_type != CONNECT_PROTOCOL_TYPE:
            error = f"group {self._group_id} is not a Connect cluster's (protocol type {group.protocol_type!r})"
            return Membership(self._group_id, group.state, group.protocol, None, (), read_at, error)
        return await self._members(group, read_at)

    async def _members(self, group: GroupDescription, read_at: float) -> Membership:
        joined = [_joined(member) for member in group.members]
        leaders = {j.leader: j.leader_url for j in joined if j.leader}
        leader_id, leader_url = next(iter(leaders.items()), (None, None))
        versions = await asyncio.gather(*(self._version(j.url) for j in joined))
        workers = tuple(
            ClusterWorker(j.member_id, j.url, j.host, j.config_offset, j.member_id == leader_id, version)
            for j, version in zip(joined, versions, strict=True)
        )
        return Membership(
            group.group, group.state, group.protocol, leader_url, tuple(sorted(workers, key=_by_url)), read_at
        )

    async def _version(self, url: str) -> str | None:
        if not url:
            return None
        try:
            answer = await self._workers.send_to(url, UpstreamRequest("GET", "/"), self._version_timeout_s)
        except UpstreamError:
            return None
        try:
            body = orjson.loads(answer.body) if answer.status == 200 else None
        except orjson.JSONDecodeError:
            return None
        version = body.get("version") if isinstance(body, dict) else None
        return version if isinstance(version, str) else None


@dataclass(frozen=True)
class _Joined:
    """One member as its group protocol bytes say: its own metadata, and the leader its assignment names
    (empty where the bytes are not Connect's)."""

    member_id: str
    host: str
    url: str
    config_offset: int
    leader: str
    leader_url: str


def _joined(member: GroupMember) -> _Joined:
    try:
        metadata = decode_metadata(member.metadata)
        url, offset = metadata.url.rstrip("/"), metadata.config_offset
    except GroupRecordError:
        url, offset = "", -1
    try:
        assignment = decode_assignment(member.assignment) if member.assignment else None
    except GroupRecordError:
        assignment = None
    leader, leader_url = (assignment.leader, assignment.leader_url.rstrip("/")) if assignment else ("", "")
    return _Joined(member.member_id, member.host.lstrip("/"), url, offset, leader, leader_url)


def _by_url(worker: ClusterWorker) -> str:
    return worker.url


def _retrieved(task: asyncio.Task[Membership]) -> None:
    if not task.cancelled():
        task.exception()  # a read nobody waited for to the end: its error is its callers' to see, or none


__all__ = ["ClusterMembership", "ClusterWorker", "Membership"]
