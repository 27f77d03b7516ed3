"""Pass-through with read-your-writes: a Connect REST request forwarded to a worker unchanged, and what
the sidecar does after a change a worker carried out."""

from __future__ import annotations

import time

import structlog

from ..storage.errors import ReadTimeout
from ..upstream import UpstreamRequest, UpstreamResponse
from .errors import OperationFailed
from .offsets.stop import RESTART_ATTEMPTS, failed_and_stopped, restart_refused, resumed_connector
from .ports import Workers
from .read_rule import ReadRule

log = structlog.get_logger(__name__)

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
TOPICS_RESET = "/topics/reset"


class Forwarding:
    def __init__(self, rule: ReadRule, workers: Workers) -> None:
        self._rule = rule
        self._workers = workers

    async def forward(self, request: UpstreamRequest) -> UpstreamResponse:
        """Pass a Connect REST request through to a worker of the cluster, unchanged.

        Read-your-writes: a worker answers a change of a connector (create, config, pause, resume, stop,
        delete) once the leader has written it to the config topic and read it back. When one succeeded,
        the view reads the config topic to its end before the answer goes back, so the client's next read
        through the view shows the change (bounded by ``read_your_writes_timeout_s``).

        A resume of a connector stopped after it had failed brings it back RUNNING, as KIP-875 specifies
        (``domain.stop``): where the sidecar stopped it, the old worker first restarts it; on 3.5+ the resume
        waits until the worker has applied the stop."""
        failed = self._failed_and_stopped(request)
        if failed is not None and self._rule.stop_emulated():
            await self._restart_before_resume(failed)  # while the worker's target state is PAUSED (domain.stop)
        elif failed is not None:
            await self._until_stop_applied(failed)
        answer = await self._workers.forward(request)
        if (
            request.method in WRITE_METHODS
            and 200 <= answer.status < 300
            and request.path.startswith("/connectors")
            and not request.path.endswith(TOPICS_RESET)  # a status-topic write, not a change of the config
            and self._rule.view_ready
        ):
            await self._rule.read_config_back("the view did not read a change back in time", path=request.path)
        return answer

    async def _restart_before_resume(self, segment: str) -> None:
        """Have the old worker create the connector anew, PAUSED; a 500 is sent again, up to
        ``RESTART_ATTEMPTS`` restarts: it is also the answer to a start pre-empted by the stop's PAUSED
        record (``domain.stop``)."""
        restart = UpstreamRequest("POST", f"/connectors/{segment}/restart")
        for attempt in range(1, RESTART_ATTEMPTS + 1):
            restarted = await self._workers.forward(restart)
            if 200 <= restarted.status < 300:
                log.info("failed connector restarted before its resume after an emulated stop", connector=segment)
                return
            if restarted.status != 500 or attempt == RESTART_ATTEMPTS:
                break
            log.info("restart before a resume answered 500; sent again", connector=segment, attempt=attempt)
        raise OperationFailed(restart_refused(segment, restarted.status, restarted.body.decode(errors="replace")))

    async def _until_stop_applied(self, segment: str) -> None:
        """Until the worker shows the connector STOPPED (its herder applied the stop), bounded by
        ``read_your_writes_timeout_s``; the resume goes to the worker either way (``domain.stop``)."""
        view = self._rule.view
        assert view is not None  # _failed_and_stopped
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

    def _failed_and_stopped(self, request: UpstreamRequest) -> str | None:
        segment = resumed_connector(request.method, request.path)
        view = self._rule.view
        if segment is None or not self._rule.view_ready or view is None:
            return None
        return segment if failed_and_stopped(view.state, segment) else None


__all__ = ["WRITE_METHODS", "Forwarding"]
