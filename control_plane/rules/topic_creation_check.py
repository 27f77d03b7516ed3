"""Checks of a source connector's ``topic.creation.*`` keys (pure): everything Connect would fail on,
ignore, or do differently from what is written, each naming its key, group and list entry, before Connect
gets the configuration (its validate checks only duplicate group names; the rest fails the connector or a
task later). Built on :mod:`control_plane.rules.topic_creation`, which builds the groups as Connect does.

Each problem says which ``Finding`` it is; its ``Severity`` follows from that: ``ERROR`` where Connect
fails (a missing or invalid value, a pattern Java refuses), ``WARNING`` where Connect accepts the
configuration and does something other than it says (an entry that changes the others, a group that never
claims a topic, keys it ignores), or where the sidecar cannot tell. What a caller does with each finding
(refuse it, warn) is the caller's decision. Topic configs are not validated here (that needs the broker):
see :meth:`~control_plane.rules.topic_creation.CreationGroups.settings_per_group`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from .java_regex import JavaPatternSyntaxError, JavaRegex, UnsupportedJavaRegex, translate
from .topic_creation import (
    DEFAULT_GROUP,
    EXCLUDE,
    GROUPS_KEY,
    INCLUDE,
    PARTITIONS,
    PREFIX,
    REPLICATION_FACTOR,
    TOPIC_CHARS,
    WORKER_ENABLE_KEY,
    Config,
    TopicCreationConfigError,
    key_of,
    listed_groups,
    number_value,
    parse_list,
    regex_message,
)


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


class Finding(StrEnum):
    """What a problem is about (stable names, for callers that treat findings differently)."""

    MISSING_REQUIRED = "missing-required"  # the default group's replication factor or partitions
    INVALID_NUMBER = "invalid-number"  # not a number, or neither >= 1 nor -1
    REPLICATION_ABOVE_BROKERS = "replication-factor-above-brokers"
    INVALID_REGEX = "invalid-regex"  # an entry java.util.regex refuses
    JOINED_INVALID = "joined-invalid"  # valid entries that Java refuses once joined with '|'
    COMMA_SPLIT = "comma-split"  # a pattern broken at its comma by the list parsing
    LEAKING_ENTRY = "leaking-entry"  # an inline flag or \Q that changes the entries after it
    UNCHECKED_REGEX = "unchecked-regex"  # a pattern the sidecar does not translate (Java may accept it)
    NO_INCLUDE = "no-include"  # a listed group without an include list: it never claims a topic
    SHADOWED = "shadowed-group"  # an earlier group always wins
    NOT_A_GROUP = "not-a-group"  # keys of a group not in topic.creation.groups: ignored
    GROUP_PREFIX = "group-prefix-of-another"  # a.b's keys become topic configs of group a
    DUPLICATE_GROUP = "duplicate-group"  # Connect's validate refuses it itself
    DEFAULT_LISTED = "default-listed"  # ignored since 3.4.0, fatal before
    EMPTY_GROUP = "empty-group"
    DEFAULT_LIST_IGNORED = "default-list-ignored"  # topic.creation.default.include/exclude
    WORKER_KEY_ON_CONNECTOR = "worker-key-on-connector"  # topic.creation.enable on a connector
    WORKER_DISABLED = "worker-disabled"  # the worker has topic.creation.enable=false
    SINK = "sink"  # topic.creation.* on a sink connector: ignored


SEVERITY: dict[Finding, Severity] = {
    finding: Severity.ERROR
    if finding
    in (
        Finding.MISSING_REQUIRED,
        Finding.INVALID_NUMBER,
        Finding.REPLICATION_ABOVE_BROKERS,
        Finding.INVALID_REGEX,
        Finding.JOINED_INVALID,
        Finding.COMMA_SPLIT,
        Finding.DUPLICATE_GROUP,
    )
    else Severity.WARNING
    for finding in Finding
}


@dataclass(frozen=True)
class Problem:
    """One finding of :func:`check`: the config key, the group and list entry it is about (when it is about
    one), how bad it is and what to do."""

    key: str
    group: str | None
    entry: str | None
    severity: Severity
    message: str
    finding: Finding


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

    def add(self, key: str, group: str | None, entry: str | None, finding: Finding, message: str) -> None:
        self.problems.append(Problem(key, group, entry, SEVERITY[finding], message, finding))

    def number(self, group: str, name: str, *, short: bool, required: bool) -> None:
        key = key_of(group, name)
        if self.config.get(key) is None:
            if required:
                self.add(
                    key,
                    group,
                    None,
                    Finding.MISSING_REQUIRED,
                    f'Missing required configuration "{key}" which has no default value. Set it (-1 for the '
                    "broker's default): Connect fails the connector without it.",
                )
            return
        try:
            value = number_value(self.config, key, short=short)
        except TopicCreationConfigError as exc:
            self.add(key, group, None, Finding.INVALID_NUMBER, f"{exc} (group {group!r}: Connect's message omits it)")
            return
        if short and self.live_brokers is not None and value > self.live_brokers:
            self.add(
                key,
                group,
                None,
                Finding.REPLICATION_ABOVE_BROKERS,
                f"replication factor {value} of group {group!r} is larger than the {self.live_brokers} live "
                "broker(s): the broker refuses to create the topic and the task fails when it first writes to one",
            )

    def patterns(self, group: str, name: str, entries: list[str]) -> list[JavaRegex] | None:
        """Per-entry checks of one list; the translations when all entries are usable."""
        key = key_of(group, name)
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
                    Finding.INVALID_REGEX,
                    f"entry {entry!r} of group {group!r} is not a valid Java regular expression "
                    f"({exc.description}, index {exc.index}); Connect refuses the connector with: "
                    f"{regex_message(name, entries, exc)}",
                )
            except UnsupportedJavaRegex as exc:
                usable = False
                self.add(
                    key,
                    group,
                    entry,
                    Finding.UNCHECKED_REGEX,
                    f"entry {entry!r} of group {group!r} cannot be checked: {exc}",
                )
        self._comma_splits(key, group, entries, broken)
        for index, regex in zip(positions, regexes, strict=True):
            if index < len(entries) - 1 and regex.leaks:
                self.add(
                    key,
                    group,
                    entries[index],
                    Finding.LEAKING_ENTRY,
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
                    Finding.JOINED_INVALID,
                    f"the entries of group {group!r} are valid one by one but not joined with '|' "
                    f"({exc.description}): the task fails to start with PatternSyntaxException",
                )
            except UnsupportedJavaRegex as exc:
                usable = False
                self.add(key, group, None, Finding.UNCHECKED_REGEX, f"the joined list cannot be checked: {exc}")
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
                        Finding.COMMA_SPLIT,
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
            Finding.SINK,
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
            Finding.DUPLICATE_GROUP,
            f"group {duplicate!r} is listed twice: Connect refuses the connector with "
            f"'Invalid value [{', '.join(groups)}] for configuration {GROUPS_KEY}: Duplicate alias provided.'",
        )
    if not worker_enabled:
        checker.add(
            keys[0],
            None,
            None,
            Finding.WORKER_DISABLED,
            f"the worker has {WORKER_ENABLE_KEY}=false: Connect ignores the connector's topic.creation.* keys "
            f"{keys} and creates no topics (the broker may auto-create them with its defaults)",
        )
        return checker.problems
    if WORKER_ENABLE_KEY in config:
        checker.add(
            WORKER_ENABLE_KEY,
            None,
            None,
            Finding.WORKER_KEY_ON_CONNECTOR,
            f"{WORKER_ENABLE_KEY} is a worker setting; on a connector it is not a switch, but as a "
            "topic.creation.* key it turns KIP-158 on for this connector (the default group's replication "
            "factor and partitions become required)",
        )
    if DEFAULT_GROUP in groups:
        checker.add(
            GROUPS_KEY,
            DEFAULT_GROUP,
            DEFAULT_GROUP,
            Finding.DEFAULT_LISTED,
            "'default' always exists and must not be listed: Connect 3.4.0+ ignores it with a warning, Connect "
            f"before 3.4.0 refuses the connector ('Configuration {PREFIX}default.… is defined twice.')",
        )
    for group in groups:
        if group == "":
            checker.add(
                GROUPS_KEY, "", "", Finding.EMPTY_GROUP, "an empty group name (a stray comma): it never claims a topic"
            )
    checker.number(DEFAULT_GROUP, REPLICATION_FACTOR, short=True, required=True)
    checker.number(DEFAULT_GROUP, PARTITIONS, short=False, required=True)
    for name in (INCLUDE, EXCLUDE):
        if key_of(DEFAULT_GROUP, name) in config:
            checker.add(
                key_of(DEFAULT_GROUP, name),
                DEFAULT_GROUP,
                None,
                Finding.DEFAULT_LIST_IGNORED,
                f"ignored: the default group {name}s {'every topic' if name == INCLUDE else 'nothing'} and only "
                "gets the topics no listed group claims; put the pattern in a group of topic.creation.groups",
            )
    ordered = [group for group in dict.fromkeys(groups) if group != DEFAULT_GROUP]
    compiled: dict[str, tuple[list[JavaRegex] | None, list[JavaRegex] | None]] = {}
    for group in ordered:
        checker.number(group, REPLICATION_FACTOR, short=True, required=False)
        checker.number(group, PARTITIONS, short=False, required=False)
        include = parse_list(config.get(key_of(group, INCLUDE)))
        exclude = parse_list(config.get(key_of(group, EXCLUDE)))
        if not include and group != "":
            checker.add(
                key_of(group, INCLUDE),
                group,
                None,
                Finding.NO_INCLUDE,
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
                    key_of(group, INCLUDE),
                    group,
                    None,
                    Finding.SHADOWED,
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
                Finding.NOT_A_GROUP,
                f"ignored: {rest.split('.')[0]!r} is not a group of topic.creation.groups {ordered}",
            )
    for group in known:
        for other in known:
            if other != group and other.startswith(f"{group}."):
                checker.add(
                    key_of(other, INCLUDE),
                    group,
                    None,
                    Finding.GROUP_PREFIX,
                    f"the keys of group {other!r} also start with '{PREFIX}{group}.': Connect passes them to "
                    f"topics of group {group!r} as topic configs (e.g. {other[len(group) + 1 :]}.include), which "
                    "the broker refuses; rename one of the groups",
                )


__all__ = ["SEVERITY", "Finding", "Problem", "Severity", "check"]
