"""KIP-158 group resolution (pure): the first listed group whose include matches and exclude does not,
else default; partitions and replication factor fall back to the default group's; -1 is the broker's."""

from __future__ import annotations

import pytest

from spark_jobs.creation_rules import CreationRule, rule_for

BASE = {"topic.creation.default.replication.factor": "3", "topic.creation.default.partitions": "5"}
GROUPS = {
    **BASE,
    "topic.creation.default.cleanup.policy": "delete",
    "topic.creation.groups": "compacted, highly_parallel, default",
    "topic.creation.compacted.include": "key_value_topic, another\\.compacted\\.topic, configurations.*",
    "topic.creation.compacted.cleanup.policy": "compact",
    "topic.creation.highly_parallel.include": "hpc.*,mlops.*",
    "topic.creation.highly_parallel.exclude": "hpc.internal.*",
    "topic.creation.highly_parallel.partitions": "-1",
}


@pytest.mark.parametrize(
    ("props", "topic", "expected"),
    [
        pytest.param({}, "t", None, id="no-rules"),
        pytest.param({"topic.creation.default.partitions": "1"}, "t", None, id="default-needs-both"),
        pytest.param(BASE, "t", CreationRule("default", 3, 5, {}), id="default-only"),
        pytest.param(
            GROUPS, "configurations.x", CreationRule("compacted", 3, 5, {"cleanup.policy": "compact"}), id="first-group"
        ),
        pytest.param(
            GROUPS,
            "another.compacted.topic",
            CreationRule("compacted", 3, 5, {"cleanup.policy": "compact"}),
            id="escaped",
        ),
        pytest.param(
            GROUPS,
            "anotherXcompacted.topic",
            CreationRule("default", 3, 5, {"cleanup.policy": "delete"}),
            id="whole-name",
        ),
        pytest.param(GROUPS, "hpc.jobs", CreationRule("highly_parallel", 3, None, {}), id="broker-default"),
        pytest.param(
            GROUPS, "hpc.internal.x", CreationRule("default", 3, 5, {"cleanup.policy": "delete"}), id="excluded"
        ),
    ],
)
def test_rule_for(props: dict[str, str], topic: str, expected: CreationRule | None) -> None:
    assert rule_for(props, topic) == expected


@pytest.mark.parametrize(
    ("props", "topic", "expected"),
    [
        pytest.param(
            {**BASE, "topic.creation.groups": "alpha", "topic.creation.alpha.include": "\\p{Alpha}+"},
            "orders",
            CreationRule("alpha", 3, 5, {}),
            id="java-posix-class",
        ),
        pytest.param(
            {**BASE, "topic.creation.groups": "g", "topic.creation.g.include": "a, x{1,3}"},
            "a",
            None,
            id="connect-refuses-the-config",
        ),
        pytest.param({**BASE, "topic.creation.default.partitions": "five"}, "t", None, id="not-a-number"),
        pytest.param(
            {**BASE, "topic.creation.groups": "g", "topic.creation.g.include": "\\p{javaLowerCase}+"},
            "t",
            None,
            id="unsupported-pattern-no-guess",
        ),
    ],
)
def test_rule_for_follows_connect(props: dict[str, str], topic: str, expected: CreationRule | None) -> None:
    assert rule_for(props, topic) == expected
