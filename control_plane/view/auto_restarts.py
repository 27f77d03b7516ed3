"""The auto-restart choices and records of the sidecars' topic (``codecs.auto_restart``): per connector,
an operator's choice (enabled or not, over the settings) and what the sidecar that restarted it last did;
per sidecar, when it sent the restarts of the budget's window."""

from __future__ import annotations

from ..codecs.auto_restart import RestartBudget, RestartPolicy, RestartState
from ..codecs.results import Tombstone


class AutoRestartTable:
    def __init__(self) -> None:
        self._policies: dict[str, bool] = {}
        self._states: dict[str, RestartState] = {}
        self._budgets: dict[str, tuple[int, ...]] = {}

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

    def apply_budget(self, record: RestartBudget | Tombstone[str]) -> None:
        if isinstance(record, Tombstone):
            self._budgets.pop(record.key, None)
        else:
            self._budgets[record.sidecar] = record.times_ms

    def spent(self, sidecar: str) -> tuple[int, ...]:
        """When ``sidecar`` sent its restarts, as its last budget record says."""
        return self._budgets.get(sidecar, ())

    def spent_since(self, since_ms: float, *, besides: str | None = None) -> int:
        """The restarts every sidecar (``besides`` one) recorded sending after ``since_ms``."""
        return sum(
            sum(1 for t in times if t > since_ms) for sidecar, times in self._budgets.items() if sidecar != besides
        )

    def policy(self, connector: str) -> bool | None:
        """An operator's choice for ``connector``; None: the settings decide."""
        return self._policies.get(connector)

    def state(self, connector: str) -> RestartState | None:
        return self._states.get(connector)

    def connectors(self) -> set[str]:
        """Every connector with a choice or a record."""
        return set(self._policies) | set(self._states)


__all__ = ["AutoRestartTable"]
