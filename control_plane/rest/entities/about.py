"""The sidecar's answers about itself and its cluster, rendered as JSON (``GET /_sidecar/capabilities``,
``/_sidecar/info``, ``/_sidecar/cluster``): what it decided per feature and from which workers' versions,
what it is, and the workers and sidecars of its cluster."""

from __future__ import annotations

from typing import Any

from ...codecs.worker_plugins import InstalledOnWorker
from ...domain.capabilities import Decided, Decision
from ...domain.cluster.membership import Membership
from ...domain.reads import CapabilitiesReport, SidecarReport
from ...rules.worker_id import worker_id_of


def decision_json(decision: Decision) -> dict[str, Any]:
    spec = decision.spec
    return {
        "mode": decision.mode.value,
        "spec": spec.spec,
        "native_since": str(spec.native_since) if spec.native_since else None,
        "reason": decision.reason,
        "summary": spec.summary,
        "emulation": spec.emulation,
    }


def decided_json(decided: Decided) -> dict[str, Any]:
    return {
        "worker_version": str(decided.version) if decided.version else None,
        "worker_versions": dict(decided.worker_versions),
        "group": decided.group,
        "unknown": decided.unknown,
        "detected_at": decided.detected_at,
        "features": {feature.value: decision_json(d) for feature, d in decided.decisions.items()},
    }


def capabilities_json(info: CapabilitiesReport) -> dict[str, Any]:
    return {
        **decided_json(info.decided),
        "advertised_version": info.advertised_version,
        "kafka_writes": dict(info.kafka_writes) if info.kafka_writes is not None else None,
    }


def info_json(info: SidecarReport) -> dict[str, Any]:
    view = info.view
    return {
        "capabilities": capabilities_json(info.capabilities),
        "workers": list(info.workers),
        "settings": dict(info.settings),
        "view": None
        if view is None
        else {
            "ready": view.ready,
            "age_s": view.age_s,
            "workers_answering": view.workers_answering,
            "counts": dict(view.counts),
            **view.diagnostics,
        },
    }


def membership_json(membership: Membership) -> dict[str, Any]:
    return {
        "group": membership.group,
        "state": membership.state,
        "protocol": membership.protocol,
        "leader_url": membership.leader_url,
        "workers": [
            {
                "id": w.member_id,
                "url": w.url,
                "host": w.host,
                "version": w.version,
                "leader": w.leader,
                "config_offset": w.config_offset,
                "plugins": _plugins_json(membership.plugins.get(worker_id_of(w.url))) if w.url else None,
            }
            for w in membership.workers
        ],
        "read_at": membership.read_at,
        "error": membership.error,
        "sidecar": membership.sidecar,
        "fences": [
            {"connector": f.connector, "sidecar": f.sidecar, "since_ms": f.since_ms, "expires_ms": f.expires_ms}
            for f in membership.fences
        ],
        "sidecars": [
            {
                "id": s.presence.sidecar,
                "url": s.presence.url,
                "version": s.presence.version,
                "workers": dict(s.presence.workers),
                "view_lag": dict(s.presence.view_lag),
                "plugins": dict(s.presence.plugins),
                "write_wait_ms": s.presence.write_wait_ms,
                "auto_restart": s.presence.auto_restart,
                "auto_restart_chosen": s.presence.restarts_chosen(),
                "history": s.presence.history,
                "ready": s.presence.ready,
                "seen_ms": s.seen_ms,
            }
            for s in membership.sidecars
        ],
        "least_write_wait_ms": None if membership.least_write_wait_s is None else membership.least_write_wait_s * 1000,
    }


def _plugins_json(installed: InstalledOnWorker | None) -> dict[str, dict[str, list[str | None]]] | None:
    """A worker's installed plugins (type -> class -> versions, null where unreported); None: unknown (no
    live sidecar in front of it reports them)."""
    if installed is None:
        return None
    return {kind: {name: list(v) for name, v in classes.items()} for kind, classes in installed.plugins.items()}


__all__ = ["capabilities_json", "decided_json", "decision_json", "info_json", "membership_json"]
