"""The STOPPED state and offsets (KIP-875) where the sidecar does them: stop, read, alter and reset a
connector's offsets; otherwise forwarded, with an alter request's contents checked first when the view
knows the connector's type."""

from __future__ import annotations

from collections.abc import Sequence

from ..capabilities import Feature
from ..outcomes import Answer, Done, Forward
from ..read_rule import ReadRule
from .connector_offsets import ConnectorOffset, ConnectorOffsets
from .request import OffsetEntry
from .stop import ConnectorStopper


class StopAndOffsets:
    def __init__(self, rule: ReadRule, stopper: ConnectorStopper, offsets: ConnectorOffsets) -> None:
        self._rule = rule
        self._stopper = stopper
        self._offsets = offsets

    async def stop_connector(self, name: str) -> Forward[None] | Done:
        if not await self._rule.emulates(Feature.STOP_AND_OFFSETS_READ):
            return Forward()
        await self._stopper.stop(name)
        return Done()

    async def connector_offsets(
        self, name: str
    ) -> Answer[tuple[ConnectorOffset, ...]] | Forward[tuple[ConnectorOffset, ...]]:
        if not await self._rule.emulates(Feature.STOP_AND_OFFSETS_READ):
            return Forward()
        read = await self._offsets.read(name)
        warnings = tuple(
            f"source partition stored under {len(d.keys)} key encodings in {d.topic}; shown: the key its tasks look up"
            for d in read.duplicates
        )
        return Answer(read.offsets, warnings=warnings)

    async def alter_offsets(self, name: str, entries: Sequence[OffsetEntry]) -> Answer[str] | Forward[str]:
        if await self._rule.emulates(Feature.OFFSETS_ALTER_RESET):
            return Answer(await self._offsets.alter(name, entries))
        # the worker does it; its contents are checked first (a precise 400 without a round trip) when
        # the view knows the connector's type; otherwise the worker checks
        kind = self._known_type(name)
        if kind is not None and self._rule.view is not None:
            await self._offsets.check_entries(kind, entries, self._rule.view.state.connector_config(name))
        return Forward()

    async def reset_offsets(self, name: str) -> Answer[str] | Forward[str]:
        if not await self._rule.emulates(Feature.OFFSETS_ALTER_RESET):
            return Forward()
        return Answer(await self._offsets.reset(name))

    def _known_type(self, name: str) -> str | None:
        view = self._rule.view
        if view is None or not view.ready or view.state.connector_config(name) is None:
            return None
        return view.state.connector_type(name)


__all__ = ["StopAndOffsets"]
