"""The sidecar's one typed settings object.

Sources, highest priority first: explicit arguments (the command line), environment variables with
the ``CONTROL_PLANE_`` prefix, then the Connect worker's own properties file when one is given
(``CONTROL_PLANE_WORKER_PROPERTIES`` or ``--worker-properties``: the Kubernetes sidecar case), then
defaults. From the worker file the sidecar learns the keys in ``WORKER_KEYS`` (under Connect's own
names), the Kafka client security settings, and, when no Connect URL is set, the worker's listener.

``load_settings`` validates everything once, at start; a bad value raises ``SettingsError`` whose
message names the key as the operator wrote it (the worker property or the environment variable).
"""

from __future__ import annotations

import os
import re
import socket
from typing import Annotated, Any, Literal

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, NoDecode, PydanticBaseSettingsSource, SettingsConfigDict
from pydantic_settings import SettingsError as SourceError

from .kafka_security import KafkaSecurityError, check_kafka_security
from .modes import FeatureMode
from .rules.config_providers import PROVIDERS_KEY
from .rules.secrets import DEFAULT_SECRET_PATTERNS
from .rules.worker_id import advertised_worker_id, worker_id_of
from .worker_properties import connect_url_from_listeners, read_properties

ENV_PREFIX = "CONTROL_PLANE_"

# Connect worker property -> settings field. Names and defaults follow Connect's DistributedConfig,
# WorkerConfig and the status-store retry proposal.
WORKER_KEYS: dict[str, str] = {
    "bootstrap.servers": "bootstrap_servers",
    "group.id": "group_id",
    "config.storage.topic": "config_storage_topic",
    "offset.storage.topic": "offset_storage_topic",
    "status.storage.topic": "status_storage_topic",
    "topic.tracking.enable": "topic_tracking_enable",
    "topic.tracking.allow.reset": "topic_tracking_allow_reset",
    "topic.creation.enable": "topic_creation_enable",
    "consumer.group.id": "consumer_group_id",
    "producer.bootstrap.servers": "worker_producer_bootstrap_servers",
    "consumer.bootstrap.servers": "worker_consumer_bootstrap_servers",
    "consumer.auto.offset.reset": "worker_consumer_auto_offset_reset",
    "exactly.once.source.support": "exactly_once_source_support",
    "plugin.path": "plugin_path",
    "rest.advertised.host.name": "worker_advertised_host_name",
    "task.shutdown.graceful.timeout.ms": "task_shutdown_graceful_timeout_ms",
    "internal.topics.automatic.creation.enable": "sidecars_topic_create",
    "status.storage.retry.max.retries": "status_storage_retry_max_retries",
    "status.storage.retry.initial.backoff.ms": "status_storage_retry_initial_backoff_ms",
    "status.storage.retry.max.backoff.ms": "status_storage_retry_max_backoff_ms",
    "status.storage.retry.backoff.multiplier": "status_storage_retry_backoff_multiplier",
    "status.storage.retry.jitter.factor": "status_storage_retry_jitter_factor",
}
FIELD_TO_WORKER_KEY = {field: key for key, field in WORKER_KEYS.items()}
# Kafka client settings the sidecar's own clients need to reach the same brokers as the worker.
SECURITY_PREFIXES = ("security.protocol", "sasl.", "ssl.")
DEFAULT_CONNECT_URL = "http://127.0.0.1:8083"
# Parts of the names of Kafka's password-type client settings (ssl.*.password, sasl.jaas.config,
# sasl.oauthbearer.*.secret, *.passphrase ...): never shown.
SECRET_WORDS = ("password", "jaas", "secret", "passphrase")


class SettingsError(ValueError):
    """A setting is missing or out of range; the message names the key."""


class WorkerPropertiesSource(PydanticBaseSettingsSource):
    """Settings learned from a Connect worker's properties file."""

    def __init__(self, settings_cls: type[BaseSettings], path: str | None) -> None:
        super().__init__(settings_cls)
        self.path = path
        self.values: dict[str, Any] = {}
        if not path:
            return
        try:
            props = read_properties(path)
        except OSError as err:
            raise SettingsError(f"cannot read the worker properties file {path}: {err.strerror}") from err
        for key, field in WORKER_KEYS.items():
            if key in props:
                self.values[field] = props[key].strip()  # ConfigDef.parseType trims values
        security = {k: v for k, v in props.items() if k.startswith(SECURITY_PREFIXES)}
        if security:
            self.values["kafka_client_properties"] = security
        providers = {k: v for k, v in props.items() if k == PROVIDERS_KEY or k.startswith(f"{PROVIDERS_KEY}.")}
        if providers:
            self.values["config_providers"] = providers
        listener = connect_url_from_listeners(props.get("listeners", ""))
        if listener:
            self.values["connect_urls"] = listener
        worker_id = advertised_worker_id(props)
        if worker_id:
            self.values["worker_id"] = worker_id

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return self.values.get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return dict(self.values)


class Settings(BaseSettings):
    """Every setting of the sidecar. Each field's docstring is its description: the settings reference of
    the documentation is generated from it (docs/reference/settings.md), so it is written here once."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore", frozen=True, use_attribute_docstrings=True)

    # -- The sidecar's HTTP server
    host: str = "127.0.0.1"
    """The address the sidecar listens on. Beyond loopback without access control, a warning is logged at
    start."""
    port: int = Field(8084, ge=0, le=65535)
    """The port the sidecar listens on."""
    log_format: Literal["auto", "json", "console"] = "auto"
    """``json``, ``console``, or ``auto``: console on a terminal, JSON otherwise."""
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    """The lowest level logged."""
    log_requests: bool = False
    """One log line per proxied request at info (otherwise at debug only: a line costs more than the hop
    itself)."""

    # -- The upstream Connect cluster
    worker_properties: str | None = None
    """The Connect worker's properties file to learn from (the Kubernetes sidecar case): the brokers, the
    internal topics, every setting that names a worker property (``WORKER_KEYS``), the Kafka client security
    settings and, when no URL is set, the worker's ``listeners``."""
    connect_urls: Annotated[tuple[str, ...], NoDecode] = (DEFAULT_CONNECT_URL,)
    """The Connect workers of one cluster, comma-separated ``http://`` or ``https://`` URLs. Default: the
    worker's ``listeners`` from its properties file (a wildcard host becomes 127.0.0.1), else
    ``http://127.0.0.1:8083``."""
    worker_id: str | None = None
    """The id of the worker of ``connect_urls`` (with one URL) as Connect writes it in the status topic: the
    ``host:port`` of its advertised URL. Default: from its properties file, as ``RestServer.advertisedUrl``
    builds it (``rest.advertised.host.name``, ``rest.advertised.port``, ``listeners``), else the URL's
    ``host:port``. Other sidecars match the plugins this sidecar reports of its worker to statuses and to the
    group's workers by it: a wrong one leaves the worker's plugins unknown to them."""
    upstream_connect_timeout_s: float = Field(5.0, gt=0)
    """How long connecting to a worker may take."""
    upstream_read_timeout_s: float = Field(95.0, gt=0)
    """How long a worker's answer may take. Connect's own REST requests may take up to 90 s (its
    ``RestServer`` request timeout) before it answers."""
    upstream_pool_timeout_s: float = Field(10.0, gt=0)
    """How long a request may wait for a free pooled connection, or for a slot under
    ``upstream_max_concurrent_requests``."""
    upstream_max_connections: int = Field(100, ge=1)
    """Pooled connections to the workers of the cluster."""
    upstream_keepalive_s: float = Field(15.0, gt=0)
    """Idle time before a pooled connection is closed (below Jetty's 30 s)."""
    worker_down_s: float = Field(5.0, ge=0)
    """How long a worker that refused a connection is tried last."""
    rebalance_retry_max: int = Field(5, ge=0)
    """Retries of a worker's 409 caused by a rebalance in an operation the sidecar composes (a client's request
    passed through gets the 409 at once); other 409s are returned at once."""
    rebalance_retry_initial_backoff_ms: int = Field(200, ge=0)
    """The first wait before a rebalance 409 is retried; it doubles up to the max backoff."""
    rebalance_retry_max_backoff_ms: int = Field(3000, ge=0)
    """The longest wait between retries of a rebalance 409."""
    apply_concurrency: int = Field(8, ge=1)
    """The steps of an apply (``POST /_sidecar/apply``) carried out at once; a request's ``concurrency`` (the
    CLI's ``--concurrency``) sets its own."""
    apply_deadline_s: float = Field(600.0, gt=0)
    """How long an apply may take: its steps are retried (a worker rebalancing, an unknown outcome) with the
    ``rebalance_retry_*`` backoff until then, and its writes end then; a request's ``deadline_s`` (the CLI's
    ``--deadline-s``) sets its own."""
    capability_refresh_s: float = Field(60.0, gt=0)
    """How often the workers' versions are asked again (``GET /``), which decides each feature's mode."""
    worker_probe_s: float = Field(2.0, gt=0)
    """How often the workers are probed while the view answers reads (for the stale marks)."""
    worker_probe_timeout_s: float = Field(2.0, gt=0)
    """How long one liveness probe of a worker may take: a worker that hangs (accepts connections, never
    answers) counts as down after it, the view's answers are marked stale, and requests go elsewhere
    first."""
    read_your_writes_timeout_s: float = Field(5.0, gt=0)
    """After a change of a connector through the sidecar, how long the view may take to read it back before
    the answer goes to the client (read-your-writes)."""
    view_read_sync: Literal["missing", "always", "never"] = "missing"
    """When the view reads its topics to the ends they had when a read arrived, before it answers, so that a
    change acknowledged through another sidecar shows: ``missing``, before it answers that a connector does
    not exist; ``always``, before every answer (a round trip to Kafka per read); ``never``."""
    view_read_sync_s: float = Field(1.0, gt=0)
    """How long that may take; then the view answers what it has, marked stale (the ``X-Sidecar-Stale``
    header)."""
    view_read_sync_window_s: float = Field(0.025, gt=0, le=1.0)
    """With ``always``: a read is answered at once when the view has read its topics to ends asked for at
    most this long ago (the view asks ahead while reads come), and a write through the sidecar is answered
    this long after it is done, so that any read through any sidecar after the answer shows it. Every
    sidecar of a cluster must have the same value."""

    # -- Hardening: request limits (0 turns a limit off)
    max_header_bytes: int = Field(65536, ge=0)
    """A request head (request line and headers) over this is refused with 431 in Connect's error shape.
    Jetty's own limit (8192 bytes, which the sidecar's Connect routes mirror and the workers apply) comes
    first below it."""
    max_body_bytes: int = Field(16 * 1024 * 1024, ge=0)
    """A request body over this is refused with 413 in Connect's error shape (Connect has no limit of its
    own)."""
    request_budget_s: float = Field(30.0, ge=0)
    """How long a request may wait for the workers: then 504 in Connect's error shape, or the view's answer
    where the route has one (Connect's own request timeout is 90 s, then a 500 ``Request timed out``)."""
    upstream_max_concurrent_requests: int = Field(256, ge=0)
    """Requests forwarded to the workers at once; more wait for a slot (at most
    ``upstream_pool_timeout_s`` and the budget), then get 503 in Connect's error shape with
    ``Retry-After``."""
    shutdown_grace_s: int = Field(30, ge=0)
    """On SIGTERM: stop accepting, and let requests under way finish for at most this long (whole
    seconds); one still running then gets 503."""
    shutdown_flush_timeout_s: float = Field(10.0, ge=0)
    """Then how long pending status writes (with their retries) may take to reach Kafka before they are
    dropped."""

    # -- TLS on the sidecar's own listener
    tls_certfile: str | None = None
    """The listener's certificate (chain), PEM. Set with ``tls_keyfile``; the files are checked every
    ``tls_reload_interval_s`` and, when changed, loaded again: new connections get the new certificate
    without a restart."""
    tls_keyfile: str | None = None
    """The listener's private key, PEM."""
    tls_keyfile_password: str | None = None
    """The private key's password, if it has one (never shown)."""
    tls_client_ca_file: str | None = None
    """With TLS: clients must present a certificate this CA (PEM) signed."""
    tls_reload_interval_s: float = Field(10.0, gt=0)
    """How often the TLS files are checked for a change."""

    # -- The sidecar's own configuration checks
    config_checks: Literal["enforce", "warn"] = "enforce"
    """What a check of the sidecar's own (topic-creation rules, plugin pins older workers cannot run) does
    with a create, update or PATCH it finds a problem in: refuse it with Connect's 400 (``enforce``), or let
    it through with ``Warning`` headers (``warn``). Rules of newer Connect releases the workers lack are
    always enforced, as those releases refuse."""

    # -- The materialized view of the cluster
    view_enabled: bool = True
    """Tail the internal topics into the view (needs the bootstrap servers and the config and status
    topics)."""
    read_from: Literal["view", "upstream"] = "view"
    """Who answers the read endpoints while a worker answers: the view (once ready) or the workers."""
    state_timeline_size: int = Field(5000, ge=1)
    """How many state changes of connectors and tasks the view keeps (``GET /_sidecar/state-changes``)."""

    # -- Per feature: decided from the workers' version, or forced
    feature_topic_tracking: FeatureMode = FeatureMode.AUTO
    """KIP-558 topic tracking: ``auto`` (from the workers' version), ``native`` or ``emulated``."""
    feature_topic_creation: FeatureMode = FeatureMode.AUTO
    """KIP-158 topic-creation checks: ``native`` turns the sidecar's checks off (the preview stays)."""
    feature_stop_and_offsets_read: FeatureMode = FeatureMode.AUTO
    """KIP-875 stop and offsets read: ``auto``, ``native`` or ``emulated``."""
    feature_offsets_alter_reset: FeatureMode = FeatureMode.AUTO
    """KIP-875 offsets alter and reset: ``auto``, ``native`` or ``emulated``."""
    feature_plugin_versions: FeatureMode = FeatureMode.AUTO
    """KIP-891 plugin version pins: ``auto``, ``native`` or ``emulated``."""
    feature_status_store_retries: FeatureMode = FeatureMode.AUTO
    """The status-store retry proposal for the sidecar's own writes to Kafka (status, config, offsets, audit)."""
    feature_initial_state: FeatureMode = FeatureMode.AUTO
    """KIP-980 ``initial_state`` on create (Connect 3.7)."""
    feature_logger_cluster_scope: FeatureMode = FeatureMode.AUTO
    """KIP-976 cluster-wide logger levels (Connect 3.7)."""
    feature_patch_config: FeatureMode = FeatureMode.AUTO
    """KIP-477 ``PATCH /connectors/{c}/config`` (Connect 3.8)."""
    feature_health: FeatureMode = FeatureMode.AUTO
    """KIP-1017 ``GET /health`` (Connect 3.9)."""
    feature_order_in_group: FeatureMode = FeatureMode.AUTO
    """``order_in_group`` in plugin definitions (Connect 4.2); ``native`` keeps the workers' own shape
    (``order`` before 4.2)."""
    advertised_version: Literal["effective", "worker"] = "effective"
    """What ``GET /`` says the version is: ``effective``, the newest Connect release whose whole REST API the
    sidecar provides on this cluster; ``worker``, the workers' own: the answering worker's ``GET /`` with the
    oldest live worker's version (the same on every sidecar during a rolling upgrade)."""
    health_check_timeout_s: float = Field(10.0, gt=0)
    """``GET /health`` on workers before 3.9: how long their herder may take to answer (Connect's own
    10 s)."""
    feature_restart_options: FeatureMode = FeatureMode.AUTO
    """KIP-745 restart with ``includeTasks`` and ``onlyFailed`` (Connect 3.0)."""
    feature_plugin_listing: FeatureMode = FeatureMode.AUTO
    """KIP-769 ``connectorsOnly=false`` and plugin config definitions (Connect 3.2)."""
    feature_logger_levels: FeatureMode = FeatureMode.AUTO
    """Logger level bodies read as log4j 2 reads them (Connect 4.0)."""
    feature_validate_unresolved: FeatureMode = FeatureMode.AUTO
    """Validate answers show config provider references as given (the 4.4 line); ``native`` keeps the
    workers' answers, which show the values the providers resolved."""

    # -- Learned from the worker's properties file (Connect's defaults)
    bootstrap_servers: str = "localhost:9092"
    """The Kafka cluster of the Connect cluster."""
    group_id: str = "connect-cluster"
    """The Connect cluster's group."""
    config_storage_topic: str | None = None
    """The Connect cluster's config topic."""
    offset_storage_topic: str | None = None
    """The Connect cluster's offsets topic."""
    status_storage_topic: str | None = None
    """The Connect cluster's status topic."""
    consumer_group_id: str | None = None
    """A worker-wide sink consumer group override."""
    worker_consumer_auto_offset_reset: str | None = None
    """Where the worker's sink consumers start on a partition with no committed offset (unset: ``earliest``,
    Connect's default for sinks): the sinks' lag counts such a partition from its log start, or not at all."""
    worker_producer_bootstrap_servers: str | None = None
    """Where the worker's connectors produce: emulated offsets of a connector on another Kafka cluster are
    refused."""
    worker_consumer_bootstrap_servers: str | None = None
    """Where the worker's connectors consume: emulated offsets of a connector on another Kafka cluster are
    refused."""
    plugin_path: str | None = None
    """The workers' plugin path, read (if this process can) for the converters that workers before 3.2 do
    not list."""
    exactly_once_source_support: str = "disabled"
    """The worker's KIP-618 switch: with ``enabled``, emulated changes of source offsets are refused (they
    need zombie fencing)."""
    task_shutdown_graceful_timeout_ms: int = Field(5000, ge=0)
    """How long after the worker's leader dropped a task an emulated alter or reset waits for the task's
    last commit."""
    topic_tracking_enable: bool = True
    """KIP-558's switch. Without the worker's properties file, and unless both tracking switches are set,
    topic tracking goes to the workers (the sidecar cannot know their switches)."""
    topic_tracking_allow_reset: bool = True
    """KIP-558's reset switch."""
    topic_creation_enable: bool = True
    """KIP-158's switch: with false, the worker ignores a source connector's ``topic.creation.*`` keys and
    the checks say so with a warning."""
    kafka_client_properties: dict[str, str] = Field(default_factory=dict)
    """The Kafka client settings (a JSON object) the sidecar's own clients use to reach the brokers as the
    worker does: ``security.protocol``, ``sasl.*`` and ``ssl.*``."""
    config_providers: dict[str, str] = Field(default_factory=dict)
    """The worker's config providers (a JSON object of its ``config.providers`` and ``config.providers.*``
    properties, learned from its properties file), with which the sidecar resolves ``${provider:path:key}``
    references in connectors' configurations where a rule needs the value (the file, directory and env
    providers only; parameters are hidden where the settings are shown)."""
    status_storage_retry_max_retries: int = Field(5, ge=0, le=2147483647)
    """Retries of a record the sidecar writes to Kafka (status, config, offsets and audit topics) before it
    is given up."""
    status_storage_retry_initial_backoff_ms: int = Field(300, ge=0)
    """The first wait before a write to Kafka is retried; not above the max backoff."""
    status_storage_retry_max_backoff_ms: int = Field(10000, ge=0)
    """The longest wait between retries of a write to Kafka (before the jitter)."""
    status_storage_retry_backoff_multiplier: float = Field(2.0, ge=1.0)
    """The factor by which the wait grows with each retry."""
    status_storage_retry_jitter_factor: float = Field(0.25, ge=0.0, le=1.0)
    """A random share of the wait, up to this factor, added to it."""
    status_write_request_timeout_ms: int = Field(30000, gt=0)
    """The status writer's producer ``request.timeout.ms`` (Kafka's default). One attempt is bounded at
    twice it (a metadata wait and a delivery), then retried; a stop waits at most about this long for
    writes."""

    # -- KIP-875 done by the sidecar where the workers cannot (stop; offsets alter and reset)
    emulation_request_timeout_ms: int = Field(30000, gt=0)
    """The Kafka request timeout of the producer and admin client of these writes; one write is bounded at
    twice this and then fails the request with 500."""
    emulation_read_back_timeout_s: float = Field(30.0, gt=0)
    """How long reading a topic to its end may take: before a change (the herder's refreshed snapshot) and
    to read a write back (the config or offsets topic, the group's offsets); then 500."""
    emulation_task_stop_timeout_s: float = Field(60.0, gt=0)
    """How long an emulated alter or reset waits for the status topic to show the connector's tasks stopped
    (their last offset commits must not overwrite new offsets); then 409, and nothing is written."""

    # -- Several sidecars in front of one cluster
    sidecars_topic: str | None = None
    """The sidecars' own topic (the connectors' fences), created at start when it does not exist; default
    ``<group.id>.control-plane``. Every sidecar of one Connect cluster must name the same topic."""
    sidecars_topic_create: bool = True
    """Whether the sidecar creates its topic when it does not exist; the worker's
    ``internal.topics.automatic.creation.enable`` (KIP-1209, 4.4: false makes a worker refuse to start
    without its internal topics, which operators then create beforehand). False: the topic must exist
    (``control-plane create-sidecars-topic`` creates it as the sidecar would); until it does, ``/readyz``
    says so and writes that need a fence answer 503."""
    sidecars_topic_replication_factor: int = Field(-1, ge=-1)
    """Its replication factor when the sidecar creates it; -1: the broker's ``default.replication.factor``
    (as Connect's ``config.storage.replication.factor``). Its ``min.insync.replicas`` follows: 2 from 3
    replicas, else 1."""
    sidecars_topic_write_timeout_s: float = Field(5.0, gt=0)
    """How long one write to the sidecars' topic may take in all, retries included (a fence's claim, and
    its read back, each at most this long). Past it the topic counts as unwritable: writes the workers do
    natively go through without the fence, with a warning; writes that need it answer 503. Keep it well
    under ``request_budget_s``."""
    fence_enabled: bool = True
    """Fence each connector's writes among the sidecars of the cluster (the sidecars' topic). False: each
    sidecar serializes only its own writes (one sidecar alone, or sidecars that may not use the topic)."""
    fence_lease_ms: int = Field(10000, ge=100)
    """The lease of a connector's fence: how long a sidecar that died holding it blocks the others' writes
    of that connector. Renewed while the holder works."""
    fence_wait_s: float = Field(60.0, gt=0)
    """How long a write waits for another sidecar's fence of the same connector (at most the request's
    budget, ``request_budget_s``); then 500."""
    unknown_outcome_hold_s: float = Field(120.0, gt=0)
    """A write the worker took and did not answer (it stalled, the connection broke) may still be made: the
    connector's writes stay held (its fence among the sidecars) until the worker answers a read queued after
    it, at most this long (Connect's own REST timeout is 90 s). The client is answered at once (504, the
    outcome unknown)."""
    unknown_outcome_settle_s: float = Field(5.0, ge=0)
    """After the worker answered again, how long a write of unknown outcome may still be on its way (Connect
    validates a config off its herder's thread, then queues the write): the connector's writes stay held
    this long more, or until the config topic shows the connector changed."""
    presence_interval_s: float = Field(5.0, gt=0)
    """How often a sidecar writes its presence to the sidecars' topic; one silent for three intervals is
    forgotten by the others."""
    # -- Auto-restart (domain/auto_restart/)
    auto_restart: bool = False
    """Restart failed connectors and tasks with a backoff: every connector whose name matches
    ``AUTO_RESTART_CONNECTORS``. A connector's own choice (``PUT /_sidecar/connectors/{c}/auto-restart``)
    wins over this. Needs the sidecars' topic (one sidecar of the cluster acts, under the connector's fence)."""
    auto_restart_connectors: str = ".*"
    """A regular expression the whole connector name must match for ``AUTO_RESTART`` to cover it."""
    auto_restart_backoff_unit_s: float = Field(60.0, gt=0)
    """The schedule's unit: the n-th restart of a run of failures is due ``unit * n * (n - 1)`` after the one
    before (the first at once): Strimzi's 0, 2, 6, 12, 20, 30, 42, 56 minutes with the default."""
    auto_restart_backoff_cap_s: float = Field(3600.0, gt=0)
    """The longest wait between two restarts (Strimzi's hour by default)."""
    auto_restart_max_restarts: int = Field(0, ge=0)
    """Restarts of one run of failures before giving up (the connector then stays FAILED, shown as given
    up, until it runs through a whole backoff or is restarted by hand); 0: never give up."""
    auto_restart_check_s: float = Field(0.25, gt=0)
    """How often the acting sidecar looks for failed connectors in its view: the delay after a restart is due."""
    auto_restart_budget: int = Field(30, ge=0)
    """The whole cluster's restarts in any ``AUTO_RESTART_BUDGET_WINDOW_S``, whichever sidecar sends them (a
    connector's restart counts once, however many of its tasks it restarts); those that do not fit wait for
    a later pass. 0: unbounded."""
    auto_restart_budget_window_s: float = Field(60.0, gt=0)
    """The window of ``AUTO_RESTART_BUDGET``."""
    # -- Bulk actions (domain/bulk/)
    bulk_concurrency: int = Field(8, ge=1)
    """How many connectors a bulk action (``POST /_sidecar/bulk``) acts on at once; each is a single request's
    write to the workers, so this bounds the requests one bulk action sends them at a time."""
    # -- Config history (domain/history/)
    history_enabled: bool = True
    """Record every change of every connector's config and target state in the sidecars' topic (one sidecar
    of the cluster records; needs the sidecars' topic). False: this sidecar never records (the others may)."""
    history_retention_s: float = Field(30 * 24 * 3600.0, gt=0)
    """How long a version of a connector's config is kept (each live connector's newest always is)."""
    history_secret_key: SecretStr | None = None
    """The key of the digests that stand for secret values in the config history and of plans' fingerprints
    (HMAC-SHA256); the same on every sidecar of the cluster, from a Kubernetes Secret. Unset: the history
    keeps no digest of a secret, only whether it changed between versions (a warning at start says so), and
    a plan applies only through the sidecar that made it, before it restarts."""
    history_check_s: float = Field(0.25, gt=0)
    """How often the recording sidecar records the changes its view read from the config topic."""
    history_max_pending_records: int = Field(10_000, gt=0)
    """History records made and not yet acknowledged by the broker that a sidecar holds (written again until
    they are); when it holds this many, newer changes wait in its view's queue (20,000 changes, the oldest
    then dropped and counted in config_history_dropped_changes)."""
    history_retry_initial_backoff_ms: int = Field(500, gt=0)
    """The wait before history records whose write failed are written again; doubled after each failure."""
    history_retry_max_backoff_ms: int = Field(30_000, gt=0)
    """The longest wait between two writes of history records that were not acknowledged."""
    # -- Lag and freshness (domain/lag/)
    lag_refresh_s: float = Field(30.0, gt=0)
    """How often the sinks' consumer lag is read from the broker (an OffsetFetch per sink's group, one
    ListOffsets for all their partitions); never per request."""
    advertised_url: str | None = None
    """Where the other sidecars and operators reach this sidecar, as its presence says; default
    ``http://<host>:<port>``, the host being the worker's ``rest.advertised.host.name`` (in a worker pod,
    the pod's address), else this machine's name."""
    worker_advertised_host_name: str | None = None
    """The worker's ``rest.advertised.host.name``: the host of the default ``ADVERTISED_URL``."""

    # -- Access control and audit
    auth_enabled: bool = False
    """Authentication and roles. Off, every request is an anonymous admin (a warning at start when the
    sidecar listens beyond loopback)."""
    auth_credentials_file: str | None = None
    """A file of credential entries (token or user, hashed), re-read when it changes."""
    auth_credentials: SecretStr | None = None
    """The same entries (``plain:`` secrets allowed), separated by ``;`` or newlines."""
    auth_file_check_s: float = Field(2.0, gt=0)
    """How often the credentials file is checked for a change."""
    auth_realm: str = "control-plane"
    """The realm of ``WWW-Authenticate``."""
    secret_key_patterns: Annotated[tuple[str, ...], NoDecode] = DEFAULT_SECRET_PATTERNS
    """Connector config keys whose values are secrets: comma-separated regular expressions searched in the
    key, any case."""
    audit_topic: str | None = None
    """Also send the audit log to this Kafka topic."""
    audit_queue_max: int = Field(10000, ge=1)
    """Audit records waiting for Kafka; more are dropped (and counted)."""

    @field_validator("secret_key_patterns", mode="before")
    @classmethod
    def _split_patterns(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [part.strip() for part in value.split(",") if part.strip()]
        for pattern in value:
            try:
                re.compile(pattern)
            except re.error as err:
                raise ValueError(f"{pattern!r} is not a regular expression: {err}") from None
        return value

    @field_validator("auto_restart_connectors")
    @classmethod
    def _check_pattern(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as err:
            raise ValueError(f"{value!r} is not a regular expression: {err}") from None
        return value

    @model_validator(mode="after")
    def _check_auth(self) -> Settings:
        if self.auth_enabled and not (self.auth_credentials_file or self.auth_credentials):
            raise ValueError(
                f"{ENV_PREFIX}AUTH_ENABLED needs {ENV_PREFIX}AUTH_CREDENTIALS_FILE or {ENV_PREFIX}AUTH_CREDENTIALS"
            )
        return self

    @field_validator("connect_urls", mode="before")
    @classmethod
    def _split_urls(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("connect_urls")
    @classmethod
    def _check_urls(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value:
            raise ValueError("at least one Connect worker URL is needed")
        for url in value:
            if not url.startswith(("http://", "https://")):
                raise ValueError(f"{url!r} is not an http:// or https:// URL")
        return tuple(url.rstrip("/") for url in value)

    @model_validator(mode="after")
    def _check_tls(self) -> Settings:
        if bool(self.tls_certfile) != bool(self.tls_keyfile):
            raise ValueError(
                f"{ENV_PREFIX}TLS_CERTFILE and {ENV_PREFIX}TLS_KEYFILE must be set together (TLS on the listener)"
            )
        if self.tls_client_ca_file and not self.tls_certfile:
            raise ValueError(
                f"{ENV_PREFIX}TLS_CLIENT_CA_FILE needs {ENV_PREFIX}TLS_CERTFILE and {ENV_PREFIX}TLS_KEYFILE"
            )
        return self

    @model_validator(mode="after")
    def _check_backoffs(self) -> Settings:
        if self.status_storage_retry_initial_backoff_ms > self.status_storage_retry_max_backoff_ms:
            raise ValueError(
                "status.storage.retry.initial.backoff.ms "
                f"({self.status_storage_retry_initial_backoff_ms}) must not be greater than "
                f"status.storage.retry.max.backoff.ms ({self.status_storage_retry_max_backoff_ms})"
            )
        if self.history_retry_initial_backoff_ms > self.history_retry_max_backoff_ms:
            raise ValueError(
                f"{ENV_PREFIX}HISTORY_RETRY_INITIAL_BACKOFF_MS must not be greater than "
                f"{ENV_PREFIX}HISTORY_RETRY_MAX_BACKOFF_MS"
            )
        if self.rebalance_retry_initial_backoff_ms > self.rebalance_retry_max_backoff_ms:
            raise ValueError(
                f"{ENV_PREFIX}REBALANCE_RETRY_INITIAL_BACKOFF_MS must not be greater than "
                f"{ENV_PREFIX}REBALANCE_RETRY_MAX_BACKOFF_MS"
            )
        return self

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        path = getattr(init_settings, "init_kwargs", {}).get("worker_properties") or os.environ.get(
            f"{ENV_PREFIX}WORKER_PROPERTIES"
        )
        return init_settings, env_settings, WorkerPropertiesSource(settings_cls, path)

    @property
    def tracking_switches_known(self) -> bool:
        """Whether ``topic.tracking.enable`` and ``.allow.reset`` are the worker's own: read from its
        properties file (absent there: Connect's defaults), or both set explicitly. Otherwise the sidecar
        cannot know them and leaves topic tracking to the workers."""
        explicit = {"topic_tracking_enable", "topic_tracking_allow_reset"} <= self.model_fields_set
        return self.worker_properties is not None or explicit

    def worker_ids(self) -> dict[str, str]:
        """Each URL of ``connect_urls`` -> its worker's id in the status topic: ``worker_id`` for the one URL,
        else the URL's ``host:port`` (``rules.worker_id``)."""
        if len(self.connect_urls) == 1 and self.worker_id:
            return {self.connect_urls[0]: self.worker_id}
        return {url: worker_id_of(url) for url in self.connect_urls}

    @property
    def advertised(self) -> str:
        """``advertised_url``, or its default."""
        host = self.worker_advertised_host_name or socket.gethostname()
        return self.advertised_url or f"http://{host}:{self.port}"

    @property
    def workers_group_known(self) -> bool:
        """Whether the sidecar knows the Kafka cluster of the workers' group, to read who is in it: the
        worker's properties file was read, or ``bootstrap_servers`` was set. Otherwise the capabilities are
        decided from the given workers alone (``localhost:9092``, the default, is only a guess)."""
        return self.worker_properties is not None or "bootstrap_servers" in self.model_fields_set

    @property
    def sidecars_topic_name(self) -> str:
        """The sidecars' own topic: as set, else named after the Connect cluster's group."""
        return self.sidecars_topic or f"{self.group_id}.control-plane"

    def feature_modes(self) -> dict[str, FeatureMode]:
        prefix = "feature_"
        return {name[len(prefix) :]: getattr(self, name) for name in type(self).model_fields if name.startswith(prefix)}


def _key_names(field: str) -> str:
    env = f"{ENV_PREFIX}{field.upper()}"
    worker_key = FIELD_TO_WORKER_KEY.get(field)
    return f"{worker_key} ({env})" if worker_key else env


def load_settings(**overrides: Any) -> Settings:
    """Resolve and validate the settings once; raise ``SettingsError`` naming every bad key."""
    overrides = {k: v for k, v in overrides.items() if v is not None}
    try:
        settings = Settings(**overrides)
    except SourceError as err:  # a variable that is not valid JSON where JSON is expected
        match = re.search(r'field "(\w+)"', str(err))
        key = _key_names(match.group(1)) if match else "a setting"
        raise SettingsError(f"invalid settings: {key}: not valid JSON ({err})") from None
    except ValidationError as err:
        problems = []
        for error in err.errors():
            field = str(error["loc"][0]) if error["loc"] else ""
            message = str(error["msg"]).removeprefix("Value error, ")
            if field:
                problems.append(f"{_key_names(field)}: {message} (got {error.get('input')!r})")
            else:
                problems.append(message)
        raise SettingsError("invalid settings: " + "; ".join(problems)) from None
    try:  # the Kafka clients' security: stores read, passwords tried, unsupported choices refused
        check_kafka_security(settings.kafka_client_properties)
    except KafkaSecurityError as err:
        raise security_error(err, settings, explicit="kafka_client_properties" in overrides) from None
    return settings


def security_error(err: KafkaSecurityError, settings: Settings, *, explicit: bool = False) -> SettingsError:
    """The error naming the Kafka client property as the operator wrote it, and where."""
    variable = f"{ENV_PREFIX}KAFKA_CLIENT_PROPERTIES"
    if explicit:
        origin = "in the kafka_client_properties setting"
    elif variable in (name.upper() for name in os.environ) or not settings.worker_properties:
        origin = f"in {variable}"
    else:
        origin = "in the worker properties file"
    return SettingsError(f"{err.key} ({origin}): {err.problem}")


def describe(settings: Settings) -> dict[str, Any]:
    """The settings as the sidecar's own endpoint shows them: secrets of the Kafka clients hidden."""
    data = settings.model_dump(mode="json")
    data["kafka_client_properties"] = {
        k: ("[hidden]" if any(word in k for word in SECRET_WORDS) or k.endswith(".key") else v)
        for k, v in settings.kafka_client_properties.items()
    }
    data["config_providers"] = {k: ("[hidden]" if ".param." in k else v) for k, v in settings.config_providers.items()}
    if settings.tls_keyfile_password is not None:
        data["tls_keyfile_password"] = "[hidden]"
    return data


__all__ = ["FeatureMode", "Settings", "SettingsError", "describe", "load_settings"]
