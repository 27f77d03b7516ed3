"""``Configs``: the connector-configurations feature's one entry: validate, create, update and PATCH, the
sidecar's checks first (``configs.connector_configs``), read-your-writes after a change the sidecar
composed and a worker carried out. Where it is decided who does what of the newer releases' API:

| feature (capabilities.Feature)  | release | the sidecar on older workers            |
|---------------------------------|---------|-----------------------------------------|
| INITIAL_STATE (KIP-980)         | 3.7     | ``initial_state.ConnectorCreation``     |
| PATCH_CONFIG (KIP-477)          | 3.8     | ``connector_configs.ConnectorConfigs``  |
| ORDER_IN_GROUP                  | 4.2     | ``domain.definitions``                  |
| VALIDATE_UNRESOLVED             | 4.4     | ``unresolved``                          |
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, TypeVar

from ..capabilities import Feature
from ..config_infos import ConfigInfos
from ..connect_api import Config
from ..definitions import newest_validation
from ..errors import OperationFailed
from ..jackson import string_map_error
from ..outcomes import SIDECAR, Answer, Forward, Refusal, Relay, json_reshaped
from ..read_rule import ReadRule
from .connector_configs import ConnectorConfigs
from .initial_state import FIELD, ConnectorCreation, InitialState, Unreadable
from .unresolved import shown_as_given

T = TypeVar("T")


class Configs:
    def __init__(self, rule: ReadRule, configs: ConnectorConfigs, creation: ConnectorCreation) -> None:
        self._rule = rule
        self._configs = configs
        self._creation = creation

    # -- PUT /connector-plugins/{p}/config/validate ------------------------------------------------
    async def validate(self, path: str, config: Config) -> Answer[ConfigInfos] | Refusal | Forward[ConfigInfos]:
        """``path``: the validate path as the client sent it."""
        checked = await self._configs.validate(path, config)
        return checked if isinstance(checked, Refusal) else await self.in_newest_shape(checked, config)

    async def in_newest_shape(
        self, outcome: Answer[ConfigInfos] | Forward[ConfigInfos], config: Mapping[str, Any]
    ) -> Answer[ConfigInfos] | Forward[ConfigInfos]:
        """A validate answer in the newest release's shape: ``order_in_group`` (4.2), values given as config
        provider references shown as given (4.4). ``config``: the configuration the request gave."""
        steps: list[Callable[[Any], Any]] = []
        if await self._rule.emulates(Feature.ORDER_IN_GROUP):
            steps.append(newest_validation)
        if await self._rule.emulates(Feature.VALIDATE_UNRESOLVED):
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

    # -- POST /connectors, with initial_state (KIP-980) ------------------------------------------------
    async def create(
        self,
        name: str | None,
        config: Config,
        body: Mapping[str, Any] | None = None,
        initial: InitialState | Unreadable | None = None,
    ) -> Refusal | Forward[None] | Relay:
        """``body``: the whole request as read (its ``initial_state``, KIP-980, read as ``initial``)."""
        body = body or {}
        redact = await self._rule.emulates(Feature.VALIDATE_UNRESOLVED)
        if FIELD not in body or not await self._rule.emulates(Feature.INITIAL_STATE):
            return await self._configs.create(name, config, redact=redact)
        if isinstance(initial, Unreadable):
            return Refusal(OperationFailed(initial.message), SIDECAR)  # Jackson's 500, as 3.7+ answers
        return await self._written(await self._creation.create(body, config, initial or InitialState("RUNNING")))

    # -- PUT and PATCH /connectors/{c}/config (PATCH: KIP-477) -----------------------------------------
    async def put(self, name: str, config: Config) -> Refusal | Forward[None]:
        return await self._configs.update(name, config, redact=await self._rule.emulates(Feature.VALIDATE_UNRESOLVED))

    async def patch(self, name: str, patch: Config | None, raw: bytes = b"") -> Refusal | Forward[None] | Relay:
        """``patch``: None when the body is not a map of strings (``raw``, the body as sent)."""
        emulate = await self._rule.emulates(Feature.PATCH_CONFIG)
        if patch is None:
            if not emulate:
                return Forward()  # the worker's own answer to the body
            unreadable = string_map_error(raw)
            if unreadable is not None:
                return Refusal(OperationFailed(unreadable), SIDECAR)  # Jackson's 500, as 3.8+ answers
            # else no entity (an empty body, ``null``): the connector's 404, else 3.8+'s 500
        redact = await self._rule.emulates(Feature.VALIDATE_UNRESOLVED)
        return await self._written(await self._configs.patch(name, patch, emulate=emulate, redact=redact))

    async def _written(self, outcome: T) -> T:
        """Read-your-writes (as the herder's ``forward``) after a change the sidecar composed."""
        if isinstance(outcome, Relay) and 200 <= outcome.response.status < 300 and self._rule.view_ready:
            await self._rule.read_config_back("the view did not read a change back in time")
        return outcome


__all__ = ["Configs"]
