"""Route templates of Connect's REST API, for metric labels that do not grow with connector names.

Mirrors the paths of Connect's ``rest/resources`` (RootResource, ConnectorsResource,
ConnectorPluginsResource, LoggingResource, InternalConnectResource).
"""

from __future__ import annotations

SIDECAR_PREFIX = "/_sidecar"

_CONNECTOR_SUFFIXES = frozenset(
    {"config", "status", "restart", "pause", "resume", "stop", "topics", "offsets", "tasks", "tasks-config", "fence"}
)
_TASK_SUFFIXES = frozenset({"status", "restart"})


SIDECAR_ROUTES = frozenset(
    {
        "/healthz",
        "/readyz",
        "/metrics",
        f"{SIDECAR_PREFIX}/capabilities",
        f"{SIDECAR_PREFIX}/info",
        f"{SIDECAR_PREFIX}/openapi.json",
        f"{SIDECAR_PREFIX}/status-writes",
        f"{SIDECAR_PREFIX}/summary",
        f"{SIDECAR_PREFIX}/state-changes",
        f"{SIDECAR_PREFIX}/topic-creation/preview",
        f"{SIDECAR_PREFIX}/plugin-versions",
    }
)


def route_template(path: str) -> str:
    if path in SIDECAR_ROUTES:
        return path
    if path.startswith(f"{SIDECAR_PREFIX}/topics/") and path.endswith("/connectors"):
        return f"{SIDECAR_PREFIX}/topics/{{topic}}/connectors"
    if path.startswith(f"{SIDECAR_PREFIX}/connectors/") and path.endswith("/topics"):
        return f"{SIDECAR_PREFIX}/connectors/{{connector}}/topics"
    if path.startswith(f"{SIDECAR_PREFIX}/connectors/") and path.endswith("/topic-creation"):
        return f"{SIDECAR_PREFIX}/connectors/{{connector}}/topic-creation"
    if path.startswith(f"{SIDECAR_PREFIX}/connectors/") and path.endswith("/plugin-versions"):
        return f"{SIDECAR_PREFIX}/connectors/{{connector}}/plugin-versions"
    if path.startswith(SIDECAR_PREFIX):
        return f"{SIDECAR_PREFIX}/{{other}}"
    seg = [s for s in path.split("/") if s]
    if not seg:
        return "/"
    head, rest = seg[0], seg[1:]
    if head == "connectors":
        if not rest:
            return "/connectors"
        out = ["connectors", "{connector}"]
        tail = rest[1:]
        if tail and tail[0] in _CONNECTOR_SUFFIXES:
            out.append(tail[0])
            if (tail[0] == "topics" and tail[1:] == ["reset"]) or (tail[0] == "offsets" and tail[1:] == ["reset"]):
                out.append("reset")
            elif tail[0] == "tasks" and len(tail) > 1:
                out.append("{task}")
                if len(tail) > 2 and tail[2] in _TASK_SUFFIXES:
                    out.append(tail[2])
        elif tail:
            out.append("{other}")
        return "/" + "/".join(out)
    if head == "connector-plugins":
        if not rest:
            return "/connector-plugins"
        suffix = "/".join(rest[1:])
        return "/connector-plugins/{plugin}" + ("/" + suffix if suffix in ("config", "config/validate") else "")
    if head == "admin" and rest[:1] == ["loggers"]:
        return "/admin/loggers" + ("/{logger}" if len(rest) > 1 else "")
    if head == "health" and not rest:
        return "/health"
    return "{other}"
