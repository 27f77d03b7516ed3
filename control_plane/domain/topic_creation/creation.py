"""KIP-158 topic creation, checked before it fails and previewed: the sidecar's own, on every version.

A worker (2.6+) applies a source connector's ``topic.creation.*`` rules only when a task first writes to a
topic that does not exist; its validate, create and update check nothing but duplicate group names. So a
missing default replication factor, a bad regular expression, a replication factor above the live brokers
or a topic setting the broker refuses surfaces later, as a FAILED connector or task. Here:

- ``TopicCreation.check`` (a ``config_checks.ConfigCheck``, run on validate, create, update and PATCH):
  the pure checks of ``rules.topic_creation_check`` with the number of live brokers, plus every group's
  topic settings tried on the broker (a validate-only CreateTopics: one topic per setting, so each refused
  setting is named, and one with all of them). A problem is only what Connect fails on: the connector
  (``SourceConnectorConfig``: a missing or invalid number, a pattern ``java.util.regex`` refuses), the
  task (``TopicCreationGroup``'s joined pattern; ``TopicAdmin.createOrFindTopics``: a replication factor
  above the brokers, a topic setting the broker refuses as invalid). It goes on its key in Connect's
  validation answer, naming the group and the entry. What Connect accepts and runs (a group that never
  claims a topic, keys it ignores, keys on a sink connector) is a warning, and so is what the sidecar
  could not check (``could not check: <why>``): a broker that does not answer, a probe the broker refuses
  for a reason of its own (an ACL, a topic policy, a timeout, a broker restarting), settings of the
  connector's admin client the sidecar cannot use. Duplicate group names are left to the worker, whose
  validate reports them (``SourceConnectorConfig``'s ``topic.creation.groups`` validator).
- The brokers asked are the ones the connector's admin client reaches (``Worker.adminConfigs``): the
  Connect cluster's, or those of the connector's ``admin.override.*`` (``bootstrap.servers``, security).
- ``TopicCreation.preview``: per topic name, the group that claims it (``TopicCreation.findFirstGroup``),
  what the connector asks for, what the broker would create (a validate-only CreateTopics of the same
  request ``TopicCreationGroup.newTopic`` builds: the broker's defaults filled in for what is unset), and,
  for a topic that exists, what it has and how that differs.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ...rules.connectors import ConnectorType, connector_type
from ...rules.java_regex import UnsupportedJavaRegex
from ...rules.topic_creation import (
    BROKER_DEFAULT,
    DEFAULT_GROUP,
    PREFIX,
    TopicCreationConfigError,
    TopicSettings,
    configured_groups,
    key_of,
    listed_groups,
    topic_configs,
    uses_topic_creation,
)
from ...rules.topic_creation_check import SEVERITY, Finding, Problem, Severity, check
from ...storage.errors import TopicAdminError
from ...storage.topic_admin import CreationOutcome, ExistingTopic, LiveBrokers, NewTopic
from ..config_checks import NOTHING, CheckResult, ConfigSubject
from ..config_infos import ConfigProblem
from ..connect_api import Config
from ..errors import BadRequestError
from ..ports import BrokerTopics, ConnectorAdmins

# findings that never refuse a configuration: Connect accepts the configuration and runs it (it ignores
# the keys, or a group never claims a topic), or the sidecar cannot tell
WARNINGS_ONLY = frozenset(finding for finding, severity in SEVERITY.items() if severity is Severity.WARNING)
# findings the worker's own validation reports (on every version with KIP-158)
WORKER_REPORTS = frozenset({Finding.DUPLICATE_GROUP})
# the one answer of a validate-only creation that says a topic setting is wrong: TopicAdmin.createOrFindTopics
# fails the task with it (InvalidConfigurationException); any other refusal of a probe (an ACL, a topic
# policy, a timeout, a broker restarting) is about the probe, not the setting
INVALID_SETTING = "InvalidConfigurationError"
ADMIN_OVERRIDE = "admin.override."  # ConnectorConfig.CONNECTOR_CLIENT_ADMIN_OVERRIDES_PREFIX

PROBE_PREFIX = "sidecar-topic-creation-probe"  # names of topics only ever created validate-only


@dataclass(frozen=True)
class TopicShape:
    partitions: int
    replication_factor: int
    configs: Mapping[str, str | None]


@dataclass(frozen=True)
class Difference:
    setting: str  # "partitions", "replication.factor" or a topic config
    would_create: str | int | None
    exists_with: str | int | None


@dataclass(frozen=True)
class TopicPlan:
    topic: str
    group: str | None  # None: Connect creates no topic for this connector
    requested: TopicSettings | None  # what the group asks for (None partitions/replication: the broker's)
    created_with: TopicShape | None  # what the broker would create; None when it refuses or nothing is asked
    refused: str | None  # the broker's refusal of the request
    existing: TopicShape | None  # the topic as it exists now; None when it does not
    differences: tuple[Difference, ...]


@dataclass(frozen=True)
class CreationPreview:
    connector: str | None
    creates_topics: bool
    reason: str  # why Connect does or does not create topics for this configuration
    topics: tuple[TopicPlan, ...]
    problems: tuple[Problem, ...]  # what the checks find in the configuration


def _as_config_problem(problem: Problem, cluster: AdminCluster | None) -> ConfigProblem:
    if problem.finding is Finding.REPLICATION_ABOVE_BROKERS and cluster is not None:
        return ConfigProblem(problem.key, f"{problem.message} (asked of {cluster.described})")
    return ConfigProblem(problem.key, problem.message)


@dataclass(frozen=True)
class AdminCluster:
    """The brokers a connector's admin client reaches, and how to name them in a message."""

    brokers: BrokerTopics
    described: str


class TopicCreation:
    def __init__(
        self,
        brokers: BrokerTopics,
        *,
        worker_enabled: bool,
        plugin_types: Callable[[], Mapping[str, str]],
        active: Callable[[], bool] = lambda: True,
        connector_admins: ConnectorAdmins | None = None,
    ) -> None:
        """``brokers``: the Connect cluster's (the worker's own admin settings); ``worker_enabled``: the
        worker's ``topic.creation.enable``; ``plugin_types``: the worker's plugin list (class and aliases ->
        source/sink, ``rules.connectors.plugin_types``); ``active``: whether the checks run
        (``Capabilities``: not when the operator forced the feature native); ``connector_admins``: the
        brokers of a connector's ``admin.override.*`` (None: such a connector's brokers are not asked)."""
        self._brokers = brokers
        self._worker_enabled = worker_enabled
        self._plugin_types = plugin_types
        self._active = active
        self._connector_admins = connector_admins

    def _kind(self, config: Config) -> ConnectorType:
        return connector_type(config, self._plugin_types())

    def _admin_cluster(self, config: Config) -> AdminCluster:
        """The brokers the connector's admin client reaches (Worker.adminConfigs: the worker's settings with
        the connector's ``admin.override.*`` on top). Raises ``TopicAdminError`` when the sidecar cannot
        reach them as that client would."""
        overrides = {k[len(ADMIN_OVERRIDE) :]: v for k, v in config.items() if k.startswith(ADMIN_OVERRIDE) and v}
        if not overrides:
            return AdminCluster(self._brokers, "the Connect cluster's brokers")
        bootstrap = overrides.get("bootstrap.servers")
        described = (
            f"the brokers at {ADMIN_OVERRIDE}bootstrap.servers={bootstrap}"
            if bootstrap is not None
            else f"the brokers of the connector's {ADMIN_OVERRIDE}* settings"
        )
        if self._connector_admins is None:
            raise TopicAdminError(f"reaching {described}", "the sidecar has no client for them")
        try:
            return AdminCluster(self._connector_admins(overrides), described)
        except TopicAdminError as err:
            raise TopicAdminError(f"reaching {described}", err.cause) from None

    # -- the check of a configuration on its way to a worker ----------------------------------------
    async def check(self, subject: ConfigSubject) -> CheckResult:
        config = subject.config
        if not self._active() or not uses_topic_creation(config):
            return NOTHING
        kind = self._kind(config)
        if kind == "unknown":
            return NOTHING  # the worker refuses a class it does not have, in its own words
        unchecked: list[str] = []  # what the broker could not tell, and why
        live: int | None = None
        refused: list[ConfigProblem] = []
        cluster: AdminCluster | None = None
        if kind == "source" and self._worker_enabled:
            try:
                cluster = self._admin_cluster(config)
            except TopicAdminError as err:
                unchecked.append(f"{PREFIX}*: could not check the replication factors and topic settings: {err}")
        if cluster is not None:
            live, refused = await asyncio.gather(
                self._live_brokers(cluster, unchecked), self._refused_settings(cluster, config, unchecked)
            )
        found = check(config, worker_enabled=self._worker_enabled, live_brokers=live, is_sink=kind == "sink")
        problems = [
            _as_config_problem(p, cluster)
            for p in found
            if p.finding not in WARNINGS_ONLY and p.finding not in WORKER_REPORTS
        ]
        warnings = [f"{p.key}: {p.message}" for p in found if p.finding in WARNINGS_ONLY] + unchecked
        return CheckResult(tuple(problems + refused), tuple(warnings))

    async def _live_brokers(self, cluster: AdminCluster, unchecked: list[str]) -> int | None:
        """The live brokers, when their number is the cluster's size: not while a broker that holds replicas
        is not listed (down or restarting: a replication factor it would satisfy fails only meanwhile)."""
        try:
            brokers: LiveBrokers = await cluster.brokers.live_brokers()
        except TopicAdminError as err:
            unchecked.append(f"{PREFIX}*: could not check the replication factors against {cluster.described}: {err}")
            return None
        if brokers.absent:
            ids = ", ".join(str(i) for i in sorted(brokers.absent))
            unchecked.append(
                f"{PREFIX}*: could not check the replication factors against {cluster.described}: "
                f"{brokers.count} live, and broker(s) {ids} hold replicas but are not live (down or restarting)"
            )
            return None
        return brokers.count

    async def _refused_settings(
        self, cluster: AdminCluster, config: Config, unchecked: list[str]
    ) -> list[ConfigProblem]:
        """Every group's topic settings tried on the broker (validate-only): one topic per setting, and one
        with all of a group's settings when it has several (refused together although each passes). Only
        a setting the broker calls invalid is a problem; any other refusal says the probe could not tell."""
        groups = [g for g in dict.fromkeys(listed_groups(config)) if g != DEFAULT_GROUP] + [DEFAULT_GROUP]
        probes: list[tuple[str, str | None, NewTopic]] = []
        run = uuid.uuid4().hex[:12]
        for group in groups:
            settings = topic_configs(config, group)
            for name, value in settings.items():
                probes.append((group, name, NewTopic(f"{PROBE_PREFIX}-{run}-{len(probes)}", configs={name: value})))
            if len(settings) > 1:
                probes.append((group, None, NewTopic(f"{PROBE_PREFIX}-{run}-{len(probes)}", configs=settings)))
        if not probes:
            return []
        try:
            outcomes = await cluster.brokers.try_create([probe for _, _, probe in probes])
        except TopicAdminError as err:
            unchecked.append(f"{PREFIX}*: could not check the topic settings with {cluster.described}: {err}")
            return []
        problems: list[ConfigProblem] = []
        failed_groups: set[str] = set()
        not_told: dict[str, list[str]] = {}  # why the broker could not tell -> the keys it is about
        for (group, key, probe), outcome in zip(probes, outcomes, strict=True):
            if outcome.error is None:
                continue
            if outcome.error != INVALID_SETTING:
                keys = [key_of(group, key)] if key is not None else []
                not_told.setdefault(f"{outcome.error}: {outcome.message}", []).extend(keys)
                continue
            if key is not None:
                failed_groups.add(group)
                problems.append(
                    ConfigProblem(
                        key_of(group, key),
                        f"topic setting {key}={probe.configs[key]!r} of group {group!r} is refused by the broker "
                        f"({outcome.error}: {outcome.message}): the task fails when it first creates a topic of "
                        f"this group (asked of {cluster.described})",
                    )
                )
            elif group not in failed_groups:
                first = next(iter(probe.configs))
                problems.append(
                    ConfigProblem(
                        key_of(group, first),
                        f"the topic settings of group {group!r} ({', '.join(probe.configs)}) are each accepted but "
                        f"refused together by the broker ({outcome.error}: {outcome.message}; asked of "
                        f"{cluster.described})",
                    )
                )
        for why, keys in not_told.items():
            about = ", ".join(dict.fromkeys(keys)) or f"{PREFIX}*"
            unchecked.append(f"{about}: could not check the topic settings with {cluster.described}: {why}")
        return problems

    # -- the preview ----------------------------------------------------------------------------------
    async def preview(self, config: Config, topics: Sequence[str], connector: str | None = None) -> CreationPreview:
        """What Connect does when a task of this connector first writes to each of ``topics``, asked of the
        brokers its admin client reaches. Raises ``BadRequestError`` where Connect fails the configuration
        (no group could be chosen) or those brokers cannot be asked."""
        names = tuple(dict.fromkeys(topics))
        kind = self._kind(config)
        found = tuple(check(config, worker_enabled=self._worker_enabled, live_brokers=None, is_sink=kind == "sink"))
        reason = self._reason(config, kind)
        try:
            brokers = self._admin_cluster(config).brokers
        except TopicAdminError as err:
            raise _unreachable(err) from err
        existing = await self._describe(brokers, names)
        if reason is not None:
            plans = tuple(TopicPlan(t, None, None, None, None, existing[t], ()) for t in names)
            return CreationPreview(connector, False, reason, plans, found)
        try:
            groups = configured_groups(config)
        except TopicCreationConfigError as err:
            raise BadRequestError(f"No preview: Connect fails this configuration ({err.key}): {err}") from err
        assert groups is not None
        claimed = {}
        for topic in names:
            try:
                claimed[topic] = groups.group_for(topic)
            except UnsupportedJavaRegex as err:
                raise BadRequestError(f"No preview: which group claims {topic!r} cannot be told: {err}") from err
        run = uuid.uuid4().hex[:12]
        requests = [
            NewTopic(
                topic if existing[topic] is None else f"{PROBE_PREFIX}-{run}-{index}",
                _or_broker(claimed[topic].settings.partitions),
                _or_broker(claimed[topic].settings.replication_factor),
                claimed[topic].settings.configs,
            )
            for index, topic in enumerate(names)
        ]
        try:
            outcomes = await brokers.try_create(requests)
        except TopicAdminError as err:
            raise _unreachable(err) from err
        plans = tuple(
            _plan(topic, claimed[topic].name, claimed[topic].settings, outcome, existing[topic])
            for topic, outcome in zip(names, outcomes, strict=True)
        )
        creating = "Connect creates each topic that does not exist when a task first writes to it"
        return CreationPreview(connector, True, creating, plans, found)

    def _reason(self, config: Config, kind: ConnectorType) -> str | None:
        """Why Connect creates no topics for this configuration; None when it does."""
        if kind == "sink":
            return "a sink connector: Connect creates no topics for it (KIP-158 is for source connectors)"
        if kind == "unknown":
            return "the worker has no connector class " + repr(config.get("connector.class"))
        if not self._worker_enabled:
            return "the worker has topic.creation.enable=false: Connect creates no topics for source connectors"
        if not uses_topic_creation(config):
            return "no topic.creation.* keys: Connect creates no topics (the broker may auto-create them)"
        return None

    async def _describe(self, brokers: BrokerTopics, names: Sequence[str]) -> dict[str, TopicShape | None]:
        try:
            described = await brokers.describe(names)
        except TopicAdminError as err:
            raise _unreachable(err) from err
        return {name: _shape(described.get(name)) for name in names}


def _unreachable(err: TopicAdminError) -> BadRequestError:
    return BadRequestError(f"No preview without the broker: {err}")


def _or_broker(value: int | None) -> int:
    return BROKER_DEFAULT if value is None else value


def _shape(topic: ExistingTopic | None) -> TopicShape | None:
    return None if topic is None else TopicShape(topic.partitions, topic.replication_factor, dict(topic.configs))


def _plan(
    topic: str, group: str, requested: TopicSettings, outcome: CreationOutcome, existing: TopicShape | None
) -> TopicPlan:
    if outcome.error is not None:
        return TopicPlan(topic, group, requested, None, f"{outcome.error}: {outcome.message}", existing, ())
    assert outcome.partitions is not None and outcome.replication_factor is not None
    created = TopicShape(outcome.partitions, outcome.replication_factor, dict(outcome.configs))
    return TopicPlan(topic, group, requested, created, None, existing, _differences(created, existing))


def _differences(created: TopicShape, existing: TopicShape | None) -> tuple[Difference, ...]:
    if existing is None:
        return ()
    found = [
        Difference(name, would, has)
        for name, would, has in (
            ("partitions", created.partitions, existing.partitions),
            ("replication.factor", created.replication_factor, existing.replication_factor),
        )
        if would != has
    ]
    for name in sorted(created.configs.keys() & existing.configs.keys()):
        if created.configs[name] != existing.configs[name]:
            found.append(Difference(name, created.configs[name], existing.configs[name]))
    return tuple(found)


__all__ = [
    "INVALID_SETTING",
    "PROBE_PREFIX",
    "WARNINGS_ONLY",
    "WORKER_REPORTS",
    "CreationPreview",
    "Difference",
    "TopicCreation",
    "TopicPlan",
    "TopicShape",
]
