"""Lag and freshness per connector: sinks' consumer lag, sources' last commits.

- ``feature``: ``Lags``, the one entry: every connector's, one connector's per partition; the metrics'
  figures; a 503 without the sidecar's view;
- ``sinks``: ``SinkLags``, the sinks' lag refreshed from the broker on an interval.
"""

from .feature import NO_VIEW, LagOverview, Lags, PartitionCommit, SinkLagAt, SourceFreshness
from .sinks import LagSnapshot, PartitionLag, SinkLag, SinkLags

__all__ = [
    "NO_VIEW",
    "LagOverview",
    "LagSnapshot",
    "Lags",
    "PartitionCommit",
    "PartitionLag",
    "SinkLag",
    "SinkLagAt",
    "SinkLags",
    "SourceFreshness",
]
