"""Connector topic tracking (KIP-558) from the view, on every Connect version, plus the inverse index.

Mirrors ConnectorsResource.getConnectorActiveTopics / resetConnectorActiveTopics and
AbstractHerder.resetConnectorActiveTopics: neither checks that the connector exists; reset writes a
tombstone for every active ``status-topic-<topic>:connector-<c>`` key through the status writer, and
the topics leave the view when the tombstones are read back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ..codecs.status import StatusKey, StatusKind
from ..errors import OperationDisabled
from ..view import ActiveTopic, ClusterView

TRACKING_DISABLED = "Topic tracking is disabled."
RESET_DISABLED = "Topic tracking reset is disabled."


class StatusWrites(Protocol):
    def submit(self, key: bytes, value: bytes | None, kind: str) -> object: ...


@dataclass(frozen=True)
class ResetOutcome:
    connector: str
    topics: tuple[str, ...]  # the topics whose tombstones were submitted


class TopicTracking:
    def __init__(self, view: ClusterView, writes: StatusWrites, *, enabled: bool, allow_reset: bool) -> None:
        self._view = view
        self._writes = writes
        self.enabled = enabled
        self.allow_reset = allow_reset

    def _check_enabled(self) -> None:
        if not self.enabled:
            raise OperationDisabled(TRACKING_DISABLED)

    def active_topics(self, connector: str) -> tuple[str, ...]:
        self._check_enabled()
        return tuple(sorted(t.topic for t in self._view.active_topics(connector)))

    def usage(self, connector: str) -> tuple[ActiveTopic, ...]:
        """Per topic of the connector: the task that reported it and when (beyond the KIP)."""
        self._check_enabled()
        return tuple(sorted(self._view.active_topics(connector), key=lambda t: t.topic))

    def connectors_using(self, topic: str) -> tuple[str, ...]:
        """The inverse index: connectors whose active topics include ``topic``."""
        self._check_enabled()
        return self._view.topic_connectors(topic)

    def reset(self, connector: str) -> ResetOutcome:
        self._check_enabled()
        if not self.allow_reset:
            raise OperationDisabled(RESET_DISABLED)
        topics = tuple(sorted(t.topic for t in self._view.active_topics(connector)))
        for topic in topics:
            key = StatusKey(StatusKind.TOPIC, connector, topic=topic).to_bytes()
            self._writes.submit(key, None, "topic")
        return ResetOutcome(connector, topics)
