"""What the status topic says changed, kept as it is read: the state timeline and the connectors touched.

``StateTimeline``: every connector and task status record the view applies, as a transition from the
state of the record before it (the view's, ``ClusterView.apply_status`` tells it) to its new one, stamped
with the record's own timestamp (the worker's clock when it wrote it), in a bounded ring (the newest
``capacity`` kept). A tombstone is the deletion of a status: Connect's herder writes ``DESTROYED`` for it
and the status store turns that into a tombstone (AbstractHerder.onDeletion, KafkaStatusBackingStore.send),
so the timeline shows it as ``DESTROYED``; a tombstone of a status the view does not have (deleted already)
is no change. It also remembers since when each failed connector and task has been FAILED (the timestamp
of the record that made it FAILED; a FAILED record written again, a new generation after a rebalance, does
not move it). On start the view reads the compacted topic from its beginning: what it still holds of the
past is in the timeline too, ``previous`` unknown (None).

Cheap per record (the view applies every record of the status topic, tens of thousands at start): one
tuple in the ring; StateChange objects are made when asked for.

``TouchLog``: the connectors whose status or configuration changed, in order of their last change, with a
sequence number, so that a reader keeping aggregates (the per-connector state gauges) recomputes only what
changed since it last looked (``touched_since``), and rebuilds everything when it fell too far behind.

Pure state, no I/O; mutated only from the event loop that reads the topics.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

DESTROYED = "DESTROYED"
FAILED = "FAILED"
DEFAULT_CAPACITY = 5000


@dataclass(frozen=True, slots=True)
class StateChange:
    """One status record of a connector (``task`` None) or a task, as a transition."""

    seq: int  # the order the view read the records in (partitions interleave: timestamps may not be ordered)
    timestamp_ms: int  # the record's timestamp
    connector: str
    task: int | None
    state: str
    previous: str | None  # None: the first record of this connector or task the view has read
    worker_id: str | None  # None for a tombstone
    generation: int | None


# a StateChange's fields as a plain tuple: the ring holds these (a tuple costs a tenth of a frozen dataclass)
_Change = tuple[int, int, str, int | None, str, str | None, str | None, int | None]


class StateTimeline:
    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self.capacity = capacity
        self._ring: deque[_Change] = deque(maxlen=capacity)
        self._failed_since: dict[tuple[str, int | None], int] = {}
        self._seq = 0

    @property
    def recorded(self) -> int:
        """How many changes were ever recorded (those beyond ``capacity`` have left the ring)."""
        return self._seq

    def change(
        self,
        connector: str,
        task: int | None,
        state: str,
        previous: str | None,
        timestamp_ms: int,
        worker_id: str | None = None,
        generation: int | None = None,
    ) -> None:
        """One status record (``DESTROYED``: a tombstone) of a connector or task whose last state was ``previous``."""
        self._seq += 1
        self._ring.append((self._seq, timestamp_ms, connector, task, state, previous, worker_id, generation))
        if state == FAILED:
            if previous != FAILED or (connector, task) not in self._failed_since:
                self._failed_since[(connector, task)] = timestamp_ms
        elif previous == FAILED:
            self._failed_since.pop((connector, task), None)
        if state == DESTROYED and task is None:  # KafkaStatusBackingStore.remove: the tasks go with it
            for key in [key for key in self._failed_since if key[0] == connector]:
                del self._failed_since[key]

    def failed_since(self, connector: str, task: int | None = None) -> int | None:
        """The timestamp of the record that made this connector or task FAILED, while it is."""
        return self._failed_since.get((connector, task))

    def changes(
        self, *, since_ms: int | None = None, connector: str | None = None, limit: int | None = None
    ) -> list[StateChange]:
        """The changes in the ring at or after ``since_ms`` (by record timestamp), of one connector (and its
        tasks) or all, ordered by timestamp then by the order read; the newest ``limit`` of them."""
        picked = [
            change
            for change in self._ring
            if (since_ms is None or change[1] >= since_ms) and (connector is None or change[2] == connector)
        ]
        picked.sort(key=lambda change: (change[1], change[0]))
        if limit is not None and limit < len(picked):
            picked = picked[-limit:]
        return [StateChange(*change) for change in picked]

    def oldest_ms(self) -> int | None:
        """The smallest record timestamp still in the ring."""
        return min((change[1] for change in self._ring), default=None)


class TouchLog:
    """Connectors in the order of their last change, each with the sequence number of that change."""

    def __init__(self, slack: int = 10_000) -> None:
        self._last: dict[str, int] = {}  # insertion order = order of last touch (a touch moves it to the end)
        self._seq = 0
        self._floor = 0  # entries up to this sequence number were pruned: a reader behind it rebuilds
        self._slack = slack

    @property
    def seq(self) -> int:
        return self._seq

    def touch(self, connector: str) -> None:
        self._seq += 1
        last = self._last
        if connector in last:
            del last[connector]  # to the end of the order
        last[connector] = self._seq

    def prune(self, live: int) -> None:
        """Forget the oldest touches beyond ``live`` connectors and some slack (deleted connectors' names)."""
        excess = len(self._last) - live - self._slack
        if excess <= 0:
            return
        for name in list(self._last)[:excess]:
            self._floor = max(self._floor, self._last.pop(name))

    def touched_since(self, seq: int) -> list[str] | None:
        """The connectors touched after ``seq`` (newest first), or None when the reader must rebuild all."""
        if seq < self._floor:
            return None
        names = []
        for name, touched in reversed(self._last.items()):
            if touched <= seq:
                break
            names.append(name)
        return names


__all__ = ["DESTROYED", "StateChange", "StateTimeline", "TouchLog"]
