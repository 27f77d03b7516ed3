"""``AutoRestart``: the auto-restart feature's one entry. The control plane restarts failed connectors and
tasks, with a backoff, on every Connect version (stock Connect never restarts a failed task).

Off unless enabled, as in Strimzi: for every connector whose name matches ``AUTO_RESTART_CONNECTORS`` when
``AUTO_RESTART`` is on, and per connector through ``/_sidecar/connectors/{c}/auto-restart`` (a record in the
sidecars' topic, so every sidecar sees the same choice; it wins over the settings). The unit, the cap and
the number of restarts before giving up are settings (``AUTO_RESTART_BACKOFF_UNIT_S``,
``AUTO_RESTART_BACKOFF_CAP_S``, ``AUTO_RESTART_MAX_RESTARTS``; ``schedule``).

It needs the sidecars' topic, where the choices and restarts are kept and each connector's fence is: a
sidecar without it (no view, or ``FENCE_ENABLED=false``) answers every request with a 501 that says so.
"""

from __future__ import annotations

from ..errors import Unsupported
from ..outcomes import Answer, Refusal, answer, answer_awaited
from .restarter import AutoRestarter, ConnectorRestarts, RestartsOverview

NO_TOPIC = (
    "Auto-restart needs the sidecars' topic (one sidecar of the cluster restarts, under the connector's "
    "fence): this sidecar has no view or its fence is off (FENCE_ENABLED=false)"
)


class AutoRestart:
    def __init__(self, restarter: AutoRestarter | None) -> None:
        """``restarter``: None where the sidecar has no sidecars' topic or fence."""
        self.restarter = restarter

    def overview(self) -> Answer[RestartsOverview] | Refusal:
        """``GET /_sidecar/auto-restarts``: the schedule, and every connector with a choice or a restart."""
        return answer(lambda: self._restarter().overview())

    def report(self, connector: str) -> Answer[ConnectorRestarts] | Refusal:
        """``GET /_sidecar/connectors/{c}/auto-restart`` (404 for a connector the view does not know)."""
        return answer(lambda: self._restarter().report_of(connector))

    async def choose(self, connector: str, enabled: bool | None) -> Answer[ConnectorRestarts] | Refusal:
        """An operator's choice for ``connector`` (None: the settings decide again), written and read back."""
        return await answer_awaited(lambda: self._restarter().choose(connector, enabled))

    def _restarter(self) -> AutoRestarter:
        if self.restarter is None:
            raise Unsupported(NO_TOPIC)
        return self.restarter


__all__ = ["NO_TOPIC", "AutoRestart"]
