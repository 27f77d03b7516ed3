"""The rule that picks the one sidecar of the cluster that does a piece of work once for all of them
(auto-restart, recording the config history): the first by id of the live sidecars (``view.sidecars``) whose
presence says it can do that work (``presence.Presence``: an older release, or a sidecar whose fence is off,
says it cannot). Every sidecar reads the same presences, so each names the same one, and a sidecar that
leaves is passed over once the others forget it (``view.sidecars.MISSED`` intervals); the work itself is
done under the connector's fence, so two that disagree for an interval do it once.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ...codecs.presence import SidecarPresence
from ...view.sidecars import SidecarTable

Able = Callable[[SidecarPresence], bool]  # whether a sidecar's presence says it can do the work


class OneActor:
    """The ``Actor`` port (``domain.ports``) for one piece of work, as seen by sidecar ``me``."""

    def __init__(
        self,
        table: SidecarTable,
        me: str,
        able: Able,
        now_ms: Callable[[], float] = lambda: time.time() * 1000,
    ) -> None:
        self._table = table
        self._me = me
        self._able = able
        self._now_ms = now_ms

    def acting_sidecar(self) -> str | None:
        return next((s.presence.sidecar for s in self._table.live(self._now_ms()) if self._able(s.presence)), None)

    def acting(self) -> bool:
        return self.acting_sidecar() == self._me


def restarts(presence: SidecarPresence) -> bool:
    """Auto-restart's: the sidecar restarts failed connectors."""
    return presence.auto_restart


def records_history(presence: SidecarPresence) -> bool:
    """The config history's: the sidecar records it."""
    return presence.history


__all__ = ["Able", "OneActor", "records_history", "restarts"]
