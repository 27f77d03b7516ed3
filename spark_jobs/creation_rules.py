"""Which KIP-158 topic-creation group a source connector's configuration gives a topic, with which
settings: a thin adapter over :mod:`control_plane.rules.topic_creation` (the rules the sidecar checks
with), in the shape the Spark transform uses.

``rule_for`` is None when Connect would create no topic for this config: no ``topic.creation.*`` keys,
or a config Connect refuses (a missing default replication factor or partitions, a bad number, an
include/exclude entry that is not a Java regex), or a pattern the sidecar does not translate exactly (see
:mod:`control_plane.rules.java_regex`): the job then reports nothing for it rather than guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from control_plane.rules.java_regex import JavaRegexProblem
from control_plane.rules.topic_creation import TopicCreationConfigError, configured_groups


@dataclass(frozen=True)
class CreationRule:
    group: str
    replication_factor: int | None  # None: the broker's default (-1)
    partitions: int | None
    topic_configs: dict[str, str] = field(default_factory=dict)


def rule_for(props: Mapping[str, str | None], topic: str) -> CreationRule | None:
    """The group and settings Connect would create ``topic`` with; None when it creates none (above).
    The worker's ``topic.creation.enable`` is the caller's: the transform takes it as a parameter."""
    try:
        groups = configured_groups(props, worker_enabled=True)
        if groups is None:
            return None
        group = groups.group_for(topic)
    except (TopicCreationConfigError, JavaRegexProblem):
        return None
    settings = group.settings
    return CreationRule(group.name, settings.replication_factor, settings.partitions, dict(settings.configs))
