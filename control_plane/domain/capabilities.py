"""Where it is decided whether the workers do a feature themselves or the sidecar does it for them.

Everything about that decision is in this file:

- ``Feature``: the features of the proposals, a typed enum; ``FEATURES`` says, for each, the first
  Connect release that has it natively and what the sidecar does on older workers (``emulation``, or
  None where the sidecar does not emulate it: then the feature is ``unavailable`` on such workers);
- ``FeatureMode``: the operator's setting per feature (``auto``, or forced ``native`` / ``emulated``);
- ``decide``: pure, from the oldest worker version and the settings, one ``Decision`` per feature;
- ``Capabilities``: keeps the decisions current (every worker's ``GET /`` at start, then every
  ``refresh_s``; during a rolling upgrade the oldest version that answers decides, so a feature is used
  natively only once every worker has it), and ``mode(feature)``, the one question the herder
  asks before each request: before any worker reported its version (just after start) it waits for one a
  bounded moment; when none does, the request goes to the workers (their own answer, or Connect's 503)
  rather than a guess.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

import structlog

from ..background import cancel_and_wait
from ..modes import FeatureMode

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


@dataclass(frozen=True, order=True)
class Version:
    parts: tuple[int, int, int]
    text: str = field(compare=False, default="")

    @classmethod
    def parse(cls, text: str) -> Version | None:
        """``4.3.1``, ``3.7.0-SNAPSHOT`` -> the numeric release; None if there is none.

        Confluent Platform builds (``7.6.0-ccs``, ``7.4.1-ce``) report the platform's version: they
        are read as the Apache Kafka release they ship (CP 7.6 is Kafka 3.6, CP 8.1 is Kafka 4.1).
        """
        match = re.match(r"\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?(-c[ce]s?\b)?", text or "")
        if not match:
            return None
        major, minor, patch = (int(g) if g else 0 for g in match.groups()[:3])
        if match.group(4):
            major, minor = _kafka_of_confluent(major, minor)
        return cls((major, minor, patch), text.strip())

    @classmethod
    def of(cls, text: str) -> Version:
        version = cls.parse(text)
        if version is None:
            raise ValueError(f"not a version: {text!r}")
        return version

    def __str__(self) -> str:
        return self.text or ".".join(map(str, self.parts))


def _kafka_of_confluent(major: int, minor: int) -> tuple[int, int]:
    """Confluent Platform major.minor -> the Apache Kafka major.minor it is built on."""
    if major >= 7:  # CP 7.x ships Kafka 3.x, CP 8.x Kafka 4.x
        return major - 4, minor
    if major == 6:  # CP 6.0, 6.1, 6.2 ship Kafka 2.6, 2.7, 2.8
        return 2, 6 + minor
    if major == 5:  # CP 5.0 ... 5.5 ship Kafka 2.0 ... 2.5
        return 2, minor
    return major, minor


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
        "stop writes commit-<c> = {tasks: 0} and the STOPPED target state to the config topic; offsets are "
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
        "the body read as 4.3.1's LoggingResource reads it (its 400, 404 and 500 answers), the worker sent the "
        "level log4j 2 resolves it to",
    ),
    FeatureSpec(
        Feature.VALIDATE_UNRESOLVED,
        "Connect 4.4",
        Version.of("4.4.0"),
        "validate answers show a value given as a config provider reference (${provider:path:key}) as given, "
        "not as the provider resolved it",
        "the value of each such key in the worker's validate answer replaced by the one the request gave",
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

    def as_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode.value,
            "spec": self.spec.spec,
            "native_since": str(self.spec.native_since) if self.spec.native_since else None,
            "reason": self.reason,
            "summary": self.spec.summary,
            "emulation": self.spec.emulation,
        }


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
    """The port the detection reads: every worker's ``GET /`` version, None where it did not answer."""

    async def worker_versions(self) -> dict[str, str | None]: ...


class Capabilities:
    """Keeps the per-feature decisions in step with the versions the workers report."""

    def __init__(
        self,
        workers: WorkerVersions,
        modes: Mapping[Feature, FeatureMode],
        *,
        refresh_s: float,
        first_detection_wait_s: float,
        view_answers: bool = False,
        on_answer: Callable[[str, bool], None] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._workers = workers
        self._view_answers = view_answers
        self._on_answer = on_answer
        self._modes = dict(modes)
        self._refresh_s = refresh_s
        self._first_wait_s = first_detection_wait_s
        self._clock = clock
        self.worker_versions: dict[str, str] = {}
        self.version: Version | None = None
        self.detected_at: float | None = None
        self.decisions = decide(None, self._modes, view_answers=view_answers)
        self._task: asyncio.Task[None] | None = None
        self._detected = asyncio.Event()

    @property
    def detected(self) -> bool:
        return self.version is not None

    def worker_has(self, since: Version) -> bool:
        """Whether the oldest worker that answered is ``since`` or newer; True before any answered (the
        newest behaviour)."""
        return self.version is None or self.version >= since

    def workers_do(self, feature: Feature) -> bool:
        """Whether the workers that answered all have ``feature`` natively and no setting forces the
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
        answers = await self._workers.worker_versions()
        if self._on_answer:
            for url, answer in answers.items():
                self._on_answer(url, answer is not None)
        versions = {url: v for url, v in answers.items() if v is not None}
        parsed = [p for p in (Version.parse(v) for v in versions.values()) if p is not None]
        if not parsed:
            return False
        oldest = min(parsed)
        if oldest != self.version or versions != self.worker_versions:
            log.info("capabilities detected", worker_versions=versions, version=str(oldest))
        self.worker_versions = versions
        self.version = oldest
        self.detected_at = self._clock()
        self.decisions = decide(oldest, self._modes, view_answers=self._view_answers)
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
            # until a worker has answered once, try again soon; then at the configured pace
            await asyncio.sleep(self._refresh_s if ok else delay)
            delay = min(delay * 2, self._refresh_s)

    def as_dict(self) -> dict[str, Any]:
        return {
            "worker_version": str(self.version) if self.version else None,
            "worker_versions": self.worker_versions,
            "detected_at": self.detected_at,
            "features": {feature.value: d.as_dict() for feature, d in self.decisions.items()},
        }


__all__ = [
    "CONNECTOR_OFFSETS_TOPIC_SINCE",
    "FEATURES",
    "SPECS",
    "Capabilities",
    "Decision",
    "Feature",
    "FeatureMode",
    "FeatureSpec",
    "Mode",
    "Version",
    "WorkerVersions",
    "decide",
]
