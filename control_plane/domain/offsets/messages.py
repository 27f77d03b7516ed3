"""Connect's messages for KIP-875 offsets requests, word for word where Connect has them (cited per
function), and the sidecar's own where it refuses what it cannot do safely."""

from __future__ import annotations


def not_found(name: str) -> str:
    return f"Connector {name} not found"  # AbstractHerder.connectorOffsets, modifyConnectorOffsetsChecks


def not_stopped(name: str) -> str:  # DistributedHerder.modifyConnectorOffsetsChecks
    return (
        "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the "
        f"specified connector by issuing a 'PUT' request to the '/connectors/{name}/stop' endpoint"
    )


def class_not_found(connector_class: str, available: list[str]) -> str:  # Plugins.newConnector (500)
    """A connector whose class the worker cannot load: Connect cannot tell source from sink, and answers
    every offsets request of it with this (Worker.connectorOffsets, Worker.modifyConnectorOffsets)."""
    return (
        f"Failed to find any class that implements Connector and which name matches {connector_class}, "
        f"available connectors are: {', '.join(available)}"
    )


def framework_managed(modification: str) -> str:  # Worker.completeModifyOffsetsCallback, no alterOffsets hook
    return (
        f"The Connect framework-managed offsets for this connector have been {modification} successfully. However, "
        "if this connector manages offsets externally, they will need to be manually "
        f"{modification} in the system that the connector uses."
    )


def sink_tasks_running(name: str, action: str) -> str:  # Worker.alterSinkConnectorOffsets / resetSinkConnectorOffsets
    verb = "alter" if action == "alter" else "reset"
    return (
        f"Failed to {verb} consumer group offsets for connector {name} either because its tasks haven't stopped "
        f"completely yet or the connector was resumed before the request to {verb} its offsets could be "
        "successfully completed. If the connector is in a stopped state, this operation can be safely retried. "
        "If it doesn't eventually succeed, the Connect cluster may need to be restarted to get rid of the zombie "
        "sink tasks."
    )


def sink_modify_failed(name: str) -> str:  # Worker.modifySinkConnectorOffsets, any failure before the admin call
    return f"Failed to modify offsets for sink connector {name}"


def sink_alter_failed(name: str) -> str:  # Worker.alterSinkConnectorOffsets, the admin client's failure
    return f"Failed to alter consumer group offsets for connector {name}"


def cannot_reach(name: str, kind: str, servers: str, worker: str, clusters: tuple[str, str] | None = None) -> str:
    """Where the offsets are on another Kafka cluster than the worker's (by cluster id: ``clusters`` is the
    client's and the worker's), which the sidecar does not write to."""
    where = (
        "its consumer group lives on"
        if kind == "sink"
        else "its offsets are kept in a connector-specific offsets topic (KIP-618) on"
    )
    ids = f" (cluster {clusters[0]}, the worker's is {clusters[1]})" if clusters else ""
    return (
        f"The sidecar cannot read or modify the offsets of {kind} connector {name} on this Connect version: its "
        f"{'consumer' if kind == 'sink' else 'producer'} uses another Kafka cluster ({servers}){ids} than the "
        f"worker ({worker}), and {where} that cluster, which the sidecar does not reach. Nothing was read or written."
    )


def cluster_unknown(name: str, kind: str, servers: str, cause: str) -> str:
    client = "consumer" if kind == "sink" else "producer"
    return (
        f"The sidecar cannot read or modify the offsets of {kind} connector {name} on this Connect version: its "
        f"{client} uses other bootstrap servers ({servers}) than the worker, where its offsets are kept, and the "
        f"sidecar could not tell whether they are the worker's Kafka cluster ({cause}). Nothing was read or written."
    )


def unresolved(name: str, kind: str, why: str) -> str:
    return (
        f"The sidecar cannot read or modify the offsets of {kind} connector {name} on this Connect version: where "
        f"they are depends on a config provider reference it cannot resolve ({why}). Nothing was read or written."
    )


def needs_fencing(name: str, mode: str) -> str:
    return (
        f"The sidecar cannot modify the offsets of source connector {name} on this Connect version: the worker "
        f"cluster has exactly.once.source.support={mode}, and doing it safely needs the connector's zombie tasks "
        "fenced out first, as Connect 3.6+ does (KIP-618), which the sidecar does not do. Nothing was written."
    )


__all__ = [
    "cannot_reach",
    "class_not_found",
    "cluster_unknown",
    "framework_managed",
    "needs_fencing",
    "not_found",
    "not_stopped",
    "sink_alter_failed",
    "sink_modify_failed",
    "sink_tasks_running",
    "unresolved",
]
