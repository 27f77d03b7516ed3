"""Pass-through with read-your-writes: a Connect REST request forwarded to a worker unchanged, and what
the sidecar does after a change a worker carried out."""

from __future__ import annotations

import structlog

from ..upstream import UpstreamRequest, UpstreamResponse
from .errors import OperationFailed
from .ports import Workers
from .read_rule import ReadRule
from .stop import RESTART_ATTEMPTS, restart_refused, resume_recreates, resumed_connector

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

        A resume of a connector the sidecar stopped after it had failed first restarts it on the worker, so
        that it runs again as on 3.5+ (``domain.stop``)."""
        recreate = self._recreated_on_resume(request)
        if recreate is not None:  # before the resume, while the worker's target state is PAUSED (domain.stop)
            await self._restart_before_resume(recreate)
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

    def _recreated_on_resume(self, request: UpstreamRequest) -> str | None:
        segment = resumed_connector(request.method, request.path)
        view = self._rule.view
        if segment is None or not self._rule.stop_emulated() or not self._rule.view_ready or view is None:
            return None
        return segment if resume_recreates(view.state, segment) else None


__all__ = ["WRITE_METHODS", "Forwarding"]
