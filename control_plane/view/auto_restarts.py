"""The auto-restart choices and records of the sidecars' topic (``codecs.auto_restart``): per connector,
an operator's choice (enabled or not, over the settings) and what the sidecar that restarted it last did."""

from __future__ import annotations

from ..codecs.auto_restart import RestartPolicy, RestartState
from ..codecs.results import Tombstone


class AutoRestartTable:
    def __init__(self) -> None:
        self._policies: dict[str, bool] = {}
        self._states: dict[str, RestartState] = {}

    def apply_policy(self, record: RestartPolicy | Tombstone[str]) -> None:
        if isinstance(record, Tombstone):
            self._policies.pop(record.key, None)
        else:
            self._policies[record.connector] = record.enabled

    def apply_state(self, record: RestartState | Tombstone[str]) -> None:
        if isinstance(record, Tombstone):
            self._states.pop(record.key, None)
        else:
            self._states[record.connector] = record

    def policy(self, connector: str) -> bool | None:
        """An operator's choice for ``connector``; None: the settings decide."""
        return self._policies.get(connector)

    def state(self, connector: str) -> RestartState | None:
        return self._states.get(connector)

    def connectors(self) -> set[str]:
        """Every connector with a choice or a record."""
        return set(self._policies) | set(self._states)


__all__ = ["AutoRestartTable"]
