"""Connector topic tracking (KIP-558) from the view, plus the inverse index; and the reset, where the
sidecar does it (the workers lack KIP-558, or the operator forced it).

Mirrors ConnectorsResource.getConnectorActiveTopics / resetConnectorActiveTopics and
AbstractHerder.resetConnectorActiveTopics: neither checks that the connector exists; reset writes a
tombstone for every active ``status-topic-<topic>:connector-<c>`` key through the status writer, all at
once (pipelined, ``StatusWriter.submit_all``), and the topics leave the view when the tombstones are read
back. The switches are the worker's own
``topic.tracking.enable`` and ``topic.tracking.allow.reset``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...codecs import Tombstone
from ...codecs.status import StatusKey, StatusKind
from ...storage.status_writes import StatusWriteError
from ...view import ActiveTopic, ClusterView
from ..errors import OperationDisabled, OperationFailed
from ..ports import StatusSink

TRACKING_DISABLED = "Topic tracking is disabled."
RESET_DISABLED = "Topic tracking reset is disabled."


@dataclass(frozen=True)
class ResetOutcome:
    connector: str
    topics: tuple[str, ...]  # the topics whose tombstones were submitted


class TopicTracking:
    def __init__(self, view: ClusterView, writes: StatusSink, *, enabled: bool, allow_reset: bool) -> None:
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

    def check_reset_allowed(self) -> None:
        """The worker's switches (``ConnectorsResource.resetConnectorActiveTopics``): 403 when off."""
        self._check_enabled()
        if not self.allow_reset:
            raise OperationDisabled(RESET_DISABLED)

    def reset(self, connector: str) -> ResetOutcome:
        """Submits the tombstones, all at once (pipelined: ``StatusSink.submit_all``), and returns at once:
        they go out in the background, as the worker's reset does (its 202 once they are handed to its
        producer), with the status writer's retries (the request answers at once; the sidecar's
        ``/_sidecar/status-writes`` lists what is pending or failed). Raises ``OperationFailed`` (500,
        Connect's shape) when they cannot even be queued (the writer is not running)."""
        self.check_reset_allowed()
        topics = tuple(sorted(t.topic for t in self._view.active_topics(connector)))
        tombstones = [Tombstone(StatusKey(StatusKind.TOPIC, connector, topic=topic)) for topic in topics]
        try:
            self._writes.submit_all(tombstones)
        except StatusWriteError as err:
            raise OperationFailed(f"Failed to reset the active topics of connector {connector}: {err.message}") from err
        return ResetOutcome(connector, topics)


__all__ = ["RESET_DISABLED", "TRACKING_DISABLED", "ResetOutcome", "TopicTracking"]
