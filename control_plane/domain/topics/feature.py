"""``Topics``: the topic-tracking feature's one entry (KIP-558), where it is decided who answers a
connector's active topics and who resets them: the workers (2.5+) unless the sidecar does it, from the
view (``topics.tracking``); and, beyond the KIP, which connectors use a topic and when each task reported
it, always from the view, with the connectors' earlier configs that named it (the config history)."""

from __future__ import annotations

from dataclasses import dataclass

from ...view import ActiveTopic
from ...view.config_history import ConfigHistoryTable, EarlierConfig
from ..capabilities import Feature, Mode
from ..errors import NotFoundError
from ..outcomes import Accepted, Answer, Forward, Read, Refusal
from ..read_rule import ReadRule
from .tracking import TopicTracking

VIEW_NEEDED = "Topic tracking needs the view (the worker's internal topics are not configured)."


@dataclass(frozen=True)
class TopicUsers:
    connectors: tuple[str, ...]  # whose active topics include the topic
    earlier_configs: list[EarlierConfig]  # configs the history kept that named it, where the newest does not


class Topics:
    def __init__(
        self, rule: ReadRule, tracking: TopicTracking | None, history: ConfigHistoryTable | None = None
    ) -> None:
        self._rule = rule
        self._tracking = tracking
        self._history = history

    async def _by_sidecar(self) -> TopicTracking | None:
        capabilities = self._rule.capabilities
        if self._tracking is None or await capabilities.mode(Feature.TOPIC_TRACKING) is not Mode.EMULATED:
            return None
        return self._tracking

    async def active(self, name: str) -> Read[tuple[str, ...]]:
        """``GET /connectors/{c}/topics``."""
        tracking = await self._by_sidecar()
        if tracking is None:
            return Forward()
        return await self._rule.read_synced(lambda _: tracking.active_topics(name), ("status",))

    async def reset(self, name: str) -> Forward[None] | Accepted[None]:
        """``PUT /connectors/{c}/topics/reset``. Workers that have KIP-558 (2.5+) write the reset themselves
        even where the view serves the reads: the parity rule (the sidecar defers to the workers), and a 4.3.1
        worker writes 10,000 tombstones in about 0.1 to 0.3 s (bench/topics_reset.py). The switches the sidecar
        knows (the worker's own, from its properties) answer their 403 first, as the worker would. Elsewhere
        (an older worker, or emulation forced by setting) the sidecar writes them, pipelined, and answers 202
        at once as the worker does: the writes go on in the background, with retries; the topics leave the
        view as the tombstones are read back."""
        tracking = await self._by_sidecar()
        if tracking is None or not self._rule.reads_from_view():
            return Forward()
        if self._rule.capabilities.workers_do(Feature.TOPIC_TRACKING):
            tracking.check_reset_allowed()
            return Forward()
        tracking.reset(name)
        return Accepted()

    def connectors_using(self, topic: str) -> Answer[TopicUsers] | Refusal:
        """Beyond the KIP: the connectors whose active topics include this topic, and the earlier configs
        of connectors that named it (a sink's ``topics`` or ``topics.regex``) while their newest does not."""
        tracking, history = self._view_tracking(), self._history

        def users(_: object) -> TopicUsers:
            earlier = history.earlier_configs_naming(topic) if history is not None else []
            return TopicUsers(tracking.connectors_using(topic), earlier)

        return self._rule.from_view(users, stale=self._rule.stale())

    def usage(self, name: str) -> Answer[tuple[ActiveTopic, ...]] | Refusal:
        """Beyond the KIP: per topic of the connector, the task that reported it and when."""
        tracking = self._view_tracking()
        return self._rule.from_view(lambda _: tracking.usage(name), stale=self._rule.stale())

    def _view_tracking(self) -> TopicTracking:
        if self._tracking is None:
            raise NotFoundError(VIEW_NEEDED)
        return self._tracking


__all__ = ["VIEW_NEEDED", "TopicUsers", "Topics"]
