"""A sink connector's consumer group as its worker resolves it (``rules.connectors.sink_group_id``, provider
references resolved as the worker resolves them), or why it is not read here: a reference the sidecar
cannot resolve, or a consumer on other brokers than the worker's (by bootstrap servers). The ``SinkGroupOf``
port the lag feature reads the sinks' committed offsets through."""

from __future__ import annotations

from collections.abc import Mapping

from ...rules.connectors import (
    CONSUMER_BOOTSTRAP_OVERRIDE,
    GROUP_OVERRIDE_KEY,
    client_cluster,
    on_another_cluster,
    sink_group_id,
)
from ..ports import GroupUnknown, SinkGroupOf
from .connector_offsets import WorkerKafka


def sink_group_of(worker: WorkerKafka) -> SinkGroupOf:
    """The consumer group of a sink of ``worker``'s, by its name and config."""

    def group_of(name: str, config: Mapping[str, str | None]) -> str | GroupUnknown:
        resolved = worker.config_providers.resolve(config)
        for key in (GROUP_OVERRIDE_KEY, CONSUMER_BOOTSTRAP_OVERRIDE):
            if key in resolved.unresolved:
                return GroupUnknown(f"{key} is a reference the sidecar cannot resolve: {resolved.unresolved[key]}")
        servers = client_cluster(
            resolved.values, CONSUMER_BOOTSTRAP_OVERRIDE, worker.bootstrap, worker.consumer_bootstrap
        )
        if on_another_cluster(servers, worker.bootstrap):
            return GroupUnknown(f"its consumer reads other brokers ({servers}) than the worker's")
        return sink_group_id(name, resolved.values, worker.consumer_group)

    return group_of


__all__ = ["sink_group_of"]
