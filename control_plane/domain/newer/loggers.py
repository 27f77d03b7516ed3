"""Cluster-wide logger levels and ``last_modified`` (KIP-976, Connect 3.7) on workers without them.

Connect 3.7+ answers ``PUT /admin/loggers/{logger}?scope=cluster`` (the scope read case-insensitively;
any other scope is a worker's own) with 204 once the level is in the config topic, and every worker applies
it (``LoggingResource.setLevel``); its ``GET /admin/loggers`` and ``GET /admin/loggers/{logger}`` show
each level's ``last_modified``: when this worker's level was last set through the REST API, null if never.

Older workers have only the worker scope. Here the sidecar sets the level on every worker it knows
(``connect_urls``), one after the other, and reads it back from each (``GET /admin/loggers/{logger}``)
before it answers 204. The first worker checks the request as 3.7 does (400 without ``level``, 404 for an
unknown level, the same messages), before any worker has changed. A worker that fails leaves the level
set on the workers before it: the 500 names them. The sidecar remembers when it set which level on which
worker (in memory) and adds ``last_modified`` to the workers' answers: null for a level it did not set.
Not covered: workers the sidecar does not know, and workers that start later, do not get the level (3.7
keeps it in the config topic for them); a sidecar restart forgets its times (docs/features/newer-api.md).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

import orjson
import structlog

from ...upstream import UpstreamError, UpstreamRequest, UpstreamResponse
from ..connect_api import JSON_HEADERS
from ..errors import OperationFailed
from ..outcomes import Relay, Reply
from ..ports import Workers

log = structlog.get_logger(__name__)

CLUSTER_SCOPE = "cluster"


def is_cluster_scope(scope: str | None) -> bool:
    return scope is not None and scope.lower() == CLUSTER_SCOPE  # scope.toLowerCase(Locale.ROOT)


def _message(answer: UpstreamResponse) -> str:
    try:
        data = orjson.loads(answer.body)
    except orjson.JSONDecodeError:
        return answer.body.decode("utf-8", "replace")[:200]
    return str(data.get("message")) if isinstance(data, dict) else str(data)


class Loggers:
    def __init__(self, workers: Workers, *, timeout_s: float, clock: Callable[[], float] = time.time) -> None:
        """``timeout_s`` bounds each worker's answer."""
        self._workers = workers
        self._timeout_s = timeout_s
        self._clock = clock
        self._modified: dict[str, dict[str, int]] = {}  # worker -> logger -> epoch ms the sidecar set it

    def _record(self, worker: str, answer: UpstreamResponse) -> None:
        """A worker's answer to a level change: the loggers it changed (a JSON list)."""
        try:
            changed = orjson.loads(answer.body) if answer.status == 200 else None
        except orjson.JSONDecodeError:
            return
        if isinstance(changed, list):
            now = int(self._clock() * 1000)
            self._modified.setdefault(worker, {}).update({str(name): now for name in changed})

    async def set_cluster_level(self, path: str, body: bytes) -> Relay | Reply:
        """``path``: ``/admin/loggers/{logger}`` as the client sent it; ``body``: the client's."""
        done: list[str] = []
        level = None
        for worker in self._workers.workers:
            request = UpstreamRequest("PUT", path, headers=JSON_HEADERS, body=body)
            try:
                answer = await self._workers.send_to(worker, request, self._timeout_s)
            except UpstreamError as err:
                raise self._failed(path, done, worker, err.detail) from err
            if answer.status != 200:
                if not done:
                    return Relay(answer)  # the request's own fault (no level, an unknown one): 3.7's answer
                raise self._failed(path, done, worker, f"{answer.status} {_message(answer)}")
            self._record(worker, answer)
            done.append(worker)
            level = await self._level(worker, path)
        expected = level
        for worker in done:  # every worker shows the same level, read back after the last change
            shown = await self._level(worker, path)
            if shown != expected:
                raise OperationFailed(
                    f"The level of logger {path.rsplit('/', 1)[-1]} was set on every worker, but worker {worker} "
                    f"shows {shown} where worker {done[-1]} shows {expected}"
                )
        log.info("logger level set on every worker", path=path, workers=len(done), level=expected)
        return Reply(204)

    async def set_worker_level(self, target: str, body: bytes) -> Relay:
        """A level change the sidecar read (``logger_requests``), sent with its own ``body`` to a worker;
        ``target``: the path and query as the client sent them. The worker's answer is passed on."""
        answer = await self._workers.forward(UpstreamRequest("PUT", target, headers=JSON_HEADERS, body=body))
        return Relay(self.recorded(answer))

    async def _level(self, worker: str, path: str) -> str | None:
        try:
            answer = await self._workers.send_to(
                worker, UpstreamRequest("GET", path, headers=JSON_HEADERS), self._timeout_s
            )
            data = orjson.loads(answer.body) if answer.status == 200 else None
        except (UpstreamError, orjson.JSONDecodeError) as err:
            raise OperationFailed(f"Cannot read the level of {path} back from worker {worker}: {err}") from err
        return data.get("level") if isinstance(data, dict) else None

    def _failed(self, path: str, done: list[str], worker: str, why: str) -> OperationFailed:
        logger = path.rsplit("/", 1)[-1]
        return OperationFailed(
            f"Setting the level of logger {logger} on every worker failed at worker {worker}: {why}. "
            f"It is set on {', '.join(done) if done else 'no worker'}; repeat the request to set it on all."
        )

    # -- the workers' own answers with 3.7's last_modified ------------------------------------------
    def recorded(self, answer: UpstreamResponse) -> UpstreamResponse:
        """A worker-scope change through the sidecar: its time remembered; the answer unchanged."""
        self._record(answer.worker, answer)
        return answer

    def with_last_modified_all(self, answer: UpstreamResponse) -> UpstreamResponse:
        """``GET /admin/loggers``: each logger's ``last_modified`` added."""
        data = self._json(answer)
        if not isinstance(data, dict):
            return answer
        times = self._modified.get(answer.worker, {})
        shaped = {
            name: {**entry, "last_modified": times.get(name)} if isinstance(entry, dict) else entry
            for name, entry in data.items()
        }
        return replace(answer, body=orjson.dumps(shaped))

    def with_last_modified(self, logger: str) -> Callable[[UpstreamResponse], UpstreamResponse]:
        """``GET /admin/loggers/{logger}``: its ``last_modified`` added."""

        def shape(answer: UpstreamResponse) -> UpstreamResponse:
            data = self._json(answer)
            if not isinstance(data, dict):
                return answer
            modified = self._modified.get(answer.worker, {}).get(logger)
            return replace(answer, body=orjson.dumps({**data, "last_modified": modified}))

        return shape

    @staticmethod
    def _json(answer: UpstreamResponse) -> object:
        if answer.status != 200:
            return None
        try:
            data: object = orjson.loads(answer.body)
        except orjson.JSONDecodeError:
            return None
        return data


__all__ = ["Loggers", "is_cluster_scope"]
