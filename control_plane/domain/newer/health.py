"""``GET /health`` (KIP-1017, Connect 3.9) on workers without it.

Connect 3.9+ (``RootResource.healthCheck``) puts a no-op request in its herder's queue and waits for it
for 10 s (``RestServer.DEFAULT_HEALTH_CHECK_TIMEOUT_MS``): answered, 200 "healthy"; not answered, 503
"starting" while the herder has not finished its first tick, else 500 "unhealthy" (``WorkerStatus``).

Older workers: the sidecar asks a worker for something its herder must answer, ``GET /connectors``
(``DistributedHerder.connectors`` runs in the herder's tick loop), with the same 10 s:

- any answer of the herder (200, a rebalance's 409, ...): 200 "healthy";
- 404: the worker's REST server is up but its resources are not there yet (``Connect.start`` starts the
  herder before ``RestServer.initializeResources``): 503 "starting";
- no answer in time: 503 "starting" when this worker's herder has not answered the sidecar since it last
  could not be reached or answered 404 (it is starting), else 500 "unhealthy".

Connect's answers add the stage the herder was in when it timed out; the sidecar cannot know it. A worker
that refuses connections is skipped for the next one; when none answers, Connect's 503 of the pass-through.
"""

from __future__ import annotations

from ...upstream import NoWorkerAvailable, UpstreamError, UpstreamRequest, UpstreamTimeout
from ..outcomes import Reply
from ..ports import Workers

HEALTHY = {"status": "healthy", "message": "Worker has completed startup and is ready to handle requests."}
STARTING = {"status": "starting", "message": "Worker is still starting up."}
UNHEALTHY = {
    "status": "unhealthy",
    "message": "Worker was unable to handle this request and may be unable to handle other requests.",
}
PROBE = UpstreamRequest("GET", "/connectors", headers=((b"accept", b"application/json"),))


class HealthCheck:
    def __init__(self, workers: Workers, timeout_s: float = 10.0) -> None:
        self._workers = workers
        self._timeout_s = timeout_s
        self._answered: set[str] = set()  # workers whose herder answered since they last were starting

    async def check(self) -> Reply:
        errors: list[UpstreamError] = []
        for worker in self._workers.workers:
            try:
                answer = await self._workers.send_to(worker, PROBE, self._timeout_s)
            except UpstreamTimeout:
                return Reply(500, UNHEALTHY) if worker in self._answered else Reply(503, STARTING)
            except UpstreamError as err:
                self._answered.discard(worker)
                errors.append(err)
                continue
            if answer.status == 404:
                self._answered.discard(worker)
                return Reply(503, STARTING)
            self._answered.add(worker)
            return Reply(200, HEALTHY)
        raise NoWorkerAvailable(errors)


__all__ = ["HEALTHY", "STARTING", "UNHEALTHY", "HealthCheck"]
