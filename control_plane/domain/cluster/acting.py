"""The rule that picks the one sidecar of the cluster that does a piece of work once for all of them
(auto-restart, recording the config history): the first by id of the live sidecars (``view.sidecars``) that
are ready (their view caught up) and whose presence says they will do that work (``presence.Presence``: an
older release, a sidecar whose fence is off, or one whose settings turn the work off, says it will not). A
work may name a second rank of willingness, asked only when nobody of the first is live: auto-restart
prefers a sidecar with ``AUTO_RESTART`` on, else one that restarts only what an operator chose. Every
sidecar reads the same presences, so each names the same one, and a sidecar that leaves is passed over once
the others forget it (``view.sidecars.MISSED`` intervals); the work itself is done under the connector's
fence, so two that disagree for an interval do it once.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ...codecs.presence import SidecarPresence
from ...view.sidecars import SidecarTable

Able = Callable[[SidecarPresence], bool]  # whether a sidecar's presence says it will do the work


class OneActor:
    """The ``Actor`` port (``domain.ports``) for one piece of work, as seen by sidecar ``me``: the first
    ready sidecar ``able`` names, else the first ``fallback`` names (None: nobody)."""

    def __init__(
        self,
        table: SidecarTable,
        me: str,
        able: Able,
        now_ms: Callable[[], float] = lambda: time.time() * 1000,
        *,
        fallback: Able | None = None,
    ) -> None:
        self._table = table
        self._me = me
        self._ranks = (able,) if fallback is None else (able, fallback)
        self._now_ms = now_ms

    def acting_sidecar(self) -> str | None:
        ready = [s.presence for s in self._table.live(self._now_ms()) if s.presence.ready]
        for able in self._ranks:
            first = next((p.sidecar for p in ready if able(p)), None)
            if first is not None:
                return first
        return None

    def acting(self) -> bool:
        return self.acting_sidecar() == self._me


def restarts(presence: SidecarPresence) -> bool:
    """Auto-restart's: the sidecar restarts the failed connectors its settings choose (and those chosen)."""
    return presence.auto_restart


def restarts_chosen(presence: SidecarPresence) -> bool:
    """Auto-restart's second rank: the sidecar restarts only the connectors an operator chose."""
    return presence.restarts_chosen()


def records_history(presence: SidecarPresence) -> bool:
    """The config history's: the sidecar records it."""
    return presence.history


__all__ = ["Able", "OneActor", "records_history", "restarts", "restarts_chosen"]
