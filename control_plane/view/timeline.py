"""What the status topic says changed, kept as it is read: the state timeline and the connectors touched.

``StateTimeline``: every connector and task status record the view applies, as a transition from the
key's previous state to its new one, stamped with the record's own timestamp (the worker's clock when it
wrote it), in a bounded ring (the newest ``capacity`` kept). A tombstone is the deletion of a status:
Connect's herder writes ``DESTROYED`` for it and the status store turns that into a tombstone
(AbstractHerder.onDeletion, KafkaStatusBackingStore.send), so the timeline shows it as
``DESTROYED``. It also remembers, per connector and task, since when it has been in its current state (the
timestamp of the first record of the run of records with that state; records that only repeat the state,
a new generation after a rebalance, do not move it). On start the view reads the compacted topic from its
beginning: what it still holds of the past is in the timeline too, ``previous`` unknown (None).

``TouchLog``: the connectors whose status or configuration changed, in order of their last change, with a
sequence number, so that a reader keeping aggregates (the per-connector state gauges) recomputes only what
changed since it last looked (``touched_since``), and rebuilds everything when it fell too far behind.

Pure state, no I/O; mutated only from the event loop that reads the topics.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from ..codecs import ConnectorStatus, TaskStatus, Tombstone
from ..codecs.status import StatusKey, StatusKind

DESTROYED = "DESTROYED"
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


@dataclass(frozen=True, slots=True)
class CurrentState:
    state: str
    since_ms: int  # timestamp of the record that brought the connector or task into ``state``


StatusKeyOf = tuple[str, int | None]  # (connector, task or None for the connector itself)


class StateTimeline:
    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self.capacity = capacity
        self._ring: deque[StateChange] = deque(maxlen=capacity)
        self._current: dict[StatusKeyOf, CurrentState] = {}
        self._tasks: dict[str, set[int]] = {}  # connector -> tasks with a current state (for a connector's tombstone)
        self._seq = 0

    @property
    def recorded(self) -> int:
        """How many changes were ever recorded (those beyond ``capacity`` have left the ring)."""
        return self._seq

    def observe(self, record: object, timestamp_ms: int) -> None:
        """One decoded status record (topic records and other keys are not states: ignored)."""
        if isinstance(record, ConnectorStatus | TaskStatus):
            task = record.task if isinstance(record, TaskStatus) else None
            self._add((record.connector, task), record.state, timestamp_ms, record.worker_id, record.generation)
        elif isinstance(record, Tombstone) and isinstance(record.key, StatusKey):
            # a tombstone of a status not known (deleted already: a worker may write it twice; or before the
            # compacted topic's surviving records) changes nothing: not recorded
            key = record.key
            if key.kind is StatusKind.CONNECTOR:
                if (key.connector, None) in self._current:
                    self._add((key.connector, None), DESTROYED, timestamp_ms, None, None)
                # KafkaStatusBackingStore.remove(connector): the connector's tasks go with it
                for task in self._tasks.pop(key.connector, set()):
                    self._current.pop((key.connector, task), None)
            elif key.kind is StatusKind.TASK and (key.connector, key.task) in self._current:
                self._add((key.connector, key.task), DESTROYED, timestamp_ms, None, None)

    def _add(self, key: StatusKeyOf, state: str, timestamp_ms: int, worker: str | None, generation: int | None) -> None:
        current = self._current.get(key)
        previous = current.state if current is not None else None
        if state == DESTROYED:
            self._forget(key)
        elif current is None or current.state != state:
            self._current[key] = CurrentState(state, timestamp_ms)
            if key[1] is not None:
                self._tasks.setdefault(key[0], set()).add(key[1])
        self._seq += 1
        self._ring.append(StateChange(self._seq, timestamp_ms, key[0], key[1], state, previous, worker, generation))

    def _forget(self, key: StatusKeyOf) -> None:
        self._current.pop(key, None)
        connector, task = key
        if task is not None:
            tasks = self._tasks.get(connector)
            if tasks is not None:
                tasks.discard(task)
                if not tasks:
                    del self._tasks[connector]

    def current(self, connector: str, task: int | None = None) -> CurrentState | None:
        """The state the last record of this connector or task wrote, and since when."""
        return self._current.get((connector, task))

    def changes(
        self, *, since_ms: int | None = None, connector: str | None = None, limit: int | None = None
    ) -> list[StateChange]:
        """The changes in the ring at or after ``since_ms`` (by record timestamp), of one connector (and its
        tasks) or all, ordered by timestamp then by the order read; the newest ``limit`` of them."""
        picked = [
            change
            for change in self._ring
            if (since_ms is None or change.timestamp_ms >= since_ms)
            and (connector is None or change.connector == connector)
        ]
        picked.sort(key=lambda change: (change.timestamp_ms, change.seq))
        return picked[-limit:] if limit is not None and limit < len(picked) else picked

    def oldest_ms(self) -> int | None:
        """The smallest record timestamp still in the ring."""
        return min((change.timestamp_ms for change in self._ring), default=None)


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
        self._last.pop(connector, None)
        self._last[connector] = self._seq

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


__all__ = ["DESTROYED", "CurrentState", "StateChange", "StateTimeline", "TouchLog"]
