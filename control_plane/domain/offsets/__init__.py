"""The STOPPED state and connector offsets (KIP-875).

- ``feature``: ``StopAndOffsets``, the one entry: the workers stop and read (3.5+), alter and reset
  (3.6+), the sidecar before; and a resume of a connector stopped after it failed;
- ``stop``: ``ConnectorStopper``, the stop through the config topic (before 3.5);
- ``connector_offsets``: ``EmulatedOffsets``, read, alter and reset for source and sink connectors;
- ``task_shutdown``: ``TaskShutdown``, when a stopped connector's tasks can no longer commit offsets;
- ``request``: the PATCH body, checked as Connect checks it (pure);
- ``messages``: Connect's messages for offsets requests;
- ``sink_groups``: a sink's consumer group as its worker resolves it (the lag feature's ``SinkGroupOf``).
"""

from .connector_offsets import EmulatedOffsets, PartitionOffset, WorkerKafka
from .feature import StopAndOffsets
from .request import OffsetEntry, parse_alter_request
from .sink_groups import sink_group_of
from .stop import ConnectorStopper
from .task_shutdown import TaskShutdown

__all__ = [
    "ConnectorStopper",
    "EmulatedOffsets",
    "OffsetEntry",
    "PartitionOffset",
    "StopAndOffsets",
    "TaskShutdown",
    "WorkerKafka",
    "parse_alter_request",
    "sink_group_of",
]
