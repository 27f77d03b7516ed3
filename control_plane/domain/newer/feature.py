"""``NewerApi``: the newer-API feature's one entry: REST endpoints of newer Connect releases on every
worker version. Where the workers have a feature the request goes through; where they lack it the sidecar
does it (the module named below) or reshapes the workers' answers into the newest release's shape.

| feature (capabilities.Feature)  | release | the sidecar on older workers            |
|---------------------------------|---------|-----------------------------------------|
| RESTART_OPTIONS (KIP-745)       | 3.0     | ``restart.ConnectorRestarter``          |
| LOGGER_CLUSTER_SCOPE (KIP-976)  | 3.7     | ``loggers.Loggers``                     |
| LOGGER_LEVELS (log4j 2)         | 4.0     | ``logger_requests.requested_level``     |
| HEALTH (KIP-1017)               | 3.9     | ``health.HealthCheck``                  |
| ``GET /`` version               |         | ``domain.api_version``                  |

The newer releases' configuration endpoints (``initial_state``, PATCH, the validate answer's shape) are
the ``configs`` feature's; their plugin endpoints (KIP-769, KIP-891) the ``plugins`` feature's.
"""

from __future__ import annotations

from dataclasses import replace

import orjson

from ...upstream import UpstreamResponse
from ...view import ConnectorStateView
from ..api_version import advertised_version
from ..capabilities import Feature
from ..errors import ControlPlaneError, NotFoundError, ViewNotReady
from ..outcomes import SIDECAR, Accepted, Forward, Refusal, Relay, Reply, reshaped
from ..read_rule import ReadRule
from .health import HealthCheck
from .logger_requests import level_body, requested_level
from .loggers import Loggers, is_cluster_scope
from .restart import RESTARTING, ConnectorRestarter, RestartRequest, restart_plan


class NewerApi:
    def __init__(
        self, rule: ReadRule, loggers: Loggers, health: HealthCheck, *, advertise_effective: bool = True
    ) -> None:
        self._rule = rule
        self._loggers = loggers
        self._health = health
        self._restarter = ConnectorRestarter(rule.workers)
        self._advertise_effective = advertise_effective

    # -- POST /connectors/{c}/restart?includeTasks=&onlyFailed= (KIP-745) ---------------------------
    async def restart(self, request: RestartRequest) -> Forward[ConnectorStateView] | Accepted[ConnectorStateView]:
        """The pre-3.0 request, or a worker that has the options, goes through; otherwise 202 with the plan
        (``newer.restart``), once the restarts are sent."""
        if request.connector_only:
            return Forward()
        if not await self._rule.emulates(Feature.RESTART_OPTIONS):
            if self._rule.stop_emulated():  # a worker that paused what the sidecar stopped (offsets.stop)
                return Forward(rewrite=reshaped(lambda answer: self._stopped_shown(request.connector, answer)))
            return Forward()
        view = self._rule.view
        if view is None or not view.ready:
            raise ViewNotReady("Restart options on this Connect version need the sidecar's view, which is not ready")
        # a connector just created elsewhere: the config topic read to its end, as the worker's leader has it
        await self._rule.read_config_back("the view did not reach the config topic's end")
        state = view.state
        name = request.connector
        if state.connector_config(name) is None:
            raise NotFoundError(f"Unknown connector: {name}")  # DistributedHerder.restartConnectorAndTasks
        status = state.connector_state(name, stopped_overlay=self._rule.stop_emulated())
        if status is None:
            raise NotFoundError(f"Status for connector {name} not found")
        plan = restart_plan(request, status)
        await self._restarter.restart(plan)
        return Accepted(plan.status)

    def _stopped_shown(self, name: str, answer: UpstreamResponse) -> UpstreamResponse:
        """A 3.0-3.4 worker's restart plan (202) of a connector the sidecar stopped, as 4.3.1 builds it
        (AbstractHerder.buildRestartPlan over the STOPPED status): STOPPED and no tasks, where the worker
        shows what it has (PAUSED, or RUNNING until it applies the stop); an instance it restarts stays
        RESTARTING. A stop not finished (task configs still there) keeps the worker's tasks, as its status
        shows them (``ClusterView.connector_state``)."""
        view = self._rule.view
        if answer.status != 202 or view is None or not view.ready or view.state.target_state(name) != "STOPPED":
            return answer
        try:
            plan = orjson.loads(answer.body)
        except orjson.JSONDecodeError:
            return answer
        connector = plan.get("connector") if isinstance(plan, dict) else None
        if not isinstance(connector, dict) or connector.get("state") == RESTARTING:
            return answer
        tasks = plan.get("tasks") if view.state.task_counts.get(name) else []
        shown = {**plan, "connector": {**connector, "state": "STOPPED"}, "tasks": tasks}
        return replace(answer, body=orjson.dumps(shown))

    # -- loggers (KIP-976; log4j 2's reading of a level from 4.0) ----------------------------------
    async def set_logger_level(
        self, path: str, body: bytes, scope: str | None, query: str = ""
    ) -> Forward[None] | Relay | Reply | Refusal:
        """``PUT /admin/loggers/{l}``. ``path``: without the query (``query``: as sent, without ``?``)."""
        cluster = await self._rule.emulates(Feature.LOGGER_CLUSTER_SCOPE)
        if await self._rule.emulates(Feature.LOGGER_LEVELS):  # the body read as 4.0+ reads it
            try:
                body = level_body(requested_level(body))
            except ControlPlaneError as err:
                return Refusal(err, SIDECAR)
            if not (cluster and is_cluster_scope(scope)):
                return await self._loggers.set_worker_level(f"{path}?{query}" if query else path, body)
        if not cluster:
            return Forward()
        if is_cluster_scope(scope):
            return await self._loggers.set_cluster_level(path, body)
        return Forward(rewrite=reshaped(self._loggers.recorded))

    async def logger_levels(self) -> Forward[None]:
        """``GET /admin/loggers``."""
        if not await self._rule.emulates(Feature.LOGGER_CLUSTER_SCOPE):
            return Forward()
        return Forward(rewrite=reshaped(self._loggers.with_last_modified_all))

    async def logger_level(self, logger: str) -> Forward[None]:
        """``GET /admin/loggers/{l}``."""
        if not await self._rule.emulates(Feature.LOGGER_CLUSTER_SCOPE):
            return Forward()
        return Forward(rewrite=reshaped(self._loggers.with_last_modified(logger)))

    # -- GET /health (KIP-1017) --------------------------------------------------------------------
    async def health(self) -> Forward[None] | Reply:
        if not await self._rule.emulates(Feature.HEALTH):
            return Forward()
        return await self._health.check()

    # -- GET / -------------------------------------------------------------------------------------
    async def server_info(self) -> Forward[None]:
        """The worker's answer with the version the sidecar advertises (``domain.api_version``)."""
        return Forward(rewrite=reshaped(self._advertised))

    def _advertised(self, answer: UpstreamResponse) -> UpstreamResponse:
        """The worker's ``GET /`` with the advertised version (its ``commit`` and ``kafka_cluster_id`` kept)."""
        version = advertised_version(self._rule.capabilities, effective=self._advertise_effective)
        if answer.status != 200 or version is None:
            return answer
        try:
            info = orjson.loads(answer.body)
        except orjson.JSONDecodeError:
            return answer
        if not isinstance(info, dict) or info.get("version") == version:
            return answer
        return replace(answer, body=orjson.dumps({**info, "version": version}))


__all__ = ["NewerApi"]
