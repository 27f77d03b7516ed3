"""The one route table: every endpoint the sidecar serves, Connect's and its own.

Each ``Route`` is one method on one path template, with what the OpenAPI document says of it (summary,
parameters, request body, answers) and the handler that serves it; a Connect route without a handler is
forwarded to a worker unchanged. From this table alone come:

- the matching (``router``): Connect's paths as Jersey matches them, with the refusals the worker's HTTP stack
  gives before a resource method (``jaxrs``): a Connect resource's methods are the methods of its rows here,
  and the methods that read a JSON entity are the rows with a ``body``;
- the labels of the request metrics (``router.Router.label``): the template of the route a request
  matches, and for paths no route has, the bounded fallbacks of ``FALLBACK_LABELS``;
- the OpenAPI document (``openapi``).

Connect's rows are Connect 4.4's ``rest/resources`` (as 4.3's: RootResource, ConnectorsResource,
ConnectorPluginsResource, LoggingResource), the newest REST API the sidecar provides on every worker version;
``internal`` rows are InternalConnectResource's, the workers' own calls to each other: forwarded and labelled,
never documented (as Connect leaves them out of its own document).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel

from ..entities import connect_models as cm
from ..entities import sidecar_models as sm
from ..request.exchange import Handler
from ..resources import (
    auto_restart,
    bulk,
    config_history,
    configs,
    connector_plugins,
    connector_states,
    lag,
    loggers,
    offsets,
    ops,
    plan,
    plugin_versions,
    reads,
    restart,
    root,
    topic_creation,
)

SIDECAR_PREFIX = "/_sidecar"
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
class Route:
    """``path``: a template of ``{name}`` segments (``{name:int}``: Java's ``Integer`` path parameter);
    ``answers``: status -> the answer's model (every other status: Connect's ``ErrorMessage``);
    ``handler``: None for a Connect route the workers answer (forwarded unchanged); ``consumes``: whether
    Connect's resource class declares ``@Consumes(application/json)`` (``RootResource``, of ``/`` and
    ``/health``, does not: it takes any ``Content-Type``)."""

    method: str
    path: str
    summary: str
    answers: Mapping[int, Body] = field(default_factory=dict)
    handler: Handler | None = None
    body: type[BaseModel] | None = None
    params: tuple[Param, ...] = ()
    tag: Literal["connect", "sidecar"] = "connect"
    internal: bool = False
    consumes: bool = True


_STR = {"type": "string"}
_BOOL_FALSE = {"type": "boolean", "default": False}
CONNECTOR = Param("connector", "path", _STR, required=True)
TASK = Param("task", "path", {"type": "integer", "format": "int32"}, required=True)
PLUGIN = Param("pluginName", "path", _STR, "a plugin's class name or alias", required=True)
LOGGER = Param("logger", "path", _STR, required=True)
VERSION = Param("version", "path", {"type": "integer"}, "a version of the connector's config history", required=True)
TOPIC = Param("topic", "path", _STR, required=True)
_C = "/connectors/{connector}"

CONNECT: tuple[Route, ...] = (
    Route(
        "GET",
        "/",
        "The Connect version the sidecar provides, with the cluster's commit and id",
        {200: cm.ServerInfo},
        root.server_info,
        consumes=False,
    ),
    Route(
        "GET",
        "/health",
        "The worker's health (KIP-1017)",
        {200: cm.WorkerStatus, 500: cm.WorkerStatus, 503: cm.WorkerStatus},
        root.health,
        consumes=False,
    ),
    Route(
        "GET",
        "/connectors",
        "The connectors' names, or with expand=status / expand=info their status and info",
        {200: cm.ConnectorListingInfo},
        reads.list_connectors,
        params=(Param("expand", "query", {"type": "array", "items": {"type": "string", "enum": ["status", "info"]}}),),
    ),
    # configurations go through the sidecar's checks on their way to a worker
    Route(
        "POST",
        "/connectors",
        "Create a connector",
        {201: cm.ConnectorInfo},
        configs.create_connector,
        body=cm.CreateConnectorRequest,
    ),
    Route("GET", _C, "A connector's configuration and tasks", {200: cm.ConnectorInfo}, params=(CONNECTOR,)),
    Route("DELETE", _C, "Delete a connector", {204: NO_BODY}, params=(CONNECTOR,)),
    Route(
        "GET",
        f"{_C}/config",
        "A connector's configuration",
        {200: cm.ConnectorConfigInfo},
        reads.connector_config,
        params=(CONNECTOR,),
    ),
    Route(
        "PUT",
        f"{_C}/config",
        "Create or replace a connector's configuration",
        {200: cm.ConnectorInfo, 201: cm.ConnectorInfo},
        configs.put_or_patch_config,
        body=cm.ConnectorConfigInfo,
        params=(CONNECTOR,),
    ),
    Route(
        "PATCH",
        f"{_C}/config",
        "Change some keys of a connector's configuration (KIP-477); null removes a key",
        {200: cm.ConnectorInfo},
        configs.put_or_patch_config,
        body=cm.ConfigPatch,
        params=(CONNECTOR,),
    ),
    # the status must not reach a worker that would answer it otherwise (a connector the sidecar stopped on
    # a 3.4 worker shows PAUSED there)
    Route(
        "GET",
        f"{_C}/status",
        "A connector's and its tasks' states",
        {200: cm.ConnectorStateInfo},
        reads.connector_status,
        params=(CONNECTOR,),
    ),
    Route(
        "POST",
        f"{_C}/restart",
        "Restart a connector, and with includeTasks its tasks (KIP-745)",
        {202: cm.ConnectorStateInfo, 204: NO_BODY},
        restart.restart_connector,
        params=(
            CONNECTOR,
            Param("includeTasks", "query", _BOOL_FALSE, "also restart the tasks"),
            Param("onlyFailed", "query", _BOOL_FALSE, "only what failed"),
        ),
    ),
    Route("PUT", f"{_C}/pause", "Pause a connector", {202: NO_BODY}, params=(CONNECTOR,)),
    Route("PUT", f"{_C}/resume", "Resume a connector", {202: NO_BODY}, params=(CONNECTOR,)),
    Route(
        "PUT", f"{_C}/stop", "Stop a connector (KIP-875)", {204: NO_BODY}, offsets.stop_connector, params=(CONNECTOR,)
    ),
    Route(
        "GET", f"{_C}/tasks", "A connector's tasks and their configurations", {200: cm.TaskConfigs}, params=(CONNECTOR,)
    ),
    Route(
        "GET",
        f"{_C}/tasks/{{task:int}}/status",
        "A task's state",
        {200: cm.TaskState},
        reads.task_status,
        params=(CONNECTOR, TASK),
    ),
    Route("POST", f"{_C}/tasks/{{task:int}}/restart", "Restart a task", {204: NO_BODY}, params=(CONNECTOR, TASK)),
    Route(
        "GET",
        f"{_C}/topics",
        "A connector's active topics (KIP-558)",
        {200: cm.ActiveTopics},
        reads.connector_topics,
        params=(CONNECTOR,),
    ),
    Route(
        "PUT",
        f"{_C}/topics/reset",
        "Forget a connector's active topics (KIP-558)",
        {202: NO_BODY},
        reads.reset_connector_topics,
        params=(CONNECTOR,),
    ),
    # KIP-875: forwarded where the workers have them, done by the sidecar where they do not
    Route(
        "GET",
        f"{_C}/offsets",
        "A connector's offsets (KIP-875)",
        {200: cm.ConnectorOffsets},
        offsets.connector_offsets,
        params=(CONNECTOR,),
    ),
    Route(
        "PATCH",
        f"{_C}/offsets",
        "Change a stopped connector's offsets (KIP-875)",
        {200: cm.Message},
        offsets.connector_offsets,
        body=cm.ConnectorOffsets,
        params=(CONNECTOR,),
    ),
    Route(
        "DELETE",
        f"{_C}/offsets",
        "Reset a stopped connector's offsets (KIP-875)",
        {200: cm.Message},
        offsets.connector_offsets,
        params=(CONNECTOR,),
    ),
    # KIP-769 (3.2) and KIP-891: forwarded where the workers have them, composed where they do not
    Route(
        "GET",
        "/connector-plugins",
        "The installed plugins (connectors only unless connectorsOnly=false, KIP-769)",
        {200: cm.PluginListInfo},
        connector_plugins.connector_plugins,
        params=(Param("connectorsOnly", "query", {"type": "boolean", "default": True}),),
    ),
    Route(
        "GET",
        "/connector-plugins/{pluginName}/config",
        "A plugin's configuration definition (KIP-769; version: KIP-891)",
        {200: cm.ConfigKeyInfos},
        connector_plugins.plugin_config,
        params=(PLUGIN, Param("version", "query", _STR, "a version or Maven version range")),
    ),
    Route(
        "PUT",
        "/connector-plugins/{pluginName}/config/validate",
        "Validate a connector configuration",
        {200: cm.ConfigInfos},
        configs.validate_config,
        body=cm.ConnectorConfigInfo,
        params=(PLUGIN,),
    ),
    # the loggers of newer releases on every version (KIP-495, KIP-976)
    Route(
        "GET",
        "/admin/loggers",
        "Every logger with a level set (KIP-495, KIP-976)",
        {200: cm.LoggerLevels},
        loggers.logger_levels,
    ),
    Route(
        "GET",
        "/admin/loggers/{logger}",
        "A logger's level",
        {200: cm.LoggerLevel},
        loggers.logger_level,
        params=(LOGGER,),
    ),
    Route(
        "PUT",
        "/admin/loggers/{logger}",
        "Set a logger's level on this worker, or with scope=cluster on every worker (KIP-976)",
        {200: cm.ChangedLoggers, 204: NO_BODY},
        loggers.logger_level,
        body=cm.LevelRequest,
        params=(LOGGER, Param("scope", "query", _STR, "worker (the default) or cluster")),
    ),
    # InternalConnectResource: the workers' calls to each other
    Route("POST", f"{_C}/tasks", "Task configurations from the leader", params=(CONNECTOR,), internal=True),
    Route("PUT", f"{_C}/fence", "Fence out a connector's zombie tasks (KIP-618)", params=(CONNECTOR,), internal=True),
    Route("GET", f"{_C}/tasks-config", "Task configurations (removed in 4.0)", params=(CONNECTOR,), internal=True),
)

_S = SIDECAR_PREFIX
SIDECAR: tuple[Route, ...] = (
    Route("GET", "/healthz", "Liveness: the process answers", {200: sm.Liveness}, ops.healthz, tag="sidecar"),
    Route(
        "GET",
        "/readyz",
        "Readiness: the view caught up, or a worker's version known",
        {200: sm.ReadinessInfo, 503: sm.ReadinessInfo},
        ops.readyz,
        tag="sidecar",
    ),
    Route("GET", "/metrics", "Prometheus metrics", {200: TEXT}, ops.metrics, tag="sidecar"),
    Route("GET", OPENAPI_PATH, "This document", {200: sm.Open}, ops.openapi, tag="sidecar"),
    Route(
        "GET",
        f"{_S}/capabilities",
        "The workers' versions and each feature's mode",
        {200: sm.CapabilitiesInfo},
        ops.capabilities,
        tag="sidecar",
    ),
    Route(
        "GET",
        f"{_S}/info",
        "Capabilities, workers, settings and the view's progress",
        {200: sm.SidecarInfo},
        ops.info,
        tag="sidecar",
    ),
    Route(
        "GET",
        f"{_S}/cluster",
        "The Connect cluster's live workers (its group's members), their versions and the leader",
        {200: sm.ClusterInfo},
        ops.cluster,
        tag="sidecar",
    ),
    Route(
        "GET",
        f"{_S}/status-writes",
        "The status-topic writes pending and failed",
        {200: sm.StatusWritesInfo},
        ops.status_writes,
        tag="sidecar",
    ),
    Route(
        "GET",
        f"{_S}/summary",
        "Connectors and tasks by state, the failed ones with their traces, the latest state changes",
        {200: sm.StateSummaryInfo},
        connector_states.summary,
        params=(Param("recent", "query", {"type": "integer", "minimum": 0, "default": 50}),),
        tag="sidecar",
    ),
    Route(
        "GET",
        f"{_S}/state-changes",
        "The state timeline read from the status topic",
        {200: sm.StateChangesInfo},
        connector_states.state_changes,
        params=(
            Param("since", "query", _STR, "epoch milliseconds or ISO-8601"),
            Param("connector", "query", _STR),
            Param("limit", "query", {"type": "integer", "minimum": 1}),
        ),
        tag="sidecar",
    ),
    Route(
        "GET",
        f"{_S}/topics/{{topic}}/connectors",
        "The connectors whose active topics include a topic",
        {200: sm.TopicConnectors},
        reads.topic_connectors,
        params=(TOPIC,),
        tag="sidecar",
    ),
    Route(
        "GET",
        f"{_S}/connectors/{{connector}}/topics",
        "Per topic of a connector, the task that reported it and when",
        {200: sm.ConnectorTopicUsage},
        reads.connector_topic_usage,
        params=(CONNECTOR,),
        tag="sidecar",
    ),
    Route(
        "POST",
        f"{_S}/topic-creation/preview",
        "What Connect does with a configuration's topic.creation.* (KIP-158)",
        {200: sm.CreationPreviewInfo},
        topic_creation.preview,
        body=sm.TopicCreationRequest,
        tag="sidecar",
    ),
    Route(
        "GET",
        f"{_S}/connectors/{{connector}}/topic-creation",
        "KIP-158 preview of a connector's configuration",
        {200: sm.CreationPreviewInfo},
        topic_creation.connector_preview,
        params=(CONNECTOR, Param("topic", "query", {"type": "array", "items": _STR, "minItems": 1}, required=True)),
        tag="sidecar",
    ),
    Route(
        "GET",
        f"{_S}/connectors/{{connector}}/plugin-versions",
        "What a connector's plugin keys resolve to (KIP-891)",
        {200: sm.PluginVersionReportInfo},
        plugin_versions.connector_plugin_versions,
        params=(CONNECTOR,),
        tag="sidecar",
    ),
    Route(
        "PUT",
        f"{_S}/plugin-versions",
        "What a configuration's plugin keys resolve to (KIP-891)",
        {200: sm.PluginVersionReportInfo},
        plugin_versions.config_plugin_versions,
        body=cm.ConnectorConfigInfo,
        tag="sidecar",
    ),
    Route(
        "GET",
        f"{_S}/lag",
        "Every connector's lag (sinks, from the last refresh) and freshness (sources, its newest offset commit)",
        {200: sm.LagsInfo},
        lag.overview,
        tag="sidecar",
    ),
    Route(
        "GET",
        f"{_S}/connectors/{{connector}}/lag",
        "A connector's lag per partition (a sink) or the last commit of each source partition (a source)",
        {200: sm.ConnectorLagInfo},
        lag.connector,
        params=(CONNECTOR,),
        tag="sidecar",
    ),
    Route(
        "GET",
        f"{_S}/connectors/{{connector}}/history",
        "Every version of a connector's config and target state kept, newest first, each with its changes",
        {200: sm.ConfigHistoryInfo},
        config_history.history,
        params=(
            CONNECTOR,
            Param("limit", "query", {"type": "integer", "minimum": 1}, "at most this many versions"),
            Param("before", "query", {"type": "integer"}, "only versions older than this one (a page)"),
        ),
        tag="sidecar",
    ),
    Route(
        "GET",
        f"{_S}/connectors/{{connector}}/history/diff",
        "The key-level changes from one version of a connector's config to another (default: the newest)",
        {200: sm.ConfigDiffInfo},
        config_history.diff,
        params=(
            CONNECTOR,
            Param("from", "query", {"type": "integer"}, "a version", required=True),
            Param("to", "query", {"type": "integer"}, "a version; default the newest"),
        ),
        tag="sidecar",
    ),
    Route(
        "GET",
        f"{_S}/connectors/{{connector}}/history/{{version}}",
        "One version of a connector's config (secrets hidden), with its changes",
        {200: sm.ConfigVersionDetail},
        config_history.version,
        params=(CONNECTOR, VERSION),
        tag="sidecar",
    ),
    Route(
        "POST",
        f"{_S}/connectors/{{connector}}/history/{{version}}/rollback",
        "Put a connector's config back to a version's: a config write (the same checks and fence as a PUT)",
        {200: cm.ConnectorInfo},
        config_history.rollback,
        body=sm.RollbackBody,
        params=(CONNECTOR, VERSION),
        tag="sidecar",
    ),
    Route(
        "POST",
        f"{_S}/plan",
        "What the cluster needs to run the connectors described: create, update, delete (prune), unchanged",
        {200: sm.PlanInfo},
        plan.plan,
        body=sm.PlanRequest,
        tag="sidecar",
    ),
    Route(
        "POST",
        f"{_S}/apply",
        "Carry out a plan exactly, refused when the cluster changed since it was made",
        {200: sm.ApplyInfo},
        plan.apply,
        body=sm.PlanInfo,
        tag="sidecar",
    ),
    Route(
        "POST",
        f"{_S}/bulk",
        "One action on every connector a selector picks (or a dry run): each connector's result and the counts",
        {200: sm.BulkInfo},
        bulk.bulk,
        body=sm.BulkBody,
        tag="sidecar",
    ),
    Route(
        "GET",
        f"{_S}/auto-restarts",
        "Auto-restart: the schedule, and every connector with a choice or a restart",
        {200: sm.AutoRestartsInfo},
        auto_restart.overview,
        tag="sidecar",
    ),
    Route(
        "GET",
        f"{_S}/connectors/{{connector}}/auto-restart",
        "Auto-restart of a connector: whether it is on, its restarts, the next one",
        {200: sm.AutoRestartInfo},
        auto_restart.connector,
        params=(CONNECTOR,),
        tag="sidecar",
    ),
    Route(
        "PUT",
        f"{_S}/connectors/{{connector}}/auto-restart",
        "Turn auto-restart on or off for a connector, whatever the settings say",
        {200: sm.AutoRestartInfo},
        auto_restart.choose,
        body=sm.AutoRestartChoice,
        params=(CONNECTOR,),
        tag="sidecar",
    ),
    Route(
        "DELETE",
        f"{_S}/connectors/{{connector}}/auto-restart",
        "Give auto-restart of a connector back to the settings",
        {200: sm.AutoRestartInfo},
        auto_restart.forget,
        params=(CONNECTOR,),
        tag="sidecar",
    ),
    Route(
        "GET",
        f"{_S}/plugin-pins",
        "The connectors' version pins that do not hold on some worker now (KIP-891)",
        {200: sm.PluginPinsInfo},
        plugin_versions.plugin_pins,
        tag="sidecar",
    ),
)

ROUTES: tuple[Route, ...] = CONNECT + SIDECAR


def label_of(template: str) -> str:
    """A template as a metric label and an OpenAPI path: parameters by name only (``{task:int}`` is ``{task}``)."""
    return template.replace(":int}", "}")


# The metric label of a path no route has: that of the deepest template prefix it starts with that is
# named here (a name never reaches a label: their number stays bounded), else ``{other}``.
FALLBACK_LABELS: Mapping[str, str] = {
    "/connectors/{connector}": "/connectors/{connector}/{other}",
    "/connectors/{connector}/tasks/{task}": "/connectors/{connector}/tasks/{task}",
    "/connector-plugins/{pluginName}": "/connector-plugins/{pluginName}",
    SIDECAR_PREFIX: f"{SIDECAR_PREFIX}/{{other}}",
}
OTHER = "{other}"

__all__ = [
    "CONNECT",
    "FALLBACK_LABELS",
    "NO_BODY",
    "OPENAPI_PATH",
    "OTHER",
    "ROUTES",
    "SIDECAR",
    "SIDECAR_PREFIX",
    "TEXT",
    "Body",
    "Param",
    "Route",
    "label_of",
]
