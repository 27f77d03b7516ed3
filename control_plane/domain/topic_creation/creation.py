"""KIP-158 topic creation, checked before it fails and previewed: the sidecar's own, on every version.

A worker (2.6+) applies a source connector's ``topic.creation.*`` rules only when a task first writes to a
topic that does not exist; its validate, create and update check nothing but duplicate group names. So a
missing default replication factor, a bad regular expression, a replication factor above the live brokers
or a topic setting the broker refuses surfaces later, as a FAILED connector or task. Here:

- ``TopicCreation.check`` (a ``config_checks.ConfigCheck``, run on validate, create, update and PATCH):
  the pure checks of ``rules.topic_creation_check`` with the number of live brokers, plus every group's
  topic settings tried on the broker (a validate-only CreateTopics: one topic per setting, so each refused
  setting is named, and one with all of them). Each problem goes on its key in Connect's validation
  answer, naming the group and the entry; what Connect documents as ignored, what the sidecar cannot tell,
  and keys on a sink connector are warnings. Duplicate group names are left to the worker, whose validate
  reports them (``SourceConnectorConfig``'s ``topic.creation.groups`` validator).
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
from ...rules.topic_creation_check import Finding, Problem, check
from ...storage.errors import TopicAdminError
from ...storage.topic_admin import CreationOutcome, ExistingTopic, NewTopic
from ..config_checks import NOTHING, CheckResult, ConfigSubject
from ..config_infos import ConfigProblem
from ..connect_api import Config
from ..errors import BadRequestError
from ..ports import BrokerTopics

# findings that never refuse a configuration: Connect ignores them with a warning of its own, they are
# harmless, or the sidecar cannot tell
WARNINGS_ONLY = frozenset(
    {
        Finding.SINK,
        Finding.UNCHECKED_REGEX,
        Finding.DEFAULT_LISTED,
        Finding.EMPTY_GROUP,
        Finding.DEFAULT_LIST_IGNORED,
        Finding.WORKER_KEY_ON_CONNECTOR,
    }
)
# findings the worker's own validation reports (on every version with KIP-158)
WORKER_REPORTS = frozenset({Finding.DUPLICATE_GROUP})

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


def _as_config_problem(problem: Problem) -> ConfigProblem:
    return ConfigProblem(problem.key, problem.message)


class TopicCreation:
    def __init__(
        self,
        brokers: BrokerTopics,
        *,
        worker_enabled: bool,
        plugin_types: Callable[[], Mapping[str, str]],
        active: Callable[[], bool] = lambda: True,
    ) -> None:
        """``worker_enabled``: the worker's ``topic.creation.enable``; ``plugin_types``: the worker's plugin
        list (class and aliases -> source/sink, ``rules.connectors.plugin_types``); ``active``: whether
        the checks run (``Capabilities``: not when the operator forced the feature native)."""
        self._brokers = brokers
        self._worker_enabled = worker_enabled
        self._plugin_types = plugin_types
        self._active = active

    def _kind(self, config: Config) -> ConnectorType:
        return connector_type(config, self._plugin_types())

    # -- the check of a configuration on its way to a worker ----------------------------------------
    async def check(self, subject: ConfigSubject) -> CheckResult:
        config = subject.config
        if not self._active() or not uses_topic_creation(config):
            return NOTHING
        kind = self._kind(config)
        if kind == "unknown":
            return NOTHING  # the worker refuses a class it does not have, in its own words
        creates = kind == "source" and self._worker_enabled
        warnings: list[str] = []
        live: int | None = None
        refused: list[ConfigProblem] = []
        if creates:
            brokers, settings = await asyncio.gather(
                self._live_brokers(warnings), self._refused_settings(config, warnings)
            )
            live, refused = brokers, settings
        found = check(config, worker_enabled=self._worker_enabled, live_brokers=live, is_sink=kind == "sink")
        problems = [
            _as_config_problem(p) for p in found if p.finding not in WARNINGS_ONLY and p.finding not in WORKER_REPORTS
        ]
        warnings[:0] = [f"{p.key}: {p.message}" for p in found if p.finding in WARNINGS_ONLY]
        return CheckResult(tuple(problems + refused), tuple(warnings))

    async def _live_brokers(self, warnings: list[str]) -> int | None:
        try:
            return await self._brokers.live_brokers()
        except TopicAdminError as err:
            warnings.append(f"{PREFIX}*: replication factors not compared with the live brokers ({err})")
            return None

    async def _refused_settings(self, config: Config, warnings: list[str]) -> list[ConfigProblem]:
        """Every group's topic settings tried on the broker (validate-only): one topic per setting, and one
        with all of a group's settings when it has several (refused together although each passes)."""
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
            outcomes = await self._brokers.try_create([probe for _, _, probe in probes])
        except TopicAdminError as err:
            warnings.append(f"{PREFIX}*: topic settings not checked with the broker ({err})")
            return []
        problems: list[ConfigProblem] = []
        failed_groups: set[str] = set()
        for (group, key, probe), outcome in zip(probes, outcomes, strict=True):
            if outcome.error is None:
                continue
            if key is not None:
                failed_groups.add(group)
                problems.append(
                    ConfigProblem(
                        key_of(group, key),
                        f"topic setting {key}={probe.configs[key]!r} of group {group!r} is refused by the broker "
                        f"({outcome.error}: {outcome.message}): the task fails when it first creates a topic of "
                        "this group",
                    )
                )
            elif group not in failed_groups:
                first = next(iter(probe.configs))
                problems.append(
                    ConfigProblem(
                        key_of(group, first),
                        f"the topic settings of group {group!r} ({', '.join(probe.configs)}) are each accepted but "
                        f"refused together by the broker ({outcome.error}: {outcome.message})",
                    )
                )
        return problems

    # -- the preview ----------------------------------------------------------------------------------
    async def preview(self, config: Config, topics: Sequence[str], connector: str | None = None) -> CreationPreview:
        """What Connect does when a task of this connector first writes to each of ``topics``. Raises
        ``BadRequestError`` where Connect fails the configuration (no group could be chosen)."""
        names = tuple(dict.fromkeys(topics))
        kind = self._kind(config)
        found = tuple(check(config, worker_enabled=self._worker_enabled, live_brokers=None, is_sink=kind == "sink"))
        reason = self._reason(config, kind)
        existing = await self._describe(names)
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
            outcomes = await self._brokers.try_create(requests)
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

    async def _describe(self, names: Sequence[str]) -> dict[str, TopicShape | None]:
        try:
            described = await self._brokers.describe(names)
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
    "PROBE_PREFIX",
    "WARNINGS_ONLY",
    "WORKER_REPORTS",
    "CreationPreview",
    "Difference",
    "TopicCreation",
    "TopicPlan",
    "TopicShape",
]
