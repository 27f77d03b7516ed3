"""The fault injector: one fault at a time, drawn from a seeded random generator, each healed before the
next, each recorded (``history.Fault``) from its start to its healing.

- ``worker_stall``: the Connect worker SIGSTOPped for 1-8 s (a long GC pause), then SIGCONT;
- ``sidecar_kill``: a sidecar SIGKILLed and started again on its port (the fault ends once it listens);
- ``sidecar_stall``: a sidecar SIGSTOPped for 1-8 s;
- ``broker_stall``: the broker SIGSTOPped for 1-4 s (the worker's and the sidecars' Kafka clients time out);
- ``sidecars_topic_unwritable``: the sidecars' topic refuses every write for 2-8 s (``Cluster.sidecars_topic_writable``)
  while the broker and Connect's own topics work on.
"""

from __future__ import annotations

import asyncio
import random
import signal
from collections.abc import Callable

from .cluster import SIDECARS, Cluster
from .history import Clock, Fault, History

KINDS = ("worker_stall", "sidecar_kill", "sidecar_stall", "broker_stall", "sidecars_topic_unwritable")
GAP_S = (2.0, 6.0)  # between the healing of one fault and the next


class Nemesis:
    def __init__(self, cluster: Cluster, history: History, clock: Clock, seed: int) -> None:
        self.cluster = cluster
        self.history = history
        self.clock = clock
        self.rng = random.Random(seed)

    async def run(self, until: float) -> None:
        while True:
            await asyncio.sleep(self.rng.uniform(*GAP_S))  # the schedule's pace
            if self.clock.now() >= until:
                return
            await self.inject(self.rng.choice(KINDS))

    async def inject(self, kind: str) -> None:
        start = self.clock.now()
        if kind == "worker_stall":
            target = "worker"
            await self._stalled(self.cluster.signal_worker, self.rng.uniform(1, 8))
        elif kind == "broker_stall":
            target = "broker"
            await self._stalled(self.cluster.signal_broker, self.rng.uniform(1, 4))
        elif kind == "sidecars_topic_unwritable":
            target = self.cluster.sidecars_topic
            await self.cluster.sidecars_topic_writable(False)
            try:
                await asyncio.sleep(self.rng.uniform(2, 8))
            finally:
                await self.cluster.sidecars_topic_writable(True)
        else:
            index = self.rng.randrange(SIDECARS)
            target = str(index)
            if kind == "sidecar_kill":
                self.cluster.sidecars[index].kill()
                self.cluster.start_sidecar(index)
                await self.cluster.sidecar_answering(index, "/healthz")
            else:
                await self._stalled(self.cluster.sidecars[index].proc.send_signal, self.rng.uniform(1, 8))
        self.history.faults.append(Fault(kind, target, start, self.clock.now()))

    async def _stalled(self, send: Callable[[signal.Signals], None], hold_s: float) -> None:
        send(signal.SIGSTOP)
        try:
            await asyncio.sleep(hold_s)  # the fault's length
        finally:
            send(signal.SIGCONT)
