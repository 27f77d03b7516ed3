"""``StopAndOffsets``: the offsets feature's one entry, where it is decided who stops a connector and who
reads, alters and resets its offsets (KIP-875): the workers where they can (stop and read from 3.5, alter
and reset from 3.6), the sidecar otherwise (``offsets.stop``, ``offsets.connector_offsets``). Where the
workers alter offsets, an alter request goes to them as it came, its bytes unread: the worker checks it, in
its order and with its words; where the sidecar alters them, it reads and checks the body as 4.3.1 does
(``offsets.request``).

And a resume of a connector stopped after it had failed, which KIP-875 brings back RUNNING
(``offsets.stop``): where the sidecar stopped it, the old worker first restarts it; on 3.5+ the resume
waits until the worker has applied the stop. The herder asks before it passes any request through
(``before_resume``).
"""

from __future__ import annotations

import time

import structlog

from ...storage.errors import ReadTimeout
from ...upstream import UpstreamRequest
from ..capabilities import Feature
from ..errors import OperationFailed
from ..outcomes import Answer, Done, Forward
from ..read_rule import ReadRule
from .connector_offsets import EmulatedOffsets, PartitionOffset
from .request import SinkOffsetsRefused, parse_alter_request
from .stop import RESTART_ATTEMPTS, ConnectorStopper, failed_and_stopped, restart_refused, resumed_connector

log = structlog.get_logger(__name__)


class StopAndOffsets:
    def __init__(self, rule: ReadRule, stopper: ConnectorStopper, offsets: EmulatedOffsets) -> None:
        self._rule = rule
        self._stopper = stopper
        self._offsets = offsets

    # -- PUT /connectors/{c}/stop, GET, PATCH and DELETE /connectors/{c}/offsets ----------------------
    async def stop(self, name: str) -> Forward[None] | Done:
        if not await self._rule.emulates(Feature.STOP_AND_OFFSETS_READ):
            return Forward()
        await self._stopper.stop(name)
        return Done()

    async def read(self, name: str) -> Answer[tuple[PartitionOffset, ...]] | Forward[tuple[PartitionOffset, ...]]:
        if not await self._rule.emulates(Feature.STOP_AND_OFFSETS_READ):
            return Forward()
        read = await self._offsets.read(name)
        warnings = tuple(
            f"source partition stored under {len(d.keys)} key encodings in {d.topic}; shown: the key its tasks look up"
            for d in read.duplicates
        )
        return Answer(read.offsets, warnings=warnings)

    async def alter(self, name: str, body: bytes) -> Answer[str] | Forward[str]:
        """``body`` as it came: forwarded unread where the workers alter offsets (ConnectorsResource reads
        it there); else read as Connect reads it, then the connector and its state, then the contents."""
        if not await self._rule.emulates(Feature.OFFSETS_ALTER_RESET):
            return Forward()
        entries = parse_alter_request(body)
        try:
            return Answer(await self._offsets.alter(name, entries))
        except SinkOffsetsRefused as refused:  # Worker.modifySinkConnectorOffsets: 500 naming the connector
            raise OperationFailed(refused.message(name)) from refused

    async def reset(self, name: str) -> Answer[str] | Forward[str]:
        if not await self._rule.emulates(Feature.OFFSETS_ALTER_RESET):
            return Forward()
        return Answer(await self._offsets.reset(name))

    # -- a resume of a connector stopped after it failed (passed through by the herder) ---------------
    async def before_resume(self, request: UpstreamRequest) -> None:
        """Before ``request`` goes to a worker: when it resumes a connector stopped after it had failed, where
        the sidecar stopped it, the old worker restarts it first; on 3.5+, the resume waits until the worker
        has applied the stop. Any other request: nothing."""
        segment = resumed_connector(request.method, request.path)
        view = self._rule.view
        if segment is None or not self._rule.view_ready or view is None or not failed_and_stopped(view.state, segment):
            return
        if self._rule.stop_emulated():
            await self._restart_before_resume(segment)  # while the worker's target state is PAUSED (offsets.stop)
        else:
            await self._until_stop_applied(segment)

    async def _restart_before_resume(self, segment: str) -> None:
        """Have the old worker create the connector anew, PAUSED; a 500 is sent again, up to
        ``RESTART_ATTEMPTS`` restarts: it is also the answer to a start pre-empted by the stop's PAUSED
        record (``offsets.stop``)."""
        restart = UpstreamRequest("POST", f"/connectors/{segment}/restart")
        workers = self._rule.workers
        for attempt in range(1, RESTART_ATTEMPTS + 1):
            restarted = await workers.forward(restart)
            if 200 <= restarted.status < 300:
                log.info("failed connector restarted before its resume after an emulated stop", connector=segment)
                return
            if restarted.status != 500 or attempt == RESTART_ATTEMPTS:
                break
            log.info("restart before a resume answered 500; sent again", connector=segment, attempt=attempt)
        raise OperationFailed(restart_refused(segment, restarted.status, restarted.body.decode(errors="replace")))

    async def _until_stop_applied(self, segment: str) -> None:
        """Until the worker shows the connector STOPPED (its herder applied the stop), bounded by
        ``read_your_writes_timeout_s``; the resume goes to the worker either way (``offsets.stop``)."""
        view = self._rule.view
        assert view is not None  # before_resume
        started = time.monotonic()
        try:
            await view.wait_for("status", lambda state: not failed_and_stopped(state, segment), self._rule.write_wait_s)
        except ReadTimeout:
            log.info("resume of a failed connector sent before its worker showed it STOPPED", connector=segment)
        else:
            waited_ms = round((time.monotonic() - started) * 1000, 1)
            log.info(
                "resume of a failed connector held until its worker showed it STOPPED",
                connector=segment,
                waited_ms=waited_ms,
            )


__all__ = ["StopAndOffsets"]
