"""KIP-158 topic creation for source connectors, as Connect decides it (pure): the groups, which group
claims a topic, the settings a created topic gets, and :func:`check`, which names what would make Connect
fail (or silently do something else) before it does.

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
from enum import StrEnum

from control_plane.codecs.javalang import java_parse_int

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


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class Problem:
    """One finding of :func:`check`: the config key, the group and list entry it is about (when it is about
    one), how bad it is and what to do."""

    key: str
    group: str | None
    entry: str | None
    severity: Severity
    message: str


class TopicCreationConfigError(ValueError):
    """What Connect throws building the groups (``ConfigException`` or ``PatternSyntaxException``): the
    connector (or its tasks) fail. ``str()`` is Connect's message; ``key`` names the full key."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


def java_trim(text: str) -> str:
    """``String.trim()``: strips the code points <= U+0020, nothing else."""
    start, end = 0, len(text)
    while start < end and text[start] <= " ":
        start += 1
    while end > start and text[end - 1] <= " ":
        end -= 1
    return text[start:end]


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


def _key(group: str, name: str) -> str:
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


def _number(config: Config, key: str, *, short: bool) -> int:
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


def _other_configs(config: Config, group: str) -> dict[str, str]:
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
        key = _key(DEFAULT_GROUP, name)
        if config.get(key) is None:
            raise TopicCreationConfigError(key, f'Missing required configuration "{key}" which has no default value.')
        defaults[name] = _number(config, key, short=short)
    built: list[CreationGroup] = []
    for group in dict.fromkeys(groups):
        if group == DEFAULT_GROUP:
            continue  # SourceConnectorConfig.enrich drops it (with a warning) since 3.4.0
        # ConfigDef parses (and validates) a group's keys in TopicCreationConfig.configDef's order
        include, exclude = parse_list(config.get(_key(group, INCLUDE))), parse_list(config.get(_key(group, EXCLUDE)))
        for name, entries in ((INCLUDE, include), (EXCLUDE, exclude)):
            for entry in entries:
                try:
                    translate(entry)
                except JavaPatternSyntaxError as exc:
                    raise TopicCreationConfigError(_key(group, name), _regex_message(name, entries, exc)) from exc
                except UnsupportedJavaRegex:
                    pass  # a Java syntax error in a later entry or key still comes first
        values = dict(defaults)
        for name, short in ((REPLICATION_FACTOR, True), (PARTITIONS, False)):
            if config.get(_key(group, name)) is not None:
                values[name] = _number(config, _key(group, name), short=short)
        settings = TopicSettings(
            _or_default(values[PARTITIONS]), _or_default(values[REPLICATION_FACTOR]), _other_configs(config, group)
        )
        built.append(CreationGroup(group, tuple(include), tuple(exclude), settings))
    for group_def in built:  # TopicCreationGroup's constructor compiles the joined lists
        for name, joined in ((INCLUDE, group_def.include), (EXCLUDE, group_def.exclude)):
            try:
                translate("|".join(joined))
            except JavaPatternSyntaxError as exc:
                raise TopicCreationConfigError(_key(group_def.name, name), f"PatternSyntaxException: {exc}") from exc
    default = CreationGroup(
        DEFAULT_GROUP,
        (".*",),
        (),
        TopicSettings(
            _or_default(defaults[PARTITIONS]),
            _or_default(defaults[REPLICATION_FACTOR]),
            _other_configs(config, DEFAULT_GROUP),
        ),
    )
    return CreationGroups(tuple(built), default)


def group_for(config: Config, topic: str, *, worker_enabled: bool = True) -> CreationGroup | None:
    """The group whose settings Connect creates ``topic`` with, or None when Connect creates no topics for
    this config. Raises like :func:`configured_groups`."""
    groups = configured_groups(config, worker_enabled=worker_enabled)
    return None if groups is None else groups.group_for(topic)


def _regex_message(name: str, entries: list[str] | tuple[str, ...], exc: JavaPatternSyntaxError) -> str:
    """``TopicCreationConfig.REGEX_VALIDATOR``'s ConfigException, as the embedded validator words it: the
    key without its ``topic.creation.<group>.`` prefix, the value as Java prints a list."""
    return f"Invalid value [{', '.join(entries)}] for configuration {name}: Syntax error in regular expression: {exc}"


# ----------------------------------------------------------------------------------------------------
# check


def _universal(regex: JavaRegex) -> bool:
    """Provably matches every legal topic name: the translation is one quantified class (``.*``, ``.+``,
    ``[\\w.-]+``, ``\\S*`` ...) containing every character a topic name may have."""
    found = re.fullmatch(r"\(\?:(\[[^\]]*\]|\\?.)\)([*+])[?+]?", regex.python)
    if found is None:
        return False
    klass = re.compile(found.group(1))
    return all(klass.fullmatch(ch) for ch in TOPIC_CHARS)


class _Checker:
    def __init__(self, config: Config, live_brokers: int | None) -> None:
        self.config = config
        self.live_brokers = live_brokers
        self.problems: list[Problem] = []

    def add(self, key: str, group: str | None, entry: str | None, severity: Severity, message: str) -> None:
        self.problems.append(Problem(key, group, entry, severity, message))

    def number(self, group: str, name: str, *, short: bool, required: bool) -> None:
        key = _key(group, name)
        if self.config.get(key) is None:
            if required:
                self.add(
                    key,
                    group,
                    None,
                    Severity.ERROR,
                    f'Missing required configuration "{key}" which has no default value. Set it (-1 for the '
                    "broker's default): Connect fails the connector without it.",
                )
            return
        try:
            value = _number(self.config, key, short=short)
        except TopicCreationConfigError as exc:
            self.add(key, group, None, Severity.ERROR, f"{exc} (group {group!r}: Connect's message omits it)")
            return
        if short and self.live_brokers is not None and value > self.live_brokers:
            self.add(
                key,
                group,
                None,
                Severity.ERROR,
                f"replication factor {value} of group {group!r} is larger than the {self.live_brokers} live "
                "broker(s): the broker refuses to create the topic and the task fails when it first writes to one",
            )

    def patterns(self, group: str, name: str, entries: list[str]) -> list[JavaRegex] | None:
        """Per-entry checks of one list; the translations when all entries are usable."""
        key = _key(group, name)
        regexes: list[JavaRegex] = []
        positions: list[int] = []
        usable = True
        broken: dict[int, JavaPatternSyntaxError] = {}
        for index, entry in enumerate(entries):
            try:
                regexes.append(translate(entry))
                positions.append(index)
            except JavaPatternSyntaxError as exc:
                usable = False
                broken[index] = exc
                self.add(
                    key,
                    group,
                    entry,
                    Severity.ERROR,
                    f"entry {entry!r} of group {group!r} is not a valid Java regular expression "
                    f"({exc.description}, index {exc.index}); Connect refuses the connector with: "
                    f"{_regex_message(name, entries, exc)}",
                )
            except UnsupportedJavaRegex as exc:
                usable = False
                self.add(
                    key,
                    group,
                    entry,
                    Severity.WARNING,
                    f"entry {entry!r} of group {group!r} cannot be checked: {exc}",
                )
        self._comma_splits(key, group, entries, broken)
        for index, regex in zip(positions, regexes, strict=True):
            if index < len(entries) - 1 and regex.leaks:
                self.add(
                    key,
                    group,
                    entries[index],
                    Severity.WARNING,
                    f"entry {entries[index]!r} of group {group!r} changes the entries after it: Connect joins "
                    f"the list with '|' into one regex, and {'; '.join(regex.leaks)}. Scope it, e.g. "
                    "(?i:...), or move it last",
                )
        if usable and entries:
            try:
                translate("|".join(entries))
            except JavaPatternSyntaxError as exc:
                usable = False
                self.add(
                    key,
                    group,
                    None,
                    Severity.ERROR,
                    f"the entries of group {group!r} are valid one by one but not joined with '|' "
                    f"({exc.description}): the task fails to start with PatternSyntaxException",
                )
            except UnsupportedJavaRegex as exc:
                usable = False
                self.add(key, group, None, Severity.WARNING, f"the joined list cannot be checked: {exc}")
        return regexes if usable else None

    def _comma_splits(
        self, key: str, group: str, entries: list[str], broken: dict[int, JavaPatternSyntaxError]
    ) -> None:
        reported: set[int] = set()
        for index in sorted(broken):
            if index in reported:
                continue
            for start in (index - 1, index):
                for stop in range(index + 1, min(len(entries), start + 4) + 1):
                    if start < 0 or stop - start < 2:
                        continue
                    whole = ",".join(entries[start:stop])
                    try:
                        translate(whole)
                    except JavaPatternSyntaxError:
                        continue
                    except UnsupportedJavaRegex:
                        pass
                    pieces = entries[start:stop]
                    reported.update(range(start, stop))
                    self.add(
                        key,
                        group,
                        whole,
                        Severity.ERROR,
                        f"{whole!r} in group {group!r} was split at its comma{'s' if len(pieces) > 2 else ''} "
                        f"into {pieces!r}: list values are split at every comma and cannot contain one. "
                        "Write it without a comma (e.g. x{1,3} as (?:x|xx|xxx), [a,b] as (?:[ab]|\\x2c))",
                    )
                    break
                else:
                    continue
                break


def check(config: Config, *, worker_enabled: bool, live_brokers: int | None, is_sink: bool) -> list[Problem]:
    """Everything about a connector's ``topic.creation.*`` keys that Connect would fail on, ignore, or
    do differently from what is written. ``live_brokers`` None skips the replication-factor bound. Topic
    configs are not validated here (that needs the broker): see :meth:`CreationGroups.settings_per_group`.
    """
    keys = sorted(key for key in config if key.startswith(PREFIX))
    checker = _Checker(config, live_brokers)
    if not keys:
        return []
    if is_sink:
        checker.add(
            keys[0],
            None,
            None,
            Severity.WARNING,
            f"topic.creation.* keys on a sink connector are ignored (KIP-158 is for source connectors): {keys}",
        )
        return checker.problems
    groups = listed_groups(config)
    duplicates = sorted({group for group in groups if groups.count(group) > 1})
    for duplicate in duplicates:
        checker.add(
            GROUPS_KEY,
            duplicate,
            duplicate,
            Severity.ERROR,
            f"group {duplicate!r} is listed twice: Connect refuses the connector with "
            f"'Invalid value [{', '.join(groups)}] for configuration {GROUPS_KEY}: Duplicate alias provided.'",
        )
    if not worker_enabled:
        checker.add(
            keys[0],
            None,
            None,
            Severity.WARNING,
            f"the worker has {WORKER_ENABLE_KEY}=false: Connect ignores the connector's topic.creation.* keys "
            f"{keys} and creates no topics (the broker may auto-create them with its defaults)",
        )
        return checker.problems
    if WORKER_ENABLE_KEY in config:
        checker.add(
            WORKER_ENABLE_KEY,
            None,
            None,
            Severity.WARNING,
            f"{WORKER_ENABLE_KEY} is a worker setting; on a connector it is not a switch, but as a "
            "topic.creation.* key it turns KIP-158 on for this connector (the default group's replication "
            "factor and partitions become required)",
        )
    if DEFAULT_GROUP in groups:
        checker.add(
            GROUPS_KEY,
            DEFAULT_GROUP,
            DEFAULT_GROUP,
            Severity.WARNING,
            "'default' always exists and must not be listed: Connect 3.4.0+ ignores it with a warning, Connect "
            f"before 3.4.0 refuses the connector ('Configuration {PREFIX}default.… is defined twice.')",
        )
    for group in groups:
        if group == "":
            checker.add(
                GROUPS_KEY, "", "", Severity.WARNING, "an empty group name (a stray comma): it never claims a topic"
            )
    checker.number(DEFAULT_GROUP, REPLICATION_FACTOR, short=True, required=True)
    checker.number(DEFAULT_GROUP, PARTITIONS, short=False, required=True)
    for name in (INCLUDE, EXCLUDE):
        if _key(DEFAULT_GROUP, name) in config:
            checker.add(
                _key(DEFAULT_GROUP, name),
                DEFAULT_GROUP,
                None,
                Severity.WARNING,
                f"ignored: the default group {name}s {'every topic' if name == INCLUDE else 'nothing'} and only "
                "gets the topics no listed group claims; put the pattern in a group of topic.creation.groups",
            )
    ordered = [group for group in dict.fromkeys(groups) if group != DEFAULT_GROUP]
    compiled: dict[str, tuple[list[JavaRegex] | None, list[JavaRegex] | None]] = {}
    for group in ordered:
        checker.number(group, REPLICATION_FACTOR, short=True, required=False)
        checker.number(group, PARTITIONS, short=False, required=False)
        include = parse_list(config.get(_key(group, INCLUDE)))
        exclude = parse_list(config.get(_key(group, EXCLUDE)))
        if not include and group != "":
            checker.add(
                _key(group, INCLUDE),
                group,
                None,
                Severity.WARNING,
                f"group {group!r} has no include list: its pattern is empty and it never claims a topic",
            )
        compiled[group] = (checker.patterns(group, INCLUDE, include), checker.patterns(group, EXCLUDE, exclude))
    _shadowed(checker, ordered, compiled)
    _stray_keys(checker, keys, ordered)
    return checker.problems


def _shadowed(
    checker: _Checker,
    ordered: list[str],
    compiled: dict[str, tuple[list[JavaRegex] | None, list[JavaRegex] | None]],
) -> None:
    """Groups that provably never claim a topic because an earlier group claims every topic they would:
    an earlier group with no exclude list and a universal include entry (``.*``...), or one with no
    exclude list whose include entries contain all of theirs (neither list with leaking entries)."""
    for position, group in enumerate(ordered):
        include, _ = compiled[group]
        if not include:
            continue
        for earlier in ordered[:position]:
            earlier_include, earlier_exclude = compiled[earlier]
            if earlier_include is None or earlier_exclude != []:
                continue
            universal = [regex.java for regex in earlier_include if _universal(regex)]
            leaks = any(regex.leaks for regex in (*earlier_include, *include))
            contained = not leaks and {regex.java for regex in include} <= {regex.java for regex in earlier_include}
            if universal or contained:
                why = (
                    f"its include entry {universal[0]!r} matches every topic name and it has no exclude list"
                    if universal
                    else "its include list has every entry of this one and no exclude list"
                )
                checker.add(
                    _key(group, INCLUDE),
                    group,
                    None,
                    Severity.WARNING,
                    f"group {group!r} never claims a topic: the earlier group {earlier!r} in topic.creation.groups "
                    f"always wins ({why}); reorder topic.creation.groups or narrow {earlier!r}",
                )
                break


def _stray_keys(checker: _Checker, keys: list[str], ordered: list[str]) -> None:
    """Keys of no listed group (ignored: a typo, or a group missing from topic.creation.groups), and
    group names that are a dotted prefix of another (the longer one's keys become topic configs of both)."""
    known = [*ordered, DEFAULT_GROUP]
    for key in keys:
        rest = key[len(PREFIX) :]
        if rest in ("groups", "enable"):
            continue
        if not any(rest.startswith(f"{group}.") for group in known):
            checker.add(
                key,
                None,
                None,
                Severity.WARNING,
                f"ignored: {rest.split('.')[0]!r} is not a group of topic.creation.groups {ordered}",
            )
    for group in known:
        for other in known:
            if other != group and other.startswith(f"{group}."):
                checker.add(
                    _key(other, INCLUDE),
                    group,
                    None,
                    Severity.WARNING,
                    f"the keys of group {other!r} also start with '{PREFIX}{group}.': Connect passes them to "
                    f"topics of group {group!r} as topic configs (e.g. {other[len(group) + 1 :]}.include), which "
                    "the broker refuses; rename one of the groups",
                )


__all__ = [
    "BROKER_DEFAULT",
    "DEFAULT_GROUP",
    "GROUPS_KEY",
    "PREFIX",
    "CreationGroup",
    "CreationGroups",
    "JavaRegexProblem",
    "Problem",
    "Severity",
    "TopicCreationConfigError",
    "TopicSettings",
    "check",
    "configured_groups",
    "group_for",
    "java_trim",
    "listed_groups",
    "parse_list",
    "uses_topic_creation",
]
