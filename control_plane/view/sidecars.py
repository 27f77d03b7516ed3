"""Which sidecars of the cluster are live, as the sidecars' topic says: each writes its presence every
``interval_ms`` and a tombstone when it stops. One that has written nothing for ``MISSED`` intervals (it
died, or cannot reach Kafka) is forgotten: the bound on how long a sidecar that left is still listed."""

from __future__ import annotations

from dataclasses import dataclass

from ..codecs.presence import SidecarPresence
from ..codecs.results import Tombstone

MISSED = 3


@dataclass(frozen=True, slots=True)
class KnownSidecar:
    presence: SidecarPresence
    seen_ms: int  # the broker's time of its last presence record

    def live_at(self, now_ms: float) -> bool:
        return now_ms < self.seen_ms + MISSED * self.presence.interval_ms


class SidecarTable:
    def __init__(self) -> None:
        self._known: dict[str, KnownSidecar] = {}
        self.revision = 0  # bumped by every record applied

    def apply(self, record: SidecarPresence | Tombstone[str], timestamp_ms: int) -> None:
        self.revision += 1
        if isinstance(record, Tombstone):
            self._known.pop(record.key, None)
        else:
            self._known[record.sidecar] = KnownSidecar(record, timestamp_ms)

    def live(self, now_ms: float) -> list[KnownSidecar]:
        return sorted((s for s in self._known.values() if s.live_at(now_ms)), key=lambda s: s.presence.sidecar)


__all__ = ["MISSED", "KnownSidecar", "SidecarTable"]
