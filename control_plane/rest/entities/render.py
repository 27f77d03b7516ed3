"""The view's dataclasses rendered in Connect's JSON shapes (rest/entities of the Connect runtime:
ConnectorStateInfo, ConnectorInfo, TaskInfo, ActiveTopicsInfo). Field names and omissions mirror them: ``trace``
only when non-empty; ``version`` (KIP-891) when the status record carries the field: 4.1+ workers write it,
null when the version is unknown (a connector that failed to load); 3.x workers do not."""

from __future__ import annotations

from typing import Any

from ...domain.topics.feature import TopicUsers
from ...view import ActiveTopic, ConnectorInfoView, ConnectorStateView, StateEntry, TaskConfigs


def state_json(entry: StateEntry, task: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {} if task is None else {"id": task}
    out["state"] = entry.state
    out["worker_id"] = entry.worker_id
    if entry.version_field or entry.version is not None:  # 4.1+: "version", null when unknown
        out["version"] = entry.version
    if entry.trace:
        out["trace"] = entry.trace
    return out


def connector_state_json(view: ConnectorStateView) -> dict[str, Any]:
    return {
        "name": view.name,
        "connector": state_json(view.connector),
        "tasks": [state_json(entry, task) for task, entry in view.tasks],
        "type": view.type,
    }


def connector_info_json(info: ConnectorInfoView) -> dict[str, Any]:
    return {
        "name": info.name,
        "config": dict(info.config),
        "tasks": [{"connector": info.name, "task": task} for task in info.tasks],
        "type": info.type,
    }


def task_configs_json(connector: str, configs: TaskConfigs) -> list[Any]:
    """``GET /connectors/{c}/tasks``: TaskInfo each, its id a ConnectorTaskId."""
    return [
        {"id": {"connector": connector, "task": task}, "config": dict(config) if config is not None else None}
        for task, config in configs
    ]


def active_topics_json(connector: str, topics: tuple[str, ...]) -> dict[str, Any]:
    return {connector: {"topics": list(topics)}}


def topic_users_json(topic: str, users: TopicUsers) -> dict[str, Any]:
    return {
        "topic": topic,
        "connectors": list(users.connectors),
        "earlier_configs": [e.as_json() for e in users.earlier_configs],
    }


def topic_usage_json(connector: str, usage: tuple[ActiveTopic, ...]) -> dict[str, Any]:
    return {
        "connector": connector,
        "topics": [{"topic": t.topic, "task": t.task, "discover_timestamp": t.discover_timestamp} for t in usage],
    }
