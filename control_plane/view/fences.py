"""Who holds each connector's fence, as the sidecars' topic says, read in its order.

The rule, applied to every record in the order of the (one-partition) topic, with the record's broker
timestamp ``ts`` (the topic keeps ``LogAppendTime``: one clock for every sidecar):

- a claim takes the fence when nobody holds it, when the holder's lease ended before ``ts``, or when its
  token is the holder's own (a renewal: the lease then runs from ``ts``); any other claim is ignored;
- a release by the holder's token frees the fence; any other release is ignored.

Every sidecar applies the same records in the same order, so every sidecar names the same holder: the first
claim after the fence was freed wins, and a holder that died is out once its lease is over (nobody waits
for it longer). Compaction keeps only a key's last record, but the topic holds back compaction of records
younger than a day (``min.compaction.lag.ms``), far longer than a lease: what compaction can change is only
how long ago an expired lease ended.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..codecs.fence import FenceClaim, FenceRecord


@dataclass(frozen=True, slots=True)
class FenceHolder:
    connector: str
    token: str
    sidecar: str
    since_ms: int  # the timestamp of the claim that took it
    expires_ms: int  # the broker's time its lease ends, unless renewed

    def live_at(self, now_ms: float) -> bool:
        return now_ms < self.expires_ms


class FenceTable:
    def __init__(self) -> None:
        self._holders: dict[str, FenceHolder] = {}

    def apply(self, record: FenceRecord, timestamp_ms: int) -> None:
        held = self._holders.get(record.connector)
        if isinstance(record, FenceClaim):
            if held is None or not held.live_at(timestamp_ms) or held.token == record.token:
                since = held.since_ms if held is not None and held.token == record.token else timestamp_ms
                self._holders[record.connector] = FenceHolder(
                    record.connector, record.token, record.sidecar, since, timestamp_ms + record.lease_ms
                )
        elif held is not None and held.token == record.token:
            del self._holders[record.connector]

    def holder(self, connector: str) -> FenceHolder | None:
        """The last holder the records name (its lease may have ended since: ``live_at``)."""
        return self._holders.get(connector)

    def live(self, now_ms: float) -> list[FenceHolder]:
        """The fences held now, by connector."""
        return sorted((h for h in self._holders.values() if h.live_at(now_ms)), key=lambda h: h.connector)


__all__ = ["FenceHolder", "FenceTable"]
