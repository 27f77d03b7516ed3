"""Reads: connector and task reads by the read rule, the dashboards' states, the sidecar's own endpoints.

- ``feature``: ``Reads``, the one entry: who answers each read (the view or a worker), statuses with the
  plugin versions where the workers lack KIP-891, the view's answer for a connector the sidecar stopped
  or when no worker answers;
- ``states``: ``ConnectorStates``, connector and task states for dashboards and alerts, kept incrementally.
"""

from .feature import (
    CapabilitiesReport,
    ConnectorListing,
    ExpandedConnector,
    Readiness,
    Reads,
    SidecarReport,
    ViewReport,
)
from .states import (
    KNOWN_STATES,
    ConnectorGauge,
    ConnectorStates,
    FailedState,
    StateChanges,
    StateGauges,
    StateRules,
    StateSummary,
    TimelineInfo,
)

__all__ = [
    "KNOWN_STATES",
    "CapabilitiesReport",
    "ConnectorGauge",
    "ConnectorListing",
    "ConnectorStates",
    "ExpandedConnector",
    "FailedState",
    "Readiness",
    "Reads",
    "SidecarReport",
    "StateChanges",
    "StateGauges",
    "StateRules",
    "StateSummary",
    "TimelineInfo",
    "ViewReport",
]
