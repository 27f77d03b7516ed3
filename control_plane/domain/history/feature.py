"""``ConfigHistory``: the config history's one entry. Every change of every connector's config and target
state, kept once per cluster (``recorder``); a connector's versions, one version, the key-level diff of two,
and a rollback to a version (``kept``).

A rollback is an ordinary config write (``ConnectorConfigs.replace``: the same checks, the connector's
fence, and refused with a 409 when the config changed since the rollback read it). A secret of the version
is restored from the connector's current config when its mark says the current value is the version's; any
other must be supplied by the caller.

It needs the sidecars' topic, where the history is kept and each connector's fence is: a sidecar without it
(no view, or ``FENCE_ENABLED=false``) answers every request with a 501 that says so.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import ControlPlaneError, Unsupported
from ..outcomes import SIDECAR, Answer, Refusal, Relay, answer
from .kept import ConfigVersion, HistoryPage, KeptHistory, VersionDiff

NO_HISTORY = (
    "The config history needs the sidecars' topic (one sidecar of the cluster records it): this sidecar has "
    "no view or its fence is off (FENCE_ENABLED=false)"
)


class ConfigHistory:
    def __init__(self, kept: KeptHistory | None) -> None:
        """``kept``: None where the sidecar has no sidecars' topic or fence."""
        self._kept = kept

    def history(
        self, connector: str, *, limit: int | None = None, before: int | None = None
    ) -> Answer[HistoryPage] | Refusal:
        """``GET /_sidecar/connectors/{c}/history``: the versions kept, newest first, each with its diff; at most
        ``limit`` of them, older than version ``before`` (a page: ``next_before`` names the next one)."""
        return answer(lambda: self._history().history(connector, limit=limit, before=before))

    def version(self, connector: str, version: int) -> Answer[ConfigVersion] | Refusal:
        return answer(lambda: self._history().version(connector, version))

    def diff(self, connector: str, source: int, target: int | None) -> Answer[VersionDiff] | Refusal:
        """The changes from version ``source`` to ``target`` (None: the newest)."""
        return answer(lambda: self._history().diff(connector, source, target))

    async def rollback(self, connector: str, version: int, supplied: Mapping[str, str]) -> Refusal | Relay:
        """The connector's config back to version ``version``'s: the worker's answer to the write, or the
        refusal."""
        try:
            return await self._history().rollback(connector, version, supplied)
        except ControlPlaneError as err:
            return Refusal(err, SIDECAR)

    def _history(self) -> KeptHistory:
        if self._kept is None:
            raise Unsupported(NO_HISTORY)
        return self._kept


__all__ = ["NO_HISTORY", "ConfigHistory"]
