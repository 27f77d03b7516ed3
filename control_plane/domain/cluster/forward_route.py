"""Where a request passed through to the workers goes (``ForwardRoute.send``): to any worker of the cluster
(``Workers.forward``, with failover), except a ``POST /connectors`` during a rolling upgrade across
Connect 3.7, which goes to the leader itself.

A worker that is not the leader forwards a create to the leader (``ConnectorsResource.createConnector``,
through ``HerderRequestHandler.completeOrForwardRequest``) as the ``CreateConnectorRequest`` it read,
serialized again: a 3.7+ worker's has ``initial_state`` (KIP-980), null when the client sent none. A leader
before 3.7 refuses the field (Jackson: ``Unrecognized field "initial_state"``, a 500), so while the leader
is older than some workers, every create through a newer worker fails. KIP-980 specifies a create without
``initial_state`` as a create RUNNING: the sidecar sends such a create to the leader itself (the group
names it, ``membership``), whose own parser reads the client's request. Anywhere else a create goes to the
workers as any request does.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

import structlog

from ...upstream import UpstreamRequest, UpstreamResponse
from ..ports import Workers
from .membership import Membership
from .versions import Version, release

log = structlog.get_logger(__name__)

INITIAL_STATE_SINCE = Version.of("3.7.0")  # KIP-980: CreateConnectorRequest.initialState


def older_leader(membership: Membership) -> str | None:
    """The leader's URL when it predates ``initial_state`` and another live worker has it, else None."""
    leader = next((w for w in membership.workers if w.leader and w.url), None)
    its = release(leader.version) if leader is not None else None
    if leader is None or its is None or its >= INITIAL_STATE_SINCE:
        return None
    newer = (release(w.version) for w in membership.workers if w is not leader)
    return leader.url if any(v is not None and v >= INITIAL_STATE_SINCE for v in newer) else None


def straddles(versions: Mapping[str, str | None]) -> bool:
    """Whether the live workers' versions (URL -> version) are on both sides of ``initial_state``."""
    known = [v for v in map(release, versions.values()) if v is not None]
    return any(v < INITIAL_STATE_SINCE for v in known) and any(v >= INITIAL_STATE_SINCE for v in known)


class ForwardRoute:
    """``send``: a request to the workers, a create to an older leader directly (see the module docstring).
    ``group``: the group's members read within a bound (None: the group is not known, creates go as any
    request);
    ``versions``: the live workers' versions as the capabilities last decided from them (the group is read
    for its leader only while they straddle ``initial_state``)."""

    def __init__(
        self,
        workers: Workers,
        group: Callable[[float], Awaitable[Membership | None]] | None,
        versions: Callable[[], Mapping[str, str | None]] = dict,
        *,
        timeout_s: float = 2.0,
    ) -> None:
        self._workers = workers
        self._group = group
        self._versions = versions
        self._timeout_s = timeout_s

    async def send(self, request: UpstreamRequest) -> UpstreamResponse:
        if (
            self._group is None
            or request.method != "POST"
            or request.path.rstrip("/") != "/connectors"
            or not straddles(self._versions())
        ):
            return await self._workers.forward(request)
        read = await self._group(self._timeout_s)
        leader = older_leader(read) if read is not None else None  # not read in time: as any request
        if leader is None:
            return await self._workers.forward(request)
        log.info("create sent to the leader, older than KIP-980", leader=leader)
        return await self._workers.send_to(leader, request)


__all__ = ["INITIAL_STATE_SINCE", "ForwardRoute", "older_leader", "straddles"]
