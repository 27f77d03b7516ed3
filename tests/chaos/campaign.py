"""One campaign against one Connect release: the cluster started, the workload's clients and the fault
injector run side by side for ``duration_s``, the faults healed, a quiet spell watched (a write abandoned
in a stalled worker lands in it, if it ever does), the final state read, the history checked."""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from control_plane.domain.auto_restart.schedule import Backoff

from .checker import Limits, Violation, check, summary
from .cluster import SidecarSettings, running_cluster
from .final_state import read_final
from .history import Clock, FinalState, History
from .nemesis import Nemesis
from .workload import Workload


@dataclass(frozen=True)
class Plan:
    version: str
    duration_s: float
    seed: int
    home: Path
    clients: int = 4
    quiet_s: float = 15.0  # watched after the last fault healed: longer than a fence lease and a stop's settling
    settings: SidecarSettings = field(default_factory=SidecarSettings)

    @property
    def limits(self) -> Limits:
        s = self.settings
        return Limits(
            budget_s=s.request_budget_s,
            backoff=Backoff(s.auto_restart_backoff_unit_s, max_restarts=s.auto_restart_max_restarts or None),
        )


@dataclass(frozen=True)
class Result:
    plan: Plan
    history: History
    final: FinalState
    violations: list[Violation]

    @property
    def summary(self) -> dict[str, Any]:
        return {"version": self.plan.version, "seed": self.plan.seed, "duration_s": self.plan.duration_s} | summary(
            self.history, self.final, self.violations
        )

    def report(self) -> str:
        return json.dumps(self.summary, indent=2)

    def save(self, folder: Path) -> Path:
        """The summary and the whole history as JSON under ``folder``."""
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"campaign-{self.plan.version}-{self.plan.seed}.json"
        path.write_text(json.dumps({"summary": self.summary, "history": self.history.to_json()}, indent=1))
        return path


# The herder stops tasks one after another, each for up to the graceful timeout (Worker.stopAndAwaitTasks):
# with Connect's 5 s, two tasks that do not stop in time hold every queued change, a stop's included, past the
# checker's settle time. A shorter timeout keeps that wait, as Connect has it, within the settle time.
WORKER_PROPERTIES = {"task.shutdown.graceful.timeout.ms": "2000"}


async def run(plan: Plan) -> Result:
    history = History()
    run_name = f"chaos-{uuid.uuid4().hex[:6]}"
    async with running_cluster(plan.home, plan.version, plan.settings, WORKER_PROPERTIES) as cluster:
        clock = Clock.started()
        urls = [f"http://127.0.0.1:{port}" for port in cluster.ports]
        timeout_s = plan.settings.request_budget_s * 2 + 10  # long enough to measure a request held past its budget
        workload = Workload(
            run_name, cluster.worker_url, urls, history, clock, timeout_s, plan.settings.request_budget_s
        )
        await workload.set_up()
        watcher = asyncio.create_task(workload.watch())
        try:
            until = clock.now() + plan.duration_s
            nemesis = Nemesis(cluster, history, clock, plan.seed)
            await asyncio.gather(
                nemesis.run(until), *(workload.client(i, plan.seed, until) for i in range(plan.clients))
            )
            await asyncio.sleep(plan.quiet_s)  # the quiet spell, watched
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher
        final, sightings = await read_final(cluster, workload.connectors, workload.failing, clock)
        history.observations += sightings
    return Result(plan, history, final, check(history, final, plan.limits))
