"""The materialized view of a Connect cluster, built from its internal topics."""

from .materialized import MaterializedView
from .model import ActiveTopic, ClusterView, ConnectorInfoView, ConnectorStateView, StateEntry, TaskConfigs

__all__ = [
    "ActiveTopic",
    "ClusterView",
    "ConnectorInfoView",
    "ConnectorStateView",
    "MaterializedView",
    "StateEntry",
    "TaskConfigs",
]
