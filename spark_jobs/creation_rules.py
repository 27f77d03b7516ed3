"""Which KIP-158 topic-creation group a source connector's configuration gives a topic, with which
settings (pure; the adopted design: ``topic.creation.groups``, ``include``/``exclude`` lists, the implicit
``default`` group).

As Connect's ``TopicCreation`` and ``TopicCreationGroup`` do: creation is on for a connector when its
config sets ``topic.creation.default.replication.factor`` and ``.partitions``; the groups are tried in
the order of ``topic.creation.groups`` and the first whose include list matches the whole topic name and
whose exclude list does not wins, else ``default``; a group's replication factor and partitions default
to the default group's, ``-1`` means the broker's default, and its other ``topic.creation.<group>.*``
keys are topic configs (``cleanup.policy``...), not inherited from the default group. Connect compiles the
lists as Java regular expressions; Python's ``re`` agrees for the patterns topic names use.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

PREFIX = "topic.creation."
DEFAULT = "default"
SPECIAL = ("include", "exclude", "replication.factor", "partitions")


@dataclass(frozen=True)
class CreationRule:
    group: str
    replication_factor: int | None  # None: the broker's default (-1)
    partitions: int | None
    topic_configs: dict[str, str] = field(default_factory=dict)


def _list(value: str | None) -> list[str]:
    return [part.strip() for part in (value or "").split(",") if part.strip()]


def _int(value: str | None) -> int | None:
    try:
        number = int((value or "").strip())
    except ValueError:
        return None
    return None if number == -1 else number


def creation_enabled(props: Mapping[str, str | None]) -> bool:
    return all(props.get(f"{PREFIX}{DEFAULT}.{key}") not in (None, "") for key in ("replication.factor", "partitions"))


def _matches(patterns: list[str], topic: str) -> bool:
    if not patterns:
        return False
    try:
        return re.fullmatch("|".join(patterns), topic) is not None
    except re.error:
        return False


def _other_configs(props: Mapping[str, str | None], group: str) -> dict[str, str]:
    prefix = f"{PREFIX}{group}."
    return {
        key[len(prefix) :]: value
        for key, value in props.items()
        if key.startswith(prefix) and value is not None and key[len(prefix) :] not in SPECIAL
    }


def rule_for(props: Mapping[str, str | None], topic: str) -> CreationRule | None:
    """The group and settings Connect would create ``topic`` with; None when creation is off for it."""
    if not creation_enabled(props):
        return None
    default_rf = _int(props.get(f"{PREFIX}{DEFAULT}.replication.factor"))
    default_partitions = _int(props.get(f"{PREFIX}{DEFAULT}.partitions"))
    for group in _list(props.get(f"{PREFIX}groups")):
        if group == DEFAULT:
            continue  # listed by mistake: Connect ignores it with a warning
        include = _list(props.get(f"{PREFIX}{group}.include"))
        exclude = _list(props.get(f"{PREFIX}{group}.exclude"))
        if _matches(include, topic) and not _matches(exclude, topic):
            rf_text, partitions_text = (
                props.get(f"{PREFIX}{group}.replication.factor"),
                props.get(f"{PREFIX}{group}.partitions"),
            )
            return CreationRule(
                group,
                default_rf if rf_text is None else _int(rf_text),
                default_partitions if partitions_text is None else _int(partitions_text),
                _other_configs(props, group),
            )
    return CreationRule(DEFAULT, default_rf, default_partitions, _other_configs(props, DEFAULT))
