"""The sidecar's OpenAPI document, generated from the route table below and the typed models of
``connect_models`` (Connect's entities) and ``sidecar_models`` (the sidecar's own answers): never written
by hand. Served at ``GET /_sidecar/openapi.json`` (``/_sidecar`` is no Connect path) and written to a file
by ``control-plane openapi`` (``make api-doc``).

Two parts: Connect's REST API as the newest release the sidecar provides on every worker version (the
operations of Connect 4.3's ``rest/resources``, tag ``connect``; forwarded to a worker, answered from the
view, or emulated where the workers lack them), and the sidecar's own endpoints (tag ``sidecar``). The
tests check it against the app's routes both ways (tests/unit/rest/test_openapi.py), against Connect's
own description built from its jar, and fuzz the sidecar with it (tests/integration/test_sidecar_fuzz.py).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from ..domain.api_version import NEWEST_KNOWN
from . import connect_models as cm
from . import sidecar_models as sm
from .routes import SIDECAR_PREFIX

OPENAPI_PATH = f"{SIDECAR_PREFIX}/openapi.json"
NO_BODY = None
TEXT: Literal["text/plain"] = "text/plain"
Body = type[BaseModel] | None | Literal["text/plain"]


@dataclass(frozen=True)
class Param:
    name: str
    where: Literal["path", "query"]
    schema: Mapping[str, Any]
    description: str = ""
    required: bool = False


@dataclass(frozen=True)
class Operation:
    method: str
    path: str
    summary: str
    answers: Mapping[int, Body]  # status -> the answer's model (every other status: an ErrorMessage)
    body: type[BaseModel] | None = None
    params: tuple[Param, ...] = field(default=())
    tag: Literal["connect", "sidecar"] = "connect"


_STR = {"type": "string"}
_BOOL_FALSE = {"type": "boolean", "default": False}
CONNECTOR = Param("connector", "path", _STR, required=True)
TASK = Param("task", "path", {"type": "integer", "format": "int32"}, required=True)
PLUGIN = Param("pluginName", "path", _STR, "a plugin's class name or alias", required=True)
LOGGER = Param("logger", "path", _STR, required=True)
TOPIC = Param("topic", "path", _STR, required=True)
_C = "/connectors/{connector}"

# Connect 4.3's REST API (ConnectorsResource, ConnectorPluginsResource, LoggingResource, RootResource), on
# every worker version through the sidecar. InternalClusterResource's endpoints (POST .../tasks, PUT .../fence)
# are the workers' own, forwarded as every path the document does not name, and not documented, as in Connect.
CONNECT: tuple[Operation, ...] = (
    Operation(
        "GET", "/", "The Connect version the sidecar provides, with the cluster's commit and id", {200: cm.ServerInfo}
    ),
    Operation(
        "GET",
        "/health",
        "The worker's health (KIP-1017)",
        {200: cm.WorkerStatus, 500: cm.WorkerStatus, 503: cm.WorkerStatus},
    ),
    Operation(
        "GET",
        "/connectors",
        "The connectors' names, or with expand=status / expand=info their status and info",
        {200: cm.ConnectorListing},
        params=(Param("expand", "query", {"type": "array", "items": {"type": "string", "enum": ["status", "info"]}}),),
    ),
    Operation("POST", "/connectors", "Create a connector", {201: cm.ConnectorInfo}, body=cm.CreateConnectorRequest),
    Operation("GET", _C, "A connector's configuration and tasks", {200: cm.ConnectorInfo}, params=(CONNECTOR,)),
    Operation("DELETE", _C, "Delete a connector", {204: NO_BODY}, params=(CONNECTOR,)),
    Operation("GET", f"{_C}/config", "A connector's configuration", {200: cm.ConnectorConfig}, params=(CONNECTOR,)),
    Operation(
        "PUT",
        f"{_C}/config",
        "Create or replace a connector's configuration",
        {200: cm.ConnectorInfo, 201: cm.ConnectorInfo},
        body=cm.ConnectorConfig,
        params=(CONNECTOR,),
    ),
    Operation(
        "PATCH",
        f"{_C}/config",
        "Change some keys of a connector's configuration (KIP-477); null removes a key",
        {200: cm.ConnectorInfo},
        body=cm.ConfigPatch,
        params=(CONNECTOR,),
    ),
    Operation(
        "GET", f"{_C}/status", "A connector's and its tasks' states", {200: cm.ConnectorStateInfo}, params=(CONNECTOR,)
    ),
    Operation(
        "POST",
        f"{_C}/restart",
        "Restart a connector, and with includeTasks its tasks (KIP-745)",
        {202: cm.ConnectorStateInfo, 204: NO_BODY},
        params=(
            CONNECTOR,
            Param("includeTasks", "query", _BOOL_FALSE, "also restart the tasks"),
            Param("onlyFailed", "query", _BOOL_FALSE, "only what failed"),
        ),
    ),
    Operation("PUT", f"{_C}/pause", "Pause a connector", {202: NO_BODY}, params=(CONNECTOR,)),
    Operation("PUT", f"{_C}/resume", "Resume a connector", {202: NO_BODY}, params=(CONNECTOR,)),
    Operation("PUT", f"{_C}/stop", "Stop a connector (KIP-875)", {204: NO_BODY}, params=(CONNECTOR,)),
    Operation(
        "GET", f"{_C}/tasks", "A connector's tasks and their configurations", {200: cm.TaskConfigs}, params=(CONNECTOR,)
    ),
    Operation("GET", f"{_C}/tasks/{{task}}/status", "A task's state", {200: cm.TaskState}, params=(CONNECTOR, TASK)),
    Operation("POST", f"{_C}/tasks/{{task}}/restart", "Restart a task", {204: NO_BODY}, params=(CONNECTOR, TASK)),
    Operation(
        "GET", f"{_C}/topics", "A connector's active topics (KIP-558)", {200: cm.ActiveTopics}, params=(CONNECTOR,)
    ),
    Operation(
        "PUT", f"{_C}/topics/reset", "Forget a connector's active topics (KIP-558)", {202: NO_BODY}, params=(CONNECTOR,)
    ),
    Operation(
        "GET", f"{_C}/offsets", "A connector's offsets (KIP-875)", {200: cm.ConnectorOffsets}, params=(CONNECTOR,)
    ),
    Operation(
        "PATCH",
        f"{_C}/offsets",
        "Change a stopped connector's offsets (KIP-875)",
        {200: cm.Message},
        body=cm.ConnectorOffsets,
        params=(CONNECTOR,),
    ),
    Operation(
        "DELETE",
        f"{_C}/offsets",
        "Reset a stopped connector's offsets (KIP-875)",
        {200: cm.Message},
        params=(CONNECTOR,),
    ),
    Operation(
        "GET",
        "/connector-plugins",
        "The installed plugins (connectors only unless connectorsOnly=false, KIP-769)",
        {200: cm.PluginList},
        params=(Param("connectorsOnly", "query", {"type": "boolean", "default": True}),),
    ),
    Operation(
        "GET",
        "/connector-plugins/{pluginName}/config",
        "A plugin's configuration definition (KIP-769; version: KIP-891)",
        {200: cm.ConfigKeyInfos},
        params=(PLUGIN, Param("version", "query", _STR, "a version or Maven version range")),
    ),
    Operation(
        "PUT",
        "/connector-plugins/{pluginName}/config/validate",
        "Validate a connector configuration",
        {200: cm.ConfigInfos},
        body=cm.ConnectorConfig,
        params=(PLUGIN,),
    ),
    Operation("GET", "/admin/loggers", "Every logger with a level set (KIP-495, KIP-976)", {200: cm.LoggerLevels}),
    Operation("GET", "/admin/loggers/{logger}", "A logger's level", {200: cm.LoggerLevel}, params=(LOGGER,)),
    Operation(
        "PUT",
        "/admin/loggers/{logger}",
        "Set a logger's level on this worker, or with scope=cluster on every worker (KIP-976)",
        {200: cm.ChangedLoggers, 204: NO_BODY},
        body=cm.LevelRequest,
        params=(LOGGER, Param("scope", "query", _STR, "worker (the default) or cluster")),
    ),
)

_S = SIDECAR_PREFIX
SIDECAR: tuple[Operation, ...] = (
    Operation("GET", "/healthz", "Liveness: the process answers", {200: sm.Liveness}, tag="sidecar"),
    Operation(
        "GET",
        "/readyz",
        "Readiness: the view caught up, or a worker's version known",
        {200: sm.Readiness, 503: sm.Readiness},
        tag="sidecar",
    ),
    Operation("GET", "/metrics", "Prometheus metrics", {200: TEXT}, tag="sidecar"),
    Operation("GET", OPENAPI_PATH, "This document", {200: sm.Open}, tag="sidecar"),
    Operation(
        "GET",
        f"{_S}/capabilities",
        "The workers' versions and each feature's mode",
        {200: sm.Capabilities},
        tag="sidecar",
    ),
    Operation(
        "GET",
        f"{_S}/info",
        "Capabilities, workers, settings and the view's progress",
        {200: sm.SidecarInfo},
        tag="sidecar",
    ),
    Operation(
        "GET",
        f"{_S}/status-writes",
        "The status-topic writes pending and failed",
        {200: sm.StatusWrites},
        tag="sidecar",
    ),
    Operation(
        "GET",
        f"{_S}/summary",
        "Connectors and tasks by state, the failed ones with their traces, the latest state changes",
        {200: sm.StateSummary},
        params=(Param("recent", "query", {"type": "integer", "minimum": 0, "default": 50}),),
        tag="sidecar",
    ),
    Operation(
        "GET",
        f"{_S}/state-changes",
        "The state timeline read from the status topic",
        {200: sm.StateChanges},
        params=(
            Param("since", "query", _STR, "epoch milliseconds or ISO-8601"),
            Param("connector", "query", _STR),
            Param("limit", "query", {"type": "integer", "minimum": 1}),
        ),
        tag="sidecar",
    ),
    Operation(
        "GET",
        f"{_S}/topics/{{topic}}/connectors",
        "The connectors whose active topics include a topic",
        {200: sm.TopicConnectors},
        params=(TOPIC,),
        tag="sidecar",
    ),
    Operation(
        "GET",
        f"{_S}/connectors/{{connector}}/topics",
        "Per topic of a connector, the task that reported it and when",
        {200: sm.ConnectorTopicUsage},
        params=(CONNECTOR,),
        tag="sidecar",
    ),
    Operation(
        "POST",
        f"{_S}/topic-creation/preview",
        "What Connect does with a configuration's topic.creation.* (KIP-158)",
        {200: sm.CreationPreview},
        body=sm.TopicCreationRequest,
        tag="sidecar",
    ),
    Operation(
        "GET",
        f"{_S}/connectors/{{connector}}/topic-creation",
        "KIP-158 preview of a connector's configuration",
        {200: sm.CreationPreview},
        params=(CONNECTOR, Param("topic", "query", {"type": "array", "items": _STR, "minItems": 1}, required=True)),
        tag="sidecar",
    ),
    Operation(
        "GET",
        f"{_S}/connectors/{{connector}}/plugin-versions",
        "What a connector's plugin keys resolve to (KIP-891)",
        {200: sm.PluginVersionReport},
        params=(CONNECTOR,),
        tag="sidecar",
    ),
    Operation(
        "PUT",
        f"{_S}/plugin-versions",
        "What a configuration's plugin keys resolve to (KIP-891)",
        {200: sm.PluginVersionReport},
        body=cm.ConnectorConfig,
        tag="sidecar",
    ),
)

OPERATIONS: tuple[Operation, ...] = CONNECT + SIDECAR


def _ref(model: type[BaseModel]) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{model.__name__}"}


def _content(body: Body) -> dict[str, Any]:
    if body is NO_BODY:
        return {}
    if body == TEXT:
        return {"content": {TEXT: {"schema": _STR}}}
    assert not isinstance(body, str)
    return {"content": {"application/json": {"schema": _ref(body)}}}


def _operation(op: Operation) -> dict[str, Any]:
    out: dict[str, Any] = {
        "operationId": f"{op.method.lower()}{''.join(p.strip('{}').title() for p in op.path.split('/')) or 'Root'}",
        "summary": op.summary,
        "tags": [op.tag],
    }
    if op.params:
        out["parameters"] = [
            {
                "name": p.name,
                "in": p.where,
                "required": p.required or p.where == "path",
                "schema": dict(p.schema),
                **({"description": p.description} if p.description else {}),
                **({"style": "form", "explode": True} if p.schema.get("type") == "array" else {}),
            }
            for p in op.params
        ]
    if op.body is not None:
        out["requestBody"] = {"required": True, "content": {"application/json": {"schema": _ref(op.body)}}}
    answers = {
        str(status): {"description": _DESCRIPTIONS.get(status, "OK"), **_content(body)}
        for status, body in op.answers.items()
    }
    answers["default"] = {"description": "Connect's error shape", **_content(cm.ErrorMessage)}
    out["responses"] = answers
    return out


_DESCRIPTIONS = {200: "OK", 201: "Created", 202: "Accepted", 204: "No Content", 500: "Failed", 503: "Not ready"}


def _models() -> list[type[BaseModel]]:
    seen: dict[str, type[BaseModel]] = {}
    for op in OPERATIONS:
        for body in (op.body, *op.answers.values(), cm.ErrorMessage):
            if isinstance(body, type) and seen.setdefault(body.__name__, body) is not body:
                raise ValueError(f"two models named {body.__name__}")
    return list(seen.values())


@cache
def document() -> dict[str, Any]:
    """The OpenAPI 3.1 document (built once: a pure function of the code)."""
    _, schemas = models_json_schema(
        [(m, "serialization") for m in _models()], ref_template="#/components/schemas/{model}"
    )
    paths: dict[str, dict[str, Any]] = {}
    for op in OPERATIONS:
        paths.setdefault(op.path, {})[op.method.lower()] = _operation(op)
    major, minor = NEWEST_KNOWN
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Kafka Connect REST API, through the control-plane sidecar",
            "version": f"{major}.{minor}",
            "description": (
                f"Connect {major}.{minor}'s REST API on every worker version (tag connect: forwarded to a worker, "
                "answered from the view, or emulated where the workers lack it) and the sidecar's own endpoints "
                '(tag sidecar). Every error is Connect\'s {"error_code", "message"}. Paths not named here '
                "(Connect's internal endpoints, paths of newer releases) are forwarded to a worker as they are."
            ),
        },
        "tags": [
            {"name": "connect", "description": "Connect's REST API, the newest release the sidecar provides"},
            {"name": "sidecar", "description": "The sidecar's own endpoints"},
        ],
        "paths": paths,
        "components": {"schemas": schemas.get("$defs", {})},
    }


@cache
def document_json() -> bytes:
    return json.dumps(document(), indent=2, sort_keys=False).encode() + b"\n"


__all__ = ["CONNECT", "OPENAPI_PATH", "OPERATIONS", "SIDECAR", "Operation", "Param", "document", "document_json"]
