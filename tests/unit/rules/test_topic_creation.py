"""KIP-158 rules (pure): Connect's list parsing, group precedence, the settings of a created topic, and
every check of ``check`` naming the key, group and entry."""

from __future__ import annotations

import pytest

from control_plane.rules.topic_creation import (
    TopicCreationConfigError,
    TopicSettings,
    configured_groups,
    group_for,
    parse_list,
)
from control_plane.rules.topic_creation_check import Problem, Severity, check

BASE = {"topic.creation.default.replication.factor": "3", "topic.creation.default.partitions": "5"}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(None, [], id="absent"),
        pytest.param("  ", [], id="blank"),
        pytest.param(" a , b ", ["a", "b"], id="trimmed"),
        pytest.param("a,,b", ["a", "", "b"], id="empty-kept"),
        pytest.param("a,", ["a", ""], id="trailing-empty-kept"),
        pytest.param("x{1,3}", ["x{1", "3}"], id="regex-split"),
    ],
)
def test_parse_list(value: str | None, expected: list[str]) -> None:
    assert parse_list(value) == expected


GROUPS = {
    **BASE,
    "topic.creation.default.cleanup.policy": "delete",
    "topic.creation.groups": "compacted, parallel",
    "topic.creation.compacted.include": "key_value_topic, configurations.*",
    "topic.creation.compacted.cleanup.policy": "compact",
    "topic.creation.parallel.include": "hpc.*, configurations.x",
    "topic.creation.parallel.exclude": "hpc\\.internal.*",
    "topic.creation.parallel.partitions": "-1",
    "topic.creation.parallel.replication.factor": "1",
}


@pytest.mark.parametrize(
    ("topic", "group", "settings"),
    [
        pytest.param("configurations.x", "compacted", TopicSettings(5, 3, {"cleanup.policy": "compact"}), id="first"),
        pytest.param("hpc.jobs", "parallel", TopicSettings(None, 1, {}), id="broker-default-partitions"),
        pytest.param("hpc.internal.x", "default", TopicSettings(5, 3, {"cleanup.policy": "delete"}), id="excluded"),
        pytest.param("xkey_value_topic", "default", TopicSettings(5, 3, {"cleanup.policy": "delete"}), id="whole"),
    ],
)
def test_precedence(topic: str, group: str, settings: TopicSettings) -> None:
    found = group_for(GROUPS, topic)
    assert found is not None and (found.name, found.settings) == (group, settings)


def test_off_without_keys_or_worker_flag() -> None:
    assert configured_groups({"name": "x"}) is None
    assert configured_groups(GROUPS, worker_enabled=False) is None


def test_default_include_is_ignored_and_default_listed_is_dropped() -> None:
    config = {**BASE, "topic.creation.default.include": "nothing", "topic.creation.groups": "default"}
    groups = configured_groups(config)
    assert groups is not None and groups.listed == () and groups.group_for("t").name == "default"


@pytest.mark.parametrize(
    ("config", "message"),
    [
        pytest.param(
            {"topic.creation.default.partitions": "1"},
            'Missing required configuration "topic.creation.default.replication.factor" which has no default value.',
            id="missing",
        ),
        pytest.param(
            {**BASE, "topic.creation.default.partitions": "0"},
            "Invalid value 0 for configuration partitions: Number of partitions must be positive, or -1 to use "
            "the broker's default",
            id="zero-partitions",
        ),
        pytest.param(
            {**BASE, "topic.creation.default.replication.factor": "40000"},
            "Invalid value 40000 for configuration topic.creation.default.replication.factor: Not a number of "
            "type SHORT",
            id="short-overflow",
        ),
        pytest.param(
            {**BASE, "topic.creation.groups": "a,a"},
            "Invalid value [a, a] for configuration topic.creation.groups: Duplicate alias provided.",
            id="duplicate",
        ),
        pytest.param(
            {**BASE, "topic.creation.groups": "g", "topic.creation.g.include": "(a"},
            "Invalid value [(a] for configuration include: Syntax error in regular expression: Unclosed group "
            "near index 2\n(a",
            id="regex",
        ),
    ],
)
def test_connect_messages(config: dict[str, str], message: str) -> None:
    with pytest.raises(TopicCreationConfigError) as raised:
        configured_groups(config)
    assert str(raised.value) == message


def _found(problems: list[Problem], key: str, severity: Severity, *words: str) -> Problem:
    hits = [p for p in problems if p.key == key and p.severity == severity and all(w in p.message for w in words)]
    assert hits, problems
    return hits[0]


def _checked(extra: dict[str, str], *, brokers: int | None = 3, sink: bool = False, enabled: bool = True):
    return check({**BASE, **extra}, worker_enabled=enabled, live_brokers=brokers, is_sink=sink)


def test_clean_config_has_no_problems() -> None:
    assert _checked({k: v for k, v in GROUPS.items() if k not in BASE}) == []
    assert check({"name": "x"}, worker_enabled=True, live_brokers=1, is_sink=False) == []


@pytest.mark.parametrize(
    ("config", "key", "severity", "group", "entry", "words"),
    [
        pytest.param(
            {"topic.creation.default.partitions": "1"},
            "topic.creation.default.replication.factor",
            Severity.ERROR,
            "default",
            None,
            ("Missing required",),
            id="required-default",
        ),
        pytest.param(
            {**BASE, "topic.creation.groups": "g", "topic.creation.g.include": "a", "topic.creation.g.partitions": "0"},
            "topic.creation.g.partitions",
            Severity.ERROR,
            "g",
            None,
            ("group 'g'", "must be positive"),
            id="neither-positive-nor-minus-one",
        ),
        pytest.param(
            {**BASE, "topic.creation.groups": "g", "topic.creation.g.include": "a"},
            "topic.creation.default.replication.factor",
            Severity.ERROR,
            "default",
            None,
            ("larger than the 2 live",),
            id="replication-above-brokers",
        ),
        pytest.param(
            {**BASE, "topic.creation.groups": "g"},
            "topic.creation.g.include",
            Severity.WARNING,
            "g",
            None,
            ("no include list",),
            id="no-include",
        ),
        pytest.param(
            {**BASE, "topic.creation.groups": "g", "topic.creation.g.include": "ok, [a"},
            "topic.creation.g.include",
            Severity.ERROR,
            "g",
            "[a",
            ("Unclosed character class",),
            id="invalid-regex",
        ),
        pytest.param(
            {
                **BASE,
                "topic.creation.groups": "g",
                "topic.creation.g.exclude": "x{1,3}",
                "topic.creation.g.include": "a",
            },
            "topic.creation.g.exclude",
            Severity.ERROR,
            "g",
            "x{1,3}",
            ("split at its comma",),
            id="comma-split",
        ),
        pytest.param(
            {**BASE, "topic.creation.groups": "g", "topic.creation.g.include": "(?i)orders, audit"},
            "topic.creation.g.include",
            Severity.WARNING,
            "g",
            "(?i)orders",
            ("(?i)", "joins"),
            id="leaking-flag",
        ),
        pytest.param(
            {**BASE, "topic.creation.groups": "g", "topic.creation.g.include": "\\Qa.b, c"},
            "topic.creation.g.include",
            Severity.WARNING,
            "g",
            "\\Qa.b",
            ("\\Q",),
            id="leaking-quote",
        ),
        pytest.param(
            {**BASE, "topic.creation.groups": "g", "topic.creation.g.include": "(?<n>a), (?<n>b)"},
            "topic.creation.g.include",
            Severity.ERROR,
            "g",
            None,
            ("not joined", "already defined"),
            id="valid-alone-invalid-joined",
        ),
        pytest.param(
            {**BASE, "topic.creation.groups": "g", "topic.creation.g.include": "\\p{javaLowerCase}+"},
            "topic.creation.g.include",
            Severity.WARNING,
            "g",
            "\\p{javaLowerCase}+",
            ("not supported by the sidecar",),
            id="unsupported-regex",
        ),
        pytest.param(
            {
                **BASE,
                "topic.creation.groups": "all, late",
                "topic.creation.all.include": "ok, .*",
                "topic.creation.late.include": "late.*",
            },
            "topic.creation.late.include",
            Severity.WARNING,
            "late",
            None,
            ("never claims", "'.*'"),
            id="shadowed-by-universal",
        ),
        pytest.param(
            {
                **BASE,
                "topic.creation.groups": "wide, narrow",
                "topic.creation.wide.include": "a.*, b.*",
                "topic.creation.narrow.include": "b.*",
            },
            "topic.creation.narrow.include",
            Severity.WARNING,
            "narrow",
            None,
            ("never claims", "every entry"),
            id="shadowed-by-superset",
        ),
        pytest.param(
            {**BASE, "topic.creation.groups": "default"},
            "topic.creation.groups",
            Severity.WARNING,
            "default",
            "default",
            ("before 3.4.0",),
            id="default-listed",
        ),
        pytest.param(
            {**BASE, "topic.creation.groups": "a, a", "topic.creation.a.include": "x"},
            "topic.creation.groups",
            Severity.ERROR,
            "a",
            "a",
            ("Duplicate alias",),
            id="duplicate-group",
        ),
        pytest.param(
            {**BASE, "topic.creation.default.include": "x.*"},
            "topic.creation.default.include",
            Severity.WARNING,
            "default",
            None,
            ("ignored",),
            id="default-include-ignored",
        ),
        pytest.param(
            {
                **BASE,
                "topic.creation.groups": "g",
                "topic.creation.g.include": "a",
                "topic.creation.gg.partitions": "1",
            },
            "topic.creation.gg.partitions",
            Severity.WARNING,
            None,
            None,
            ("not a group",),
            id="unlisted-group-key",
        ),
        pytest.param(
            {**BASE, "topic.creation.enable": "true"},
            "topic.creation.enable",
            Severity.WARNING,
            None,
            None,
            ("worker setting",),
            id="worker-key-on-connector",
        ),
    ],
)
def test_checks(
    config: dict[str, str], key: str, severity: Severity, group: str | None, entry: str | None, words: tuple[str, ...]
) -> None:
    problem = _found(check(config, worker_enabled=True, live_brokers=2, is_sink=False), key, severity, *words)
    assert (problem.group, problem.entry) == (group, entry)


def test_sink_and_disabled_worker_are_warnings() -> None:
    sink = _checked({}, sink=True)
    assert [p.severity for p in sink] == [Severity.WARNING] and "sink" in sink[0].message
    disabled = _checked({"topic.creation.default.partitions": "0"}, enabled=False)
    assert [p.severity for p in disabled] == [Severity.WARNING] and "topic.creation.enable=false" in disabled[0].message


def test_settings_per_group_is_the_broker_hook() -> None:
    groups = configured_groups(GROUPS)
    assert groups is not None
    assert groups.settings_per_group() == {
        "compacted": TopicSettings(5, 3, {"cleanup.policy": "compact"}),
        "parallel": TopicSettings(None, 1, {}),
        "default": TopicSettings(5, 3, {"cleanup.policy": "delete"}),
    }
