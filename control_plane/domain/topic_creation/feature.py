"""``CreationPreviews``: the topic-creation feature's one entry (KIP-158). The sidecar's own on every
version (no worker previews): which group, with which settings, creates a topic, for a configuration or
for an existing connector (``topic_creation.creation``). The checks of ``topic.creation.*`` on the way to
a worker run with the configuration checks (``configs``), as a ``ConfigCheck`` handed to them at
composition, where the sidecar does the feature (``checks_active``: not where the operator forced it
native)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ...upstream import UpstreamError, UpstreamRequest
from ..capabilities import Capabilities, Feature, Mode
from ..connect_api import Config, config_path
from ..errors import ConflictError, ControlPlaneError, NotFoundError
from ..outcomes import SIDECAR, Answer, Refusal
from ..read_rule import ReadRule
from .creation import CreationPreview, TopicCreation


def checks_active(capabilities: Capabilities) -> Callable[[], bool]:
    """Whether the checks of ``topic.creation.*`` run (``TopicCreation``'s ``active``): where the sidecar
    does the feature, not where the operator forced it native."""
    return lambda: capabilities.decision(Feature.TOPIC_CREATION).mode is Mode.EMULATED


class CreationPreviews:
    def __init__(self, rule: ReadRule, topic_creation: TopicCreation | None) -> None:
        self._rule = rule
        self._topic_creation = topic_creation

    async def preview(
        self, config: Config, topics: Sequence[str], connector: str | None = None
    ) -> Answer[CreationPreview] | Refusal:
        if self._topic_creation is None:
            return Refusal(NotFoundError("Topic-creation previews need the broker (no bootstrap.servers)"), SIDECAR)
        try:
            return Answer(await self._topic_creation.preview(config, topics, connector))
        except ControlPlaneError as err:
            return Refusal(err, SIDECAR)

    async def of_connector(self, name: str, topics: Sequence[str]) -> Answer[CreationPreview] | Refusal:
        """The preview of an existing connector: its configuration as a worker has it (the view's when no
        worker answers)."""
        try:
            answer = await self._rule.workers.forward(UpstreamRequest("GET", config_path(name)))
            config = answer.json() if answer.status == 200 else None
            if answer.status == 404:
                return Refusal(NotFoundError(f"Connector {name} not found"), SIDECAR)
        except UpstreamError:
            view = self._rule.view
            config = view.state.connector_config(name) if view is not None and self._rule.view_ready else None
        if not isinstance(config, dict):
            return Refusal(ConflictError(f"The configuration of connector {name} cannot be read now"), SIDECAR)
        return await self.preview(config, topics, name)


__all__ = ["CreationPreviews", "checks_active"]
