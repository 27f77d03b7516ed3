"""The REST API of newer Connect releases, on every worker version: where the workers have a feature the
request goes through; where they lack it the sidecar does it (one module per feature, named below) or
reshapes the workers' answers into the newest release's shape. The herder delegates here.

| feature (capabilities.Feature)  | release | the sidecar on older workers            |
|---------------------------------|---------|-----------------------------------------|
| INITIAL_STATE (KIP-980)         | 3.7     | ``initial_state.ConnectorCreation``     |
| LOGGER_CLUSTER_SCOPE (KIP-976)  | 3.7     | ``loggers.Loggers``                     |
| LOGGER_LEVELS (log4j 2)         | 4.0     | ``logger_requests.requested_level``     |
| PATCH_CONFIG (KIP-477)          | 3.8     | ``connector_configs.ConnectorConfigs``  |
| HEALTH (KIP-1017)               | 3.9     | ``health.HealthCheck``                  |
| ORDER_IN_GROUP                  | 4.2     | ``definitions``                         |
| VALIDATE_UNRESOLVED             | 4.4     | ``unresolved``                          |
| ``GET /`` version               |         | ``api_version.effective_version``       |
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import orjson

from ...upstream import UpstreamResponse
from ..api_version import effective_version
from ..capabilities import Capabilities, Feature, Mode
from ..config_infos import ConfigInfos
from ..configs.connector_configs import Config, ConnectorConfigs
from ..configs.initial_state import FIELD, ConnectorCreation, InitialState, Unreadable
from ..configs.unresolved import shown_as_given
from ..definitions import newest_plugin_config, newest_validation
from ..errors import ControlPlaneError, OperationFailed
from ..jackson import string_map_error
from ..outcomes import SIDECAR, Answer, Forward, Refusal, Relay, Reply, json_reshaped, reshaped
from .health import HealthCheck
from .logger_requests import level_body, requested_level
from .loggers import Loggers, is_cluster_scope


class NewerApi:
    def __init__(
        self,
        capabilities: Capabilities,
        configs: ConnectorConfigs,
        creation: ConnectorCreation,
        loggers: Loggers,
        health: HealthCheck,
        *,
        advertise_effective: bool = True,
    ) -> None:
        self.capabilities = capabilities
        self._configs = configs
        self._creation = creation
        self._loggers = loggers
        self._health = health
        self._advertise_effective = advertise_effective

    async def _emulated(self, feature: Feature) -> bool:
        return await self.capabilities.mode(feature) is Mode.EMULATED

    # -- POST /connectors with initial_state (KIP-980) ---------------------------------------------
    async def create_connector(
        self, name: str | None, config: Config, body: Mapping[str, Any], initial: InitialState | Unreadable | None
    ) -> Refusal | Forward[None] | Relay:
        if FIELD not in body or not await self._emulated(Feature.INITIAL_STATE):
            return await self._configs.create(name, config)
        if isinstance(initial, Unreadable):
            return Refusal(OperationFailed(initial.message), SIDECAR)  # Jackson's 500, as 3.7+ answers
        return await self._creation.create(body, config, initial or InitialState("RUNNING"))

    # -- PATCH /connectors/{c}/config (KIP-477) ----------------------------------------------------
    async def patch_connector_config(
        self, name: str, patch: Config | None, raw: bytes = b""
    ) -> Refusal | Forward[None] | Relay:
        """``patch``: None when the body is not a map of strings (``raw``: the body as sent)."""
        emulate = await self._emulated(Feature.PATCH_CONFIG)
        if patch is None:
            if not emulate:
                return Forward()  # the worker's own answer to the body
            unreadable = string_map_error(raw)
            if unreadable is not None:
                return Refusal(OperationFailed(unreadable), SIDECAR)  # Jackson's 500, as 3.8+ answers
        return await self._configs.patch(name, patch or {}, emulate=emulate)

    # -- loggers (KIP-976) -------------------------------------------------------------------------
    async def set_logger_level(
        self, path: str, body: bytes, scope: str | None, query: str = ""
    ) -> Forward[None] | Relay | Reply | Refusal:
        """``path``: without the query (``query``: as sent, without ``?``)."""
        cluster = await self._emulated(Feature.LOGGER_CLUSTER_SCOPE)
        if await self._emulated(Feature.LOGGER_LEVELS):  # the body read as 4.0+ reads it
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
        if not await self._emulated(Feature.LOGGER_CLUSTER_SCOPE):
            return Forward()
        return Forward(rewrite=reshaped(self._loggers.with_last_modified_all))

    async def logger_level(self, logger: str) -> Forward[None]:
        if not await self._emulated(Feature.LOGGER_CLUSTER_SCOPE):
            return Forward()
        return Forward(rewrite=reshaped(self._loggers.with_last_modified(logger)))

    # -- GET /health (KIP-1017) --------------------------------------------------------------------
    async def health(self) -> Forward[None] | Reply:
        if not await self._emulated(Feature.HEALTH):
            return Forward()
        return await self._health.check()

    # -- validate answers: order_in_group (4.2), values as given (4.4) ----------------------------
    async def validate_config(
        self, outcome: Answer[ConfigInfos] | Forward[ConfigInfos], config: Mapping[str, Any]
    ) -> Answer[ConfigInfos] | Forward[ConfigInfos]:
        """``config``: the configuration the request gave."""
        steps: list[Callable[[Any], Any]] = []
        if await self._emulated(Feature.ORDER_IN_GROUP):
            steps.append(newest_validation)
        if await self._emulated(Feature.VALIDATE_UNRESOLVED):
            steps.append(lambda infos: shown_as_given(infos, config))
        if not steps:
            return outcome

        def newest(infos: Any) -> Any:
            for step in steps:
                infos = step(infos)
            return infos

        if isinstance(outcome, Answer):
            return replace(outcome, value=newest(outcome.value))
        return replace(outcome, rewrite=json_reshaped(newest))

    async def plugin_config(self) -> Forward[None]:
        if not await self._emulated(Feature.ORDER_IN_GROUP):
            return Forward()
        return Forward(rewrite=json_reshaped(newest_plugin_config))

    # -- GET / -------------------------------------------------------------------------------------
    async def server_info(self) -> Forward[None]:
        if not self._advertise_effective:
            return Forward()
        return Forward(rewrite=reshaped(self._advertised))

    def advertised_version(self) -> str | None:
        """The version ``GET /`` shows: None for the worker's own (``advertised_version=worker``, or no
        worker reported its version yet)."""
        worker = self.capabilities.version
        if not self._advertise_effective or worker is None:
            return None
        return str(effective_version(worker, self.capabilities.decisions))

    def _advertised(self, answer: UpstreamResponse) -> UpstreamResponse:
        """The worker's ``GET /`` with the effective version (its ``commit`` and ``kafka_cluster_id`` kept)."""
        version = self.advertised_version()
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
