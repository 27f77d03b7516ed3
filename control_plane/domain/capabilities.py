"""Where it is decided whether the workers do a feature themselves or the sidecar does it for them.

Everything about that decision is in this file (the versions that decide it are gathered in
``cluster.versions``):

- ``Feature``: the features of the proposals, a typed enum; ``FEATURES`` says, for each, the first
  Connect release that has it natively and what the sidecar does on older workers (``emulation``, or
  None where the sidecar does not emulate it: then the feature is ``unavailable`` on such workers);
- ``FeatureMode``: the operator's setting per feature (``auto``, or forced ``native`` / ``emulated``);
- ``decide``: pure, from the version that decides (the oldest live worker's) and the settings, one
  ``Decision`` per feature;
- ``Capabilities``: keeps the decisions current (the workers' ``GET /`` at start, then every
  ``refresh_s``), and ``mode(feature)``, the one question the herder asks before each request: before any
  worker reported its version (just after start) it waits for one a bounded moment; when none does, the
  request goes to the workers (their own answer, or Connect's 503) rather than a guess.

The version that decides is the oldest of the cluster's live workers, not only of the workers this sidecar
was given: with the workers' group every member's version counts (``cluster.versions``), so during a
rolling upgrade a feature is used natively only once every live worker has it, every sidecar of the cluster
decides the same, and once the last old worker has left the group the features turn native at the next
refresh. While a live worker's version is unknown the decision moves to an older version only.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

import structlog

from ..background import cancel_and_wait
from ..modes import FeatureMode
from .cluster.versions import GroupVersions, Version, deciding_versions

log = structlog.get_logger(__name__)


class Feature(StrEnum):
    TOPIC_TRACKING = "topic_tracking"
    TOPIC_CREATION = "topic_creation"
    STOP_AND_OFFSETS_READ = "stop_and_offsets_read"
    OFFSETS_ALTER_RESET = "offsets_alter_reset"
    PLUGIN_VERSIONS = "plugin_versions"
    STATUS_STORE_RETRIES = "status_store_retries"
    # the REST API of newer Connect releases (decided by domain.newer, domain.configs and domain.plugins)
    INITIAL_STATE = "initial_state"
    LOGGER_CLUSTER_SCOPE = "logger_cluster_scope"
    PATCH_CONFIG = "patch_config"
    HEALTH = "health"
    ORDER_IN_GROUP = "order_in_group"
    RESTART_OPTIONS = "restart_options"
    PLUGIN_LISTING = "plugin_listing"
    LOGGER_LEVELS = "logger_levels"
    VALIDATE_UNRESOLVED = "validate_unresolved"


class Mode(StrEnum):
    NATIVE = "native"  # the workers do it; requests go through to them
    EMULATED = "emulated"  # the sidecar does it, through Connect's internal topics
    UNAVAILABLE = "unavailable"  # the workers lack it and the sidecar does not emulate it


@dataclass(frozen=True)
class FeatureSpec:
    feature: Feature
    spec: str
    native_since: Version | None
    summary: str
    emulation: str | None  # what the sidecar does where the workers lack it; None: nothing (yet)
    view_served: bool = False  # the sidecar serves it from the view on every version when the view answers
    # the sidecar's own on every version: beyond what any worker does (the workers keep their part)
    sidecar_own: bool = False


FEATURES: tuple[FeatureSpec, ...] = (
    FeatureSpec(
        Feature.TOPIC_TRACKING,
        "KIP-558",
        Version.of("2.5.0"),
        "GET /connectors/{c}/topics, PUT .../topics/reset",
        "active topics read from the status topic; reset writes the tombstones through the status writer "
        "(left to workers of 2.5+ unless emulation is forced)",
        view_served=True,
    ),
    FeatureSpec(
        Feature.TOPIC_CREATION,
        "KIP-158",
        Version.of("2.6.0"),
        "topic.creation.* rules for source connectors",
        "checks of topic.creation.* on validate, create, update and PATCH (with the brokers of the connector's "
        "admin client: live brokers, a validate-only creation of each group's topic settings; refused only "
        "where Connect fails, warned otherwise), POST /_sidecar/topic-creation/preview and GET "
        "/_sidecar/connectors/{c}/topic-creation; the workers (2.6+) create the topics",
        sidecar_own=True,
    ),
    FeatureSpec(
        Feature.STOP_AND_OFFSETS_READ,
        "KIP-875",
        Version.of("3.5.0"),
        "PUT /connectors/{c}/stop, GET .../offsets",
        "stop writes the STOPPED target state and commit-<c> = {tasks: 0} to the config topic; offsets are "
        "read from the offsets topic or the sink's consumer group",
    ),
    FeatureSpec(
        Feature.OFFSETS_ALTER_RESET,
        "KIP-875",
        Version.of("3.6.0"),
        "PATCH and DELETE /connectors/{c}/offsets",
        "writes the offsets topic (source) or the consumer group (sink) of a STOPPED connector",
    ),
    FeatureSpec(
        Feature.PLUGIN_VERSIONS,
        "KIP-891",
        Version.of("4.1.0"),
        "*.plugin.version, GET /connector-plugins/{p}/config?version=, versions in status",
        "pins checked, not enforced by the worker: against the installed versions of every live worker whose "
        "sidecar reports them (the others named in a warning), on validate, create, update and PATCH: one the "
        "newest installed version satisfies on each goes through (the worker ignores the key and runs the "
        "newest), one no installed version satisfies or that is no version range is refused with Connect 4.1's "
        "answers, one that holds on some workers only is refused by the sidecar's own check; pins a worker's "
        "changed plugins no longer hold are listed by GET /_sidecar/plugin-pins and counted by the metric "
        "plugin_pins_not_holding; ?version= answers 4.1's 400s; statuses show the newest installed version of "
        "the connector on the worker that runs it (null for UNASSIGNED, and where that worker's plugins are "
        "unknown). Not emulated: an older version cannot run side by side with the newest on these workers "
        "(the worker loads only the newest, so a pin only an older version satisfies is refused), and the "
        "versions of converters, transformations and predicates are unknown (the worker does not report them; "
        "their pins are refused as unchecked, config_checks=warn lets them through with a warning; the plugin "
        "list shows them once, without version, as the worker does)",
    ),
    FeatureSpec(
        Feature.STATUS_STORE_RETRIES,
        "status-store retries",
        None,
        "configurable retries of Kafka writes",
        "every record the sidecar itself produces (status-topic tombstones of a topics reset, the config-topic "
        "records of an emulated stop and initial_state, the offsets-topic records of an emulated alter and "
        "reset, audit records) retries errors Kafka marks retriable with the proposal's backoff, at most "
        "status.storage.retry.max.retries times (kafka_writes on this endpoint); the workers' own writes do not",
    ),
    # -- the REST API of newer releases --------------------------------------------------------------
    FeatureSpec(
        Feature.INITIAL_STATE,
        "KIP-980",
        Version.of("3.7.0"),
        "initial_state (RUNNING, PAUSED, STOPPED) on POST /connectors",
        "the target state (STOPPED in the two-field form older workers read as PAUSED) is written to the config "
        "topic before the worker creates the connector, as KafkaConfigBackingStore.putConnectorConfig does; a "
        "paused connector generates no tasks",
    ),
    FeatureSpec(
        Feature.LOGGER_CLUSTER_SCOPE,
        "KIP-976",
        Version.of("3.7.0"),
        "PUT /admin/loggers/{l}?scope=cluster, last_modified in GET /admin/loggers",
        "the level is set on every worker the sidecar knows and read back from each; last_modified is the "
        "time the sidecar set a level (null otherwise)",
    ),
    FeatureSpec(
        Feature.PATCH_CONFIG,
        "KIP-477",
        Version.of("3.8.0"),
        "PATCH /connectors/{c}/config",
        "the patch is applied to the worker's configuration and PUT, one at a time per connector, refused "
        "when the config topic shows another change in between",
    ),
    FeatureSpec(
        Feature.HEALTH,
        "KIP-1017",
        Version.of("3.9.0"),
        "GET /health",
        "a request through the worker's herder (GET /connectors) with the health check's 10 s timeout",
    ),
    FeatureSpec(
        Feature.ORDER_IN_GROUP,
        "Connect 4.2",
        Version.of("4.2.0"),
        "definitions' order_in_group (was order) in validate and plugin-config answers",
        "the workers' answers renamed and their fields put in 4.2's order",
    ),
    FeatureSpec(
        Feature.RESTART_OPTIONS,
        "KIP-745",
        Version.of("3.0.0"),
        "POST /connectors/{c}/restart?includeTasks=&onlyFailed=",
        "the plan (the status, RESTARTING where restarted) from the view; the connector and each task restarted "
        "through the worker's own restart endpoints, synchronously",
    ),
    FeatureSpec(
        Feature.PLUGIN_LISTING,
        "KIP-769",
        Version.of("3.2.0"),
        "GET /connector-plugins?connectorsOnly=false, GET /connector-plugins/{p}/config",
        "connectors from the worker's list, transformations and predicates from the recommended values of "
        "validate (without a version, which the worker does not tell); converters and header converters: "
        "Kafka's own and those of the workers' plugin.path (its class files read, when the sidecar knows the "
        "path), without a version; a connector's definitions from validate. Not possible: the definitions of "
        "transformations, predicates and converters (501)",
    ),
    FeatureSpec(
        Feature.LOGGER_LEVELS,
        "Connect 4.0 (log4j 2)",
        Version.of("4.0.0"),
        "PUT /admin/loggers/{l}: the level read as log4j 2 reads it (trimmed, any case; empty: 500)",
        "the body read as 4.4.0's LoggingResource reads it (its 400, 404 and 500 answers), the worker sent the "
        "level log4j 2 resolves it to",
    ),
    FeatureSpec(
        Feature.VALIDATE_UNRESOLVED,
        "Connect 4.4",
        Version.of("4.4.0"),
        "validate answers show a value given as a config provider reference (${provider:path:key}) as given, "
        "not as the provider resolved it, without recommended values, its errors replaced by one generic message",
        "each such key the worker resolved rewritten in the worker's validate answer (the value the request gave, "
        "no recommended values, 4.4's generic error where the worker found any) and the errors counted again; "
        "the create, update and PATCH refusals of older workers quote their errors as they wrote them",
    ),
)
SPECS: dict[Feature, FeatureSpec] = {spec.feature: spec for spec in FEATURES}

# What older workers do differently, beyond the features above (the first release that does it):
CONNECTOR_OFFSETS_TOPIC_SINCE = Version.of("3.3.0")  # KIP-618: a source connector's own offsets.storage.topic


@dataclass(frozen=True)
class Decision:
    spec: FeatureSpec
    mode: Mode
    reason: str

    @property
    def native(self) -> bool:
        return self.mode is Mode.NATIVE


def _not_native(spec: FeatureSpec, reason: str) -> Decision:
    if spec.emulation is None:
        return Decision(spec, Mode.UNAVAILABLE, f"{reason}; the sidecar does not emulate it")
    return Decision(spec, Mode.EMULATED, reason)


def decide(
    worker_version: Version | None, modes: Mapping[Feature, FeatureMode], *, view_answers: bool = False
) -> dict[Feature, Decision]:
    """``view_answers``: the view is configured and answers the read endpoints (``read_from=view``); then
    the features marked ``view_served`` are the sidecar's on every version, as the other reads are."""
    decisions = {}
    for spec in FEATURES:
        mode = modes.get(spec.feature, FeatureMode.AUTO)
        if mode is FeatureMode.NATIVE:
            decision = Decision(spec, Mode.NATIVE, "forced native by setting")
        elif mode is FeatureMode.EMULATED:
            decision = _not_native(spec, "forced emulated by setting")
        elif spec.view_served and view_answers:
            decision = Decision(spec, Mode.EMULATED, "served by the sidecar from the view on every version")
        elif spec.sidecar_own:
            decision = Decision(spec, Mode.EMULATED, "the sidecar's own on every version; no worker does it")
        elif spec.native_since is None:
            decision = _not_native(spec, "no Connect release has it")
        elif worker_version is None:
            decision = _not_native(spec, "worker version unknown (no worker answered yet)")
        elif worker_version >= spec.native_since:
            decision = Decision(spec, Mode.NATIVE, f"worker {worker_version} >= {spec.native_since}")
        else:
            decision = _not_native(spec, f"worker {worker_version} < {spec.native_since}")
        decisions[spec.feature] = decision
    return decisions


class WorkerVersions(Protocol):
    """The port the detection reads: every given worker's ``GET /`` version, None where it did not answer."""

    async def worker_versions(self) -> dict[str, str | None]: ...


@dataclass(frozen=True)
class Decided:
    """The decisions of one moment, and what they were decided from: the version that decides (the oldest
    live worker's; None before any answered), the workers that decided (None: version unknown), the workers'
    group they were read with (None: the given workers alone), why a live worker's version is unknown, when
    the workers were first detected."""

    version: Version | None
    worker_versions: Mapping[str, str | None]
    group: str | None
    unknown: str | None
    detected_at: float | None
    decisions: Mapping[Feature, Decision]


class Capabilities:
    """Keeps the per-feature decisions in step with the versions the cluster's live workers report: the given
    workers' and, with ``group``, every member's of the workers' group (``cluster.versions``)."""

    def __init__(
        self,
        workers: WorkerVersions,
        modes: Mapping[Feature, FeatureMode],
        *,
        group: GroupVersions | None = None,
        refresh_s: float,
        first_detection_wait_s: float,
        view_answers: bool = False,
        on_answer: Callable[[str, bool], None] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._workers = workers
        self._group = group
        self._view_answers = view_answers
        self._on_answer = on_answer
        self._modes = dict(modes)
        self._refresh_s = refresh_s
        self._first_wait_s = first_detection_wait_s
        self._clock = clock
        self.worker_versions: dict[str, str | None] = {}  # the workers that decided (None: version unknown)
        self.group: str | None = None  # the workers' group they were read with (None: the given workers alone)
        self.unknown: str | None = None  # why a live worker's version is unknown, and what was decided then
        self.version: Version | None = None  # the version that decides: the oldest live worker's
        self.detected_at: float | None = None
        self.decisions = decide(None, self._modes, view_answers=view_answers)
        self._task: asyncio.Task[None] | None = None
        self._detected = asyncio.Event()

    @property
    def detected(self) -> bool:
        return self.version is not None

    def worker_has(self, since: Version) -> bool:
        """Whether the version that decides (the oldest live worker's) is ``since`` or newer; True before any
        worker answered (the newest behaviour)."""
        return self.version is None or self.version >= since

    def workers_do(self, feature: Feature) -> bool:
        """Whether the live workers all have ``feature`` natively and no setting forces the
        sidecar's emulation: where the sidecar serves a feature's reads from the view (``view_served``),
        its writes still go to such workers."""
        spec = SPECS[feature]
        if self._modes.get(feature, FeatureMode.AUTO) is FeatureMode.EMULATED or spec.native_since is None:
            return False
        return self.version is not None and self.version >= spec.native_since

    def native_on(self, feature: Feature, worker_version: str | None) -> bool:
        """Whether a worker of ``worker_version`` does ``feature`` itself, unless a setting forces a mode:
        where the oldest worker makes a feature the sidecar's for the cluster, its newer workers still do
        their part (a 4.1 worker loads the plugin version a pin selects, beside a 3.x one that ignores it)."""
        mode = self._modes.get(feature, FeatureMode.AUTO)
        if mode is not FeatureMode.AUTO:
            return mode is FeatureMode.NATIVE
        since, version = SPECS[feature].native_since, Version.parse(worker_version or "")
        return since is not None and version is not None and version >= since

    def decision(self, feature: Feature) -> Decision:
        return self.decisions[feature]

    def decided(self, feature: Feature) -> bool:
        """The decision about ``feature`` is final: a worker reported its version, or it does not depend on it."""
        return self.detected or not self._depends_on_version(feature)

    def _depends_on_version(self, feature: Feature) -> bool:
        spec = SPECS[feature]
        if self._modes.get(feature, FeatureMode.AUTO) is not FeatureMode.AUTO or spec.native_since is None:
            return False
        if spec.sidecar_own:
            return False
        return not (spec.view_served and self._view_answers)

    async def mode(self, feature: Feature) -> Mode:
        """Who does ``feature`` for a request now: the question the herder asks before each request.
        Before any worker reported its version it waits a bounded moment for one; if none does, the
        request goes to the workers (``NATIVE``)."""
        waited = self._depends_on_version(feature) and not self.detected
        if waited and not await self.wait_detected(self._first_wait_s):
            return Mode.NATIVE
        return self.decisions[feature].mode

    async def refresh(self) -> bool:
        """Decide again from the versions the live workers report now; False when no version is known.

        While a live worker's version is unknown the version that decides may go down (an older worker
        is known), never up: the worker not heard from may be the old one."""
        if self._group is None:
            answers, live = await self._workers.worker_versions(), None
        else:
            # the group read within the bound of a request's wait for the first decision
            group = self._group.live_workers(self._first_wait_s)
            answers, live = await asyncio.gather(self._workers.worker_versions(), group)
        if self._on_answer:
            for url, answer in answers.items():
                self._on_answer(url, answer is not None)
        seen = deciding_versions(answers, live)
        oldest = seen.oldest
        if oldest is None:
            return False
        version, unknown = oldest, None
        if seen.unknown is not None and self.version is not None and oldest > self.version:
            version, unknown = self.version, f"{seen.unknown}: {self.version} kept until every live worker's is known"
        elif seen.unknown is not None:
            unknown = f"{seen.unknown}: {oldest} decided by the versions known"
        if version != self.version or seen.versions != self.worker_versions or unknown != self.unknown:
            log.info("capabilities detected", worker_versions=seen.versions, version=str(version), unknown=unknown)
        self.worker_versions, self.group, self.unknown = seen.versions, seen.group, unknown
        self.version = version
        self.detected_at = self._clock()
        self.decisions = decide(version, self._modes, view_answers=self._view_answers)
        self._detected.set()
        return True

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="capability-detector")

    async def stop(self) -> None:
        await cancel_and_wait(self._task)

    async def wait_detected(self, timeout_s: float) -> bool:
        try:
            await asyncio.wait_for(self._detected.wait(), timeout_s)
        except TimeoutError:
            return False
        return True

    async def _run(self) -> None:
        delay = 0.5
        while True:
            try:
                ok = await self.refresh()
            except Exception:
                log.exception("capability detection failed")
                ok = False
            # until a worker has answered, and while a live worker's version is unknown (one that does not
            # answer; the group rebalancing, as it does when a worker joins or leaves), try again soon (backing
            # off); then at the configured pace
            settled = ok and self.unknown is None
            await asyncio.sleep(self._refresh_s if settled else delay)
            delay = 0.5 if settled else min(delay * 2, self._refresh_s)

    def seen(self) -> Decided:
        """What is decided now, and from what."""
        return Decided(
            self.version, dict(self.worker_versions), self.group, self.unknown, self.detected_at, dict(self.decisions)
        )


__all__ = [
    "CONNECTOR_OFFSETS_TOPIC_SINCE",
    "FEATURES",
    "SPECS",
    "Capabilities",
    "Decided",
    "Decision",
    "Feature",
    "FeatureMode",
    "FeatureSpec",
    "Mode",
    "Version",
    "WorkerVersions",
    "decide",
]
