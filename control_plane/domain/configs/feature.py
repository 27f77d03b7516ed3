"""Configuration writes: validate, create, update and PATCH, the sidecar's checks first
(``domain.connector_configs``) and the newer API on older workers (``domain.newer_api``), with
read-your-writes after a change the sidecar composed and a worker carried out."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from ..config_infos import ConfigInfos
from ..newer.feature import NewerApi
from ..outcomes import Answer, Forward, Refusal, Relay
from ..read_rule import ReadRule
from .connector_configs import Config, ConnectorConfigs
from .initial_state import InitialState, Unreadable

T = TypeVar("T")


class ConfigWrites:
    def __init__(self, rule: ReadRule, configs: ConnectorConfigs, newer: NewerApi) -> None:
        self._rule = rule
        self._configs = configs
        self._newer = newer

    async def validate_config(self, path: str, config: Config) -> Answer[ConfigInfos] | Refusal | Forward[ConfigInfos]:
        checked = await self._configs.validate(path, config)
        return checked if isinstance(checked, Refusal) else await self._newer.validate_config(checked, config)

    async def create_connector(
        self,
        name: str | None,
        config: Config,
        body: Mapping[str, Any] | None = None,
        initial: InitialState | Unreadable | None = None,
    ) -> Refusal | Forward[None] | Relay:
        """``body``: the whole request as read (its ``initial_state``, KIP-980, read as ``initial``)."""
        return await self._written(await self._newer.create_connector(name, config, body or {}, initial))

    async def put_connector_config(self, name: str, config: Config) -> Refusal | Forward[None]:
        return await self._configs.update(name, config)

    async def patch_connector_config(
        self, name: str, patch: Config | None, raw: bytes = b""
    ) -> Refusal | Forward[None] | Relay:
        """``patch``: None when the body is not a map of strings (``raw``, the body as sent)."""
        return await self._written(await self._newer.patch_connector_config(name, patch, raw))

    async def _written(self, outcome: T) -> T:
        """Read-your-writes (as ``Forwarding.forward``) after a change the sidecar composed."""
        if isinstance(outcome, Relay) and 200 <= outcome.response.status < 300 and self._rule.view_ready:
            await self._rule.read_config_back("the view did not read a change back in time")
        return outcome


__all__ = ["ConfigWrites"]
