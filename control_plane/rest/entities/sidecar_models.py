"""The answers and request bodies of the sidecar's own endpoints (``/_sidecar/...``, ``/healthz``,
``/readyz``), as typed models for the OpenAPI document (``rest.routing.openapi``). They describe what the handlers
render (``rest.resources``); the fuzzer checks the answers against them."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Open(BaseModel):
    """A shape that may grow: keys beyond the ones named are allowed."""

    model_config = ConfigDict(extra="allow")


class Liveness(BaseModel):
    status: Literal["ok"]


class ReadinessInfo(BaseModel):
    ready: bool
    checks: dict[str, bool] = Field(description="view_caught_up (with a view) or worker_version_detected")
    degraded: dict[str, str] | None = Field(
        None, description="parts that do not work while the sidecar is ready, and why (sidecars_topic)"
    )


class FeatureDecision(Open):
    mode: Literal["native", "emulated", "unavailable"]
    spec: str
    native_since: str | None
    reason: str
    summary: str
    emulation: str | None


class RetryBoundsInfo(BaseModel):
    max_retries: int
    initial_backoff_ms: float
    max_backoff_ms: float
    backoff_multiplier: float
    jitter_factor: float


class KafkaWritesInfo(BaseModel):
    writes: list[str] = Field(description="the kinds of topic written through it: status, config, offsets, audit")
    retry: RetryBoundsInfo
    attempt_timeout_ms: dict[str, int] = Field(description="per kind of topic, the bound of one attempt")
    retriable: str
    acknowledged: str


class CapabilitiesInfo(Open):
    worker_version: str | None = Field(description="the version that decides: the oldest live worker's")
    worker_versions: dict[str, str | None] = Field(
        description="the workers that decided: the given workers that answered GET / and every live member of the "
        "workers' group (null: its version is unknown)"
    )
    group: str | None = Field(
        None, description="the workers' group whose live members decided too (null: the given workers alone)"
    )
    unknown: str | None = Field(
        None,
        description="why a live worker's version is unknown (null: none is); until it is known the version that "
        "decides can go down, not up",
    )
    detected_at: float | None
    features: dict[str, FeatureDecision]
    advertised_version: str | None = Field(description="what GET / advertises (null: no worker reported its version)")
    kafka_writes: KafkaWritesInfo | None = Field(
        None, description="the sidecar's one write path to Kafka: the topics written through it, its retry bounds"
    )


class ClusterWorkerInfo(BaseModel):
    id: str = Field(description="its member id in the workers' group")
    url: str = Field(description="its advertised REST URL")
    host: str
    version: str | None = Field(description="its GET / version; null when it did not answer")
    leader: bool
    config_offset: int = Field(description="the config-topic offset it had read when it joined")
    plugins: dict[str, dict[str, list[str | None]]] | None = Field(
        description="its installed plugins, type -> class -> versions (null where the worker does not report "
        "one), as the live sidecar in front of it reports them; null: unknown (no sidecar in front of it)"
    )


class ClusterSidecarInfo(BaseModel):
    id: str
    url: str | None = Field(description="where it is reached (ADVERTISED_URL)")
    version: str = Field(description="the sidecar's release")
    workers: dict[str, str | None] = Field(description="the workers it knows and their versions")
    view_lag: dict[str, int | None] = Field(description="records of each topic its view has not read yet")
    plugins: dict[str, str] = Field(
        description="the workers whose installed plugins it reports (their id) -> the digest of that report"
    )
    write_wait_ms: float = Field(description="how long after a write it answers it (the read window's commit wait)")
    auto_restart: bool = Field(
        description="whether it restarts the failed connectors its settings choose: it has the fence and AUTO_RESTART "
        "is on (the first ready one acts)"
    )
    auto_restart_chosen: bool = Field(
        description="whether it restarts the connectors an operator chose one by one (acts only when no ready "
        "sidecar has auto_restart)"
    )
    history: bool = Field(description="whether it records the config history (the first ready one does)")
    ready: bool = Field(description="whether its view has caught up: only a ready sidecar acts for the cluster")
    seen_ms: int = Field(description="the broker's time of its last presence record")


class FenceInfo(BaseModel):
    connector: str
    sidecar: str = Field(description="the sidecar that holds it")
    since_ms: int = Field(description="the broker's time of the claim that took it")
    expires_ms: int = Field(description="the broker's time its lease ends unless renewed")


class ClusterInfo(Open):
    group: str = Field(description="the workers' group.id")
    state: str = Field(description="the group's state: Stable, PreparingRebalance, CompletingRebalance, Empty")
    protocol: str = Field(description="Connect's group protocol: default, compatible or sessioned")
    leader_url: str | None
    workers: list[ClusterWorkerInfo]
    read_at: float
    error: str | None = Field(description="why the group could not be read")
    sidecar: str | None = Field(description="how this sidecar names itself to the others (host:port/process)")
    fences: list[FenceInfo] = Field(description="the connectors' fences held now, by connector")
    sidecars: list[ClusterSidecarInfo] = Field(description="the live sidecars of the cluster, by id")


class SidecarInfo(Open):
    capabilities: CapabilitiesInfo
    workers: list[str]
    settings: dict[str, Any]
    view: dict[str, Any] | None


class StatusWriteStateInfo(BaseModel):
    key: str
    kind: str
    state: str = Field(description="queued, sending, waiting-retry or failed")
    attempts: int
    last_error: str | None
    next_retry_ms: int | None
    first_submitted_ms: int


class StatusWritesInfo(BaseModel):
    topic: str | None
    running: bool
    pending: list[StatusWriteStateInfo]
    failed: list[StatusWriteStateInfo]


class EarlierTopicConfig(BaseModel):
    connector: str
    version: int = Field(description="the config history's version (its config topic offset) that named the topic")
    via: str = Field(description="topics or topics.regex")
    named_at_ms: int
    until_ms: int = Field(description="when the next version, the first that no longer named it, was written")
    deleted: bool = Field(description="the connector is deleted now")


class TopicConnectors(BaseModel):
    topic: str
    connectors: list[str] = Field(description="the connectors whose active topics (KIP-558) include it")
    earlier_configs: list[EarlierTopicConfig] = Field(
        description="per connector whose newest config does not name the topic, the newest earlier one that did "
        "(a sink's topics or topics.regex), from the config history"
    )


class TopicUse(BaseModel):
    topic: str
    task: int | None
    discover_timestamp: int | None


class ConnectorTopicUsage(BaseModel):
    connector: str
    topics: list[TopicUse]


class StateCount(BaseModel):
    total: int
    by_state: dict[str, int]


class FailedInstance(BaseModel):
    connector: str
    task: int | None = Field(default=None, description="absent for the connector itself")
    worker_id: str | None
    trace: str | None
    since: str | None
    since_ms: int | None


class FailedInstances(BaseModel):
    connectors: list[FailedInstance]
    tasks: list[FailedInstance]


class StateChangeInfo(BaseModel):
    time: str | None
    timestamp_ms: int | None
    connector: str
    task: int | None
    previous: str | None
    state: str
    worker_id: str | None
    generation: int | None


class StateTimelineInfo(BaseModel):
    capacity: int
    recorded: int
    oldest: str | None
    oldest_ms: int | None


class StateSummaryInfo(BaseModel):
    connectors: StateCount
    tasks: StateCount
    failed: FailedInstances
    recent_changes: list[StateChangeInfo]
    timeline: StateTimelineInfo


class StateChangesInfo(BaseModel):
    changes: list[StateChangeInfo]
    timeline: StateTimelineInfo


class TopicCreationRequest(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "config": {
                        "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
                        "topic.creation.default.replication.factor": "1",
                        "topic.creation.default.partitions": "3",
                    },
                    "topics": ["orders"],
                }
            ]
        }
    )

    config: dict[str, str]
    topics: list[str] = Field(min_length=1)


class TopicShapeInfo(BaseModel):
    partitions: int
    replication_factor: int
    configs: dict[str, str]


class TopicPlanInfo(BaseModel):
    topic: str
    group: str | None
    requested: TopicShapeInfo | None = Field(description="-1: the broker's default")
    created_with: TopicShapeInfo | None
    refused: str | None
    exists: bool
    existing: TopicShapeInfo | None
    differences: list[dict[str, Any]]


class CreationProblem(BaseModel):
    key: str | None
    group: str | None
    entry: str | None
    finding: str
    severity: str
    message: str


class CreationPreviewInfo(BaseModel):
    """KIP-158: what Connect does with the topic.creation.* settings of a configuration."""

    connector: str | None
    creates_topics: bool
    reason: str | None
    problems: list[CreationProblem]
    topics: list[TopicPlanInfo]


class PluginResolution(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    class_key: str
    version_key: str
    plugin: str
    class_: str | None = Field(alias="class")
    requested: str | None
    requirement: str | None
    installed: list[str]
    selected: str | None
    runs: str | None
    outcome: str
    error: str | None
    reason: str | None


class PluginVersionReportInfo(BaseModel):
    """KIP-891: what each plugin key of a connector resolves to, on this cluster."""

    connector: str | None
    worker_version: str | None
    mode: str
    plugins: list[PluginResolution]


class CheckedWorkerInfo(BaseModel):
    worker: str = Field(description="its id, as Connect writes it in the status topic (host:port)")
    version: str | None = Field(description="its Connect version")
    enforcement: Literal["enforced by the worker", "checked, not enforced by the worker"]
    reported_by: str | None = Field(description="the sidecar that reports its plugins; null: this sidecar's worker")


class PinNotHoldingInfo(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    connector: str
    class_key: str
    version_key: str
    class_: str | None = Field(alias="class")
    requested: str | None
    requirement: str | None
    worker: str
    worker_version: str | None
    installed: list[str] = Field(description="the versions installed on that worker")
    runs: str | None = Field(description="the version that worker runs (before 4.1: its newest, whatever the pin)")
    outcome: str
    enforcement: Literal["enforced by the worker", "checked, not enforced by the worker"]
    reason: str


class PluginPinsInfo(BaseModel):
    """KIP-891: the version pins of the cluster's connectors that do not hold on some worker now."""

    workers: list[CheckedWorkerInfo] = Field(description="the workers the pins are checked against")
    unknown_workers: list[str] = Field(description="the group's workers whose installed plugins nobody reports")
    pins: int = Field(description="the pins checked (each pinned plugin key of each connector)")
    not_holding: list[PinNotHoldingInfo]


class AutoRestartErrorInfo(BaseModel):
    status: int | None = Field(description="the worker's answer's status; null: no answer (unreachable, too slow)")
    message: str = Field(description="the worker's message, or why there was no answer")


class AutoRestartBudgetInfo(BaseModel):
    restarts: int = Field(description="AUTO_RESTART_BUDGET: the cluster's restarts per window; 0: unbounded")
    window_s: float = Field(description="AUTO_RESTART_BUDGET_WINDOW_S")
    spent: int = Field(description="restarts the sidecars recorded sending in the window that ends now")
    held_back: list[str] = Field(description="the connectors due a restart that wait for room in the window")


class AutoRestartTaskInfo(BaseModel):
    restarts: int = Field(description="restarts of this task in the connector's current run of failures")


class ConfigChangeInfo(BaseModel):
    """One key's change between two versions of a connector's config."""

    name: str = Field(description="the config key")
    op: Literal["added", "removed", "changed"]
    before: str | None = Field(None, description="the value before ([hidden] for a secret); absent when added")
    after: str | None = Field(None, description="the value after ([hidden] for a secret); absent when removed")
    secret: bool = Field(False, description="a secret: only whether it changed is told, never its value or a digest")


class ConfigVersionInfo(BaseModel):
    """One version of a connector in the config history: a change read from the config topic."""

    version: int = Field(description="the change's offset in Connect's config topic: the version's id")
    timestamp_ms: int = Field(description="the config record's timestamp (epoch ms)")
    change: Literal["created", "updated", "state", "deleted"]
    state: str | None = Field(description="the target state after the change (STARTED, PAUSED, STOPPED)")
    who: str | None = Field(description="the principal whose request through a sidecar made it; null otherwise")
    via_sidecar: str | None = Field(description="the sidecar the change was made through")
    changes: list[ConfigChangeInfo] = Field(description="key by key, from the version before")
    first_kept: bool | None = Field(None, description="the oldest version kept: its changes are from nothing")
    config: dict[str, str | None] | None = Field(
        None, description="the whole config (one version's answer only); secrets [hidden]"
    )


class ConfigHistoryInfo(BaseModel):
    """A connector's config history (``domain.history``), newest first."""

    connector: str
    retention_s: float
    recorded_by: str | None = Field(description="the live sidecar that records the cluster's history")
    versions: list[ConfigVersionInfo]
    next_before: int | None = Field(description="with ?limit: the before= of the next page; null: no older version")


class ConfigVersionDetail(ConfigVersionInfo):
    connector: str


class ConfigDiffInfo(BaseModel):
    """The changes from one version of a connector's config to another."""

    connector: str
    from_: int = Field(alias="from")
    to: int
    state: dict[str, str | None] = Field(description="the target state of each version (from, to)")
    changes: list[ConfigChangeInfo]


class RollbackBody(BaseModel):
    """The values of the version's secrets the sidecar cannot restore (it never keeps their values)."""

    secrets: dict[str, str] = Field(default_factory=dict)


class PlanDocument(BaseModel):
    source: str = Field(description="where the document comes from (a file name), named in errors")
    document: Any = Field(description="a connector ({name, config} or a config with its name), or a list")


class PlanRequest(BaseModel):
    """The connectors the cluster should run, as files hold them."""

    documents: list[PlanDocument]
    prune: bool = Field(False, description="delete the connectors no document names (never otherwise)")
    prune_matching: str = Field(".*", description="a regular expression: prune only the names it matches whole")


class PlanStepInfo(BaseModel):
    name: str
    action: Literal["create", "update", "delete", "unchanged"]
    changes: list[ConfigChangeInfo]
    seen: str | None = Field(
        description="a digest of the config the plan compared with, keyed by the sidecar (HMAC-SHA256); null: none"
    )
    config: dict[str, str | None] | None = Field(None, description="what a create or update writes")
    source: str | None = None
    errors: list[str] | None = Field(None, description="the worker's validation errors (apply refuses them)")


class PlanInfo(BaseModel):
    """A plan: apply it as it is (POST /_sidecar/apply)."""

    fingerprint: str = Field(description="of what was compared: apply refuses the plan once it changed")
    prune: bool
    summary: dict[str, int]
    connectors: list[PlanStepInfo]


class ApplyInfo(BaseModel):
    applied: list[dict[str, str]] = Field(description="the steps made, in order")
    fingerprint: str


class BulkSelector(BaseModel):
    """Which connectors: every criterion given holds; a list holds when any of its values does."""

    names: list[str] | None = Field(None, description="these connectors (an unknown or hidden one: its 404)")
    pattern: str | None = Field(None, description="a regular expression the whole name matches")
    states: list[str] | None = Field(None, description="the connector's state (RUNNING, PAUSED, STOPPED, FAILED...)")
    task_states: list[str] | None = Field(None, description="any of its tasks in one of these states")
    classes: list[str] | None = Field(None, description="connector.class, as configured or its simple name")
    types: list[Literal["source", "sink"]] | None = None
    topic: str | None = Field(None, description="a topic its tasks read or write (its active topics)")


class BulkBody(BaseModel):
    action: Literal["pause", "resume", "stop", "restart", "delete", "auto-restart-on", "auto-restart-off"]
    selector: BulkSelector
    dry_run: bool = Field(False, description="list what would be acted on, act on nothing")
    include_tasks: bool = Field(False, description="restart: Connect's includeTasks")
    only_failed: bool = Field(False, description="restart: Connect's onlyFailed")


class BulkItemInfo(BaseModel):
    name: str
    result: Literal["selected", "done", "refused", "failed"]
    status: int | None = Field(None, description="the status the connector's single request got")
    error: dict[str, Any] | None = Field(None, description='Connect\'s {"error_code", "message"}')


class BulkInfo(BaseModel):
    action: str
    dry_run: bool
    selector: dict[str, Any]
    include_tasks: bool | None = None
    only_failed: bool | None = None
    counts: dict[str, int] = Field(description="selected (all), done, refused, failed")
    connectors: list[BulkItemInfo]


class AutoRestartInfo(BaseModel):
    """Auto-restart of one connector (``domain.auto_restart``): whether it is on, and what it did."""

    connector: str
    enabled: bool = Field(description="whether failed instances of this connector are restarted")
    chosen_by: Literal["connector", "settings"] = Field(
        description="connector: a choice made for it (PUT), which wins; settings: AUTO_RESTART and its pattern"
    )
    restarts: int = Field(
        description="restarts sent in the current run of failures, whatever the worker answered (a refused one counts)"
    )
    last_restart_ms: int | None = Field(description="when the last restart was sent (epoch ms)")
    next_restart_ms: int | None = Field(description="when the next restart is due if it still fails (epoch ms)")
    last_error: AutoRestartErrorInfo | None = Field(
        description="the worker's refusal of the last restart; null: the worker took it"
    )
    gave_up: bool = Field(description="AUTO_RESTART_MAX_RESTARTS were sent and it still failed: no more")
    gave_up_reason: str | None = Field(description="why it gave up (the count, and the last refusal)")
    held_back: bool = Field(
        description="a restart is due and waits for room in the cluster's budget (AUTO_RESTART_BUDGET)"
    )
    by_sidecar: str | None = Field(description="the sidecar that sent the last restart")
    tasks: dict[str, AutoRestartTaskInfo] = Field(description="per task id, its restarts in this run")


class AutoRestartsInfo(BaseModel):
    """Auto-restart across the cluster: the schedule and every connector with a choice or a restart."""

    enabled: bool = Field(description="AUTO_RESTART: on for the connectors AUTO_RESTART_CONNECTORS matches")
    connectors_pattern: str
    backoff_unit_s: float
    backoff_cap_s: float
    max_restarts: int | None = Field(description="restarts before giving up; null: never")
    acting_sidecar: str | None = Field(
        description="the sidecar that restarts: the first by id of the live, ready sidecars with auto_restart, "
        "else with auto_restart_chosen; null: nobody can"
    )
    budget: AutoRestartBudgetInfo
    connectors: list[AutoRestartInfo]


class AutoRestartChoice(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [{"enabled": True}]})

    enabled: bool = Field(description="restart this connector's failed instances, whatever the settings say")


class ConnectorLagInfo(BaseModel):
    """A sink's consumer lag per partition (``type: sink``), or a source's offset commits per source partition
    (``type: source``)."""

    model_config = ConfigDict(extra="allow")

    connector: str
    type: Literal["sink", "source"]
    lag: int | None = Field(None, description="a sink: the records its group has not committed, summed")
    max_partition_lag: int | None = Field(None, description="a sink: the largest lag of one partition")
    group: str | None = Field(None, description="a sink: its consumer group")
    last_commit_ms: int | None = Field(None, description="a source: when it last committed an offset (epoch ms)")
    since_last_commit_s: float | None = Field(None, description="a source: seconds since then")
    commits: int | None = Field(None, description="a source: offset records read (a counter)")
    partitions: list[dict[str, Any]] = Field(default_factory=list)
    error: str | None = Field(None, description="a sink: why its lag is not known")


class LagsInfo(BaseModel):
    refreshed_ms: float | None = Field(description="when the sinks' lag was last read from the broker")
    refresh_took_s: float | None
    refresh_requests: int | None = Field(description="requests to the broker that refresh took")
    refresh_interval_s: float
    sinks: list[ConnectorLagInfo]
    sources: list[ConnectorLagInfo]
