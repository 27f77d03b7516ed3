"""A write whose outcome is unknown: the worker took the request and did not answer (in time, or the
connection broke), so it may still apply it. Until it can no longer, the writer keeps the connector's fence
(``writes.ConnectorWrites``), or an abandoned write could land after another writer's acknowledged one.

When a worker can no longer apply it: Connect's ``DistributedHerder`` runs every change of a connector
(``putConnectorConfig``, ``deleteConnectorConfig``, the restarts, a follower's forwarding) as a request of
its herder's queue, in order (``DistributedHerderRequest.compareTo``: by due time, then sequence), and so
does ``connectorInfo`` (``GET /connectors/{c}``) on every release from 2.8 to 4.x. Once the worker answers
such a read sent after the unknown write, whatever it had queued before is done: the write landed (it is in
the config topic) or never will. A stalled worker's Jetty takes the requests waiting on its connections
in no set order once it runs again, so the read that counts is one sent after a first read was answered:
by then the write's own request, read from its connection when the worker woke, is in the queue ahead.
A config's write is queued twice, before and after its validation (``AbstractHerder
.validateConnectorConfig``, off the herder's thread): the writer waits ``settle_s`` more, or until the
config topic shows the connector changed (``writes.ConnectorWrites``).

A worker that refuses connections has no queue left (it died, or is a new process). A worker stalled past
``hold_s`` is given up on: the fence goes back and the write may still land after it (logged as an error;
Connect's own REST timeout is 90 s, ``ConnectResource.DEFAULT_REST_REQUEST_TIMEOUT_MS``).

A pause or resume on a worker is written to the config topic from the REST thread itself, not the herder's
queue: after a stall the worker runs on from where it stopped, and the queued read answers after it.
"""

from __future__ import annotations

import asyncio
import time
from urllib.parse import quote

import structlog

from ...upstream import (
    REQUEST_DEADLINE,
    ConnectionRefused,
    NoWorkerAvailable,
    UpstreamError,
    UpstreamRequest,
    UpstreamTimeout,
    WorkerDisconnected,
)
from ..ports import Workers

log = structlog.get_logger(__name__)

ANY_WORKER = ""


def unknown_outcome(err: BaseException) -> str | None:
    """The worker a failed write may still land on (``ANY_WORKER`` when it is not known which), or None when
    the failure says the write was not taken (refused connections, an answer) or ``err`` is not a write's
    failure at all."""
    if isinstance(err, UpstreamTimeout | WorkerDisconnected):
        return err.worker
    if isinstance(err, NoWorkerAvailable):
        taken = [e for e in err.errors if isinstance(e, UpstreamTimeout | WorkerDisconnected)]
        return taken[0].worker if len(taken) == 1 else ANY_WORKER if taken else None
    if isinstance(err, asyncio.CancelledError):  # the client went away: its request may have been sent
        return ANY_WORKER
    return None


class OutcomeBarrier:
    """``settled``: waits until a write of ``connector`` sent to ``worker`` can no longer land (see the
    module docstring); at most ``hold_s``."""

    def __init__(
        self,
        workers: Workers,
        *,
        hold_s: float,
        settle_s: float = 0.0,
        probe_timeout_s: float = 2.0,
        interval_s: float = 0.5,
    ) -> None:
        self._workers = workers
        self.hold_s = hold_s
        self.settle_s = settle_s  # after the worker answered: how long its write may still be on its way
        self._probe_timeout_s = probe_timeout_s
        self._interval_s = interval_s

    async def settled(self, worker: str, connector: str) -> bool:
        """True once each worker concerned answered a queued read (or refuses connections); False when
        ``hold_s`` ran out first."""
        token = REQUEST_DEADLINE.set(None)  # the hold's own bound, not the budget of the request that began it
        try:
            deadline = time.monotonic() + self.hold_s
            targets = [worker] if worker and worker in self._workers.workers else list(self._workers.workers)
            read = UpstreamRequest("GET", f"/connectors/{quote(connector, safe='')}")
            for target in targets:
                if not await self._answered(target, read, deadline):
                    log.error(
                        "a write whose outcome is unknown may still land: its worker did not answer in time",
                        connector=connector,
                        worker=target,
                        held_s=self.hold_s,
                    )
                    return False
            return True
        finally:
            REQUEST_DEADLINE.reset(token)

    async def _answered(self, worker: str, read: UpstreamRequest, deadline: float) -> bool:
        answered = 0
        while (left := deadline - time.monotonic()) > 0:
            try:
                await self._workers.send_to(worker, read, timeout_s=min(self._probe_timeout_s, left))
                answered += 1
                if answered == 2:  # any answer to a read sent once it answered: the queue got past the write
                    return True
                continue
            except ConnectionRefused:
                return True  # no process listening: nothing of its queue is left
            except UpstreamError:
                answered = 0  # stalled still, or the connection broke: asked again
            except Exception as err:  # noqa: BLE001 - no verdict: asked again until the bound
                log.warning("asking a worker whether a write settled failed", worker=worker, error=str(err))
            await asyncio.sleep(min(self._interval_s, max(0.0, deadline - time.monotonic())))
        return False


__all__ = ["ANY_WORKER", "OutcomeBarrier", "unknown_outcome"]
