"""Auto-restart of failed connectors and tasks, by one sidecar of the cluster, with Strimzi's backoff.

- ``feature``: ``AutoRestart``, the one entry: the schedule and every connector's restarts, an operator's
  choice per connector; a 501 where the sidecar has no sidecars' topic or fence;
- ``restarter``: ``AutoRestarter``, the loop of the acting sidecar (``cluster.acting``), each restart under
  the connector's fence and recorded in the sidecars' topic, whatever the worker answered, within the
  cluster's budget;
- ``schedule``: what is due for a connector (pure): the backoff, the settings' selection, the next step, the
  record of an attempt, the cluster's budget.
"""

from .feature import NO_TOPIC, AutoRestart
from .restarter import AutoRestarter, BudgetUse, ConnectorRestarts, RestartsOverview, ViewStatuses
from .schedule import Backoff, Budget, Selection, Step, next_step

__all__ = [
    "NO_TOPIC",
    "AutoRestart",
    "AutoRestarter",
    "Backoff",
    "Budget",
    "BudgetUse",
    "ConnectorRestarts",
    "RestartsOverview",
    "Selection",
    "Step",
    "ViewStatuses",
    "next_step",
]
