"""KIP-158 topic creation for source connectors, as Connect decides it (pure): the groups, which group
claims a topic, the settings a created topic gets. Its checks (what would make Connect fail, or silently do
something else, before it does) are in :mod:`control_plane.rules.topic_creation_check`.

Mirrors Connect 4.3's ``SourceConnectorConfig`` (``usesTopicCreation``, ``enrich``, ``topicCreation*``),
``TopicCreationConfig`` (validators and messages), ``util.TopicCreationGroup`` (``configuredGroups``,
``matches``), ``util.TopicCreation`` (``newTopicCreation``, ``findFirstGroup``) and ``ConfigDef.parseType``
for LIST/SHORT/INT values:

* creation is on for a source connector when the worker has ``topic.creation.enable=true`` and the
  connector config has at least one key starting with ``topic.creation.``; then
  ``topic.creation.default.replication.factor`` and ``.partitions`` are required (``-1``: the broker's
  default) and ``topic.creation.default.include``/``.exclude`` are ignored;
* list values are trimmed and split at commas (``\\s*,\\s*``, empty entries kept); a group's include
  entries are joined with ``|`` into one Java regular expression that must match the whole topic name,
  likewise the exclude entries (an empty list compiles to the empty pattern: it matches no topic);
* groups are tried in the order of ``topic.creation.groups``; the first that matches (include and not
  exclude) claims the topic, else ``default``; a group without replication factor or partitions takes the
  default group's; every other ``topic.creation.<group>.<key>`` is a topic config of topics it creates.

Patterns are translated with :mod:`control_plane.rules.java_regex` (Java semantics, or a clear refusal).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from control_plane.codecs.javalang import java_parse_int, java_trim

from .java_regex import JavaPatternSyntaxError, JavaRegex, JavaRegexProblem, UnsupportedJavaRegex, translate

PREFIX = "topic.creation."
GROUPS_KEY = "topic.creation.groups"
WORKER_ENABLE_KEY = "topic.creation.enable"
DEFAULT_GROUP = "default"
INCLUDE, EXCLUDE, REPLICATION_FACTOR, PARTITIONS = "include", "exclude", "replication.factor", "partitions"
SPECIAL_KEYS = (INCLUDE, EXCLUDE, REPLICATION_FACTOR, PARTITIONS)
BROKER_DEFAULT = -1  # TopicAdmin.NO_PARTITIONS / NO_REPLICATION_FACTOR

# Kafka's legal topic names (org.apache.kafka.common.internals.Topic): the alphabet static proofs use.
TOPIC_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")

_LIST_SPLIT = re.compile(r"[ \t\n\x0b\f\r]*,[ \t\n\x0b\f\r]*")

Config = Mapping[str, "str | None"]


class TopicCreationConfigError(ValueError):
    """What Connect throws building the groups (``ConfigException`` or ``PatternSyntaxException``): the
    connector (or its tasks) fail. ``str()`` is Connect's message; ``key`` names the full key."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


def parse_list(value: str | None) -> list[str]:
    """``ConfigDef.parseType(..., Type.LIST)`` of a string: trimmed, split at commas with the whitespace
    around them, empty entries kept (``"a,,b"`` -> ``["a", "", "b"]``); ``""`` and None -> ``[]``."""
    if value is None:
        return []
    trimmed = java_trim(value)
    return _LIST_SPLIT.split(trimmed) if trimmed else []


def uses_topic_creation(config: Config) -> bool:
    """``SourceConnectorConfig.usesTopicCreation(props)``: any key starting with ``topic.creation.``."""
    return any(key.startswith(PREFIX) for key in config)


def key_of(group: str, name: str) -> str:
    return f"{PREFIX}{group}.{name}"


@dataclass(frozen=True)
class TopicSettings:
    """What ``TopicCreationGroup.newTopic`` asks the broker for; None means ``-1``, the broker's default.
    ``configs`` are the group's other keys, unvalidated: the hook for broker-side validation."""

    partitions: int | None
    replication_factor: int | None
    configs: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CreationGroup:
    name: str
    include: tuple[str, ...]
    exclude: tuple[str, ...]
    settings: TopicSettings

    @property
    def inclusion(self) -> JavaRegex:
        """The joined include pattern (``String.join("|", include)``); raises :class:`JavaRegexProblem`."""
        return translate("|".join(self.include))

    @property
    def exclusion(self) -> JavaRegex:
        return translate("|".join(self.exclude))

    def matches(self, topic: str) -> bool:
        """``TopicCreationGroup.matches``: not excluded and included (whole-name matches)."""
        return not self.exclusion.fullmatch(topic) and self.inclusion.fullmatch(topic)


@dataclass(frozen=True)
class CreationGroups:
    """The groups of one source connector, as ``TopicCreation`` holds them: the listed groups in order
    (without ``default``) and the default group."""

    listed: tuple[CreationGroup, ...]
    default: CreationGroup

    def group_for(self, topic: str) -> CreationGroup:
        """``TopicCreation.findFirstGroup``; raises :class:`UnsupportedJavaRegex` when a pattern tried
        before the claiming group is one the sidecar does not translate."""
        for group in self.listed:
            if group.matches(topic):
                return group
        return self.default

    def settings_per_group(self) -> dict[str, TopicSettings]:
        """Every group's topic settings (the default's last): what a broker-side check would validate."""
        return {group.name: group.settings for group in (*self.listed, self.default)}


def listed_groups(config: Config) -> list[str]:
    """``topic.creation.groups`` parsed as Connect's LIST (duplicates and ``default`` included)."""
    return parse_list(config.get(GROUPS_KEY))


def number_value(config: Config, key: str, *, short: bool) -> int:
    value = config.get(key)
    assert value is not None
    parsed = java_parse_int(java_trim(value))
    if parsed is None or (short and not -32768 <= parsed <= 32767):
        raise TopicCreationConfigError(
            key, f"Invalid value {value} for configuration {key}: Not a number of type {'SHORT' if short else 'INT'}"
        )
    if parsed != BROKER_DEFAULT and parsed < 1:
        name = REPLICATION_FACTOR if short else PARTITIONS
        reason = (
            "Replication factor must be positive and not larger than the number of brokers in the Kafka "
            "cluster, or -1 to use the broker's default"
            if short
            else "Number of partitions must be positive, or -1 to use the broker's default"
        )
        raise TopicCreationConfigError(key, f"Invalid value {parsed} for configuration {name}: {reason}")
    return parsed


def topic_configs(config: Config, group: str) -> dict[str, str]:
    """Every other ``topic.creation.<group>.<key>``: the topic configs of the topics the group creates."""
    prefix = f"{PREFIX}{group}."
    return {
        key[len(prefix) :]: value
        for key, value in config.items()
        if key.startswith(prefix) and value is not None and key[len(prefix) :] not in SPECIAL_KEYS
    }


def _or_default(value: int) -> int | None:
    return None if value == BROKER_DEFAULT else value


def configured_groups(config: Config, *, worker_enabled: bool = True) -> CreationGroups | None:
    """The groups Connect builds for a source connector (``new SourceConnectorConfig(plugins, props,
    createTopics)`` then ``TopicCreationGroup.configuredGroups``), or None when creation is off for it.

    Raises :class:`TopicCreationConfigError` with Connect's message where Connect throws (the first such
    error; :func:`check` lists them all) and :class:`UnsupportedJavaRegex` for a pattern the sidecar does
    not translate."""
    groups = listed_groups(config)
    if len(groups) != len(set(groups)):
        raise TopicCreationConfigError(
            GROUPS_KEY, f"Invalid value [{', '.join(groups)}] for configuration {GROUPS_KEY}: Duplicate alias provided."
        )
    if not worker_enabled or not uses_topic_creation(config):
        return None
    defaults: dict[str, int] = {}
    for name, short in ((REPLICATION_FACTOR, True), (PARTITIONS, False)):
        key = key_of(DEFAULT_GROUP, name)
        if config.get(key) is None:
            raise TopicCreationConfigError(key, f'Missing required configuration "{key}" which has no default value.')
        defaults[name] = number_value(config, key, short=short)
    built: list[CreationGroup] = []
    for group in dict.fromkeys(groups):
        if group == DEFAULT_GROUP:
            continue  # SourceConnectorConfig.enrich drops it (with a warning) since 3.4.0
        # ConfigDef parses (and validates) a group's keys in TopicCreationConfig.configDef's order
        include, exclude = (
            parse_list(config.get(key_of(group, INCLUDE))),
            parse_list(config.get(key_of(group, EXCLUDE))),
        )
        for name, entries in ((INCLUDE, include), (EXCLUDE, exclude)):
            for entry in entries:
                try:
                    translate(entry)
                except JavaPatternSyntaxError as exc:
                    raise TopicCreationConfigError(key_of(group, name), regex_message(name, entries, exc)) from exc
                except UnsupportedJavaRegex:
                    pass  # a Java syntax error in a later entry or key still comes first
        values = dict(defaults)
        for name, short in ((REPLICATION_FACTOR, True), (PARTITIONS, False)):
            if config.get(key_of(group, name)) is not None:
                values[name] = number_value(config, key_of(group, name), short=short)
        settings = TopicSettings(
            _or_default(values[PARTITIONS]), _or_default(values[REPLICATION_FACTOR]), topic_configs(config, group)
        )
        built.append(CreationGroup(group, tuple(include), tuple(exclude), settings))
    for group_def in built:  # TopicCreationGroup's constructor compiles the joined lists
        for name, joined in ((INCLUDE, group_def.include), (EXCLUDE, group_def.exclude)):
            try:
                translate("|".join(joined))
            except JavaPatternSyntaxError as exc:
                raise TopicCreationConfigError(key_of(group_def.name, name), f"PatternSyntaxException: {exc}") from exc
    default = CreationGroup(
        DEFAULT_GROUP,
        (".*",),
        (),
        TopicSettings(
            _or_default(defaults[PARTITIONS]),
            _or_default(defaults[REPLICATION_FACTOR]),
            topic_configs(config, DEFAULT_GROUP),
        ),
    )
    return CreationGroups(tuple(built), default)


def group_for(config: Config, topic: str, *, worker_enabled: bool = True) -> CreationGroup | None:
    """The group whose settings Connect creates ``topic`` with, or None when Connect creates no topics for
    this config. Raises like :func:`configured_groups`."""
    groups = configured_groups(config, worker_enabled=worker_enabled)
    return None if groups is None else groups.group_for(topic)


def regex_message(name: str, entries: list[str] | tuple[str, ...], exc: JavaPatternSyntaxError) -> str:
    """``TopicCreationConfig.REGEX_VALIDATOR``'s ConfigException, as the embedded validator words it: the
    key without its ``topic.creation.<group>.`` prefix, the value as Java prints a list."""
    return f"Invalid value [{', '.join(entries)}] for configuration {name}: Syntax error in regular expression: {exc}"


__all__ = [
    "BROKER_DEFAULT",
    "DEFAULT_GROUP",
    "EXCLUDE",
    "GROUPS_KEY",
    "INCLUDE",
    "PARTITIONS",
    "PREFIX",
    "REPLICATION_FACTOR",
    "SPECIAL_KEYS",
    "TOPIC_CHARS",
    "WORKER_ENABLE_KEY",
    "CreationGroup",
    "CreationGroups",
    "JavaRegexProblem",
    "TopicCreationConfigError",
    "TopicSettings",
    "configured_groups",
    "group_for",
    "key_of",
    "listed_groups",
    "number_value",
    "parse_list",
    "regex_message",
    "topic_configs",
    "uses_topic_creation",
]
