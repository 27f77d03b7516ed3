"""Writes across a worker stall (a GC pause, a hung worker: the process suspended with SIGSTOP), with two
sidecars in front of one worker. A write the worker took and did not answer in time is answered at once with
its outcome unknown (504), and the connector's writes stay held until the worker can no longer make it:

- no acknowledged PATCH is lost: a PATCH through the other sidecar waits for the first one's fate, and is
  applied after it (an abandoned write never lands after an acknowledged one);
- a connector created STOPPED never runs, whether the stall covers the create or only its validation.

Against the newest worker (the sidecar passes PATCH and ``initial_state`` through) and an old one (the sidecar
emulates both), the same scenarios. The worker is the tests' own (``own_workers``), never the shared stack's.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
import uuid
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from tests.support.deploy_local import local_stack
from tests.support.harness import RunningSidecar, sidecar_with
from tests.support.own_worker import OwnWorker, OwnWorkers
from tests.support.waiting import eventually

SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
STALL_S = 3.0  # the worker suspended this long: a long GC pause
SHORT_BUDGET_S = 1.5  # the first sidecar's request budget: it gives up on the stalled worker
ROUNDS = 3


@pytest.fixture(scope="module", params=[local_stack.NEW_VERSION, local_stack.OLD_VERSION])
def own_worker(own_workers: OwnWorkers, request: pytest.FixtureRequest) -> OwnWorker:
    return own_workers.of(request.param)


@pytest.fixture
async def pair(own_worker: OwnWorker) -> AsyncIterator[tuple[RunningSidecar, RunningSidecar]]:
    """Two sidecars of one cluster (a sidecars' topic of their own): the first gives up on a stalled worker
    after a short budget, the second waits as long as the default."""
    topic = f"stall-{uuid.uuid4().hex[:8]}.control-plane"
    async with (
        sidecar_with(own_worker.cluster, sidecars_topic=topic, request_budget_s=SHORT_BUDGET_S) as first,
        sidecar_with(own_worker.cluster, sidecars_topic=topic) as second,
    ):
        yield first, second


class Stalled:
    """The worker suspended from ``stop()`` until ``resume()`` (and at the end whatever happened)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid

    def stop(self) -> None:
        os.kill(self.pid, signal.SIGSTOP)

    def resume(self) -> None:
        os.kill(self.pid, signal.SIGCONT)


@pytest.fixture
def stall(own_worker: OwnWorker) -> Iterator[Stalled]:
    stalled = Stalled(own_worker.pid)
    try:
        yield stalled
    finally:
        stalled.resume()


def source(name: str) -> dict[str, str]:
    return {"connector.class": SOURCE, "file": f"/tmp/{name}-absent", "topic": name, "tasks.max": "1"}


async def test_no_acknowledged_patch_is_lost_across_a_worker_stall(
    own_worker: OwnWorker, pair: tuple[RunningSidecar, RunningSidecar], stall: Stalled
) -> None:
    first, second = pair
    name = f"stall-patch-{uuid.uuid4().hex[:8]}"
    async with httpx.AsyncClient(base_url=own_worker.cluster.connect_url, timeout=60) as worker:
        assert (await worker.post("/connectors", json={"name": name, "config": source(name)})).status_code == 201
        acknowledged: list[str] = []
        for n in range(ROUNDS):
            stall.stop()
            started = time.monotonic()
            abandoned = await first.client.patch(f"/connectors/{name}/config", json={"round": f"first-{n}"})
            assert time.monotonic() - started < SHORT_BUDGET_S + 2, "answered within its budget"
            # the worker took it and did not answer: a 504 that says the outcome is unknown
            assert abandoned.status_code == 504, abandoned.text
            assert "not known" in abandoned.json()["message"]
            later = asyncio.create_task(
                second.client.patch(f"/connectors/{name}/config", json={"round": f"second-{n}"})
            )
            await asyncio.sleep(STALL_S)  # the stall goes on: the fault itself, not a wait for a condition
            stall.resume()
            answer = await later
            if answer.status_code == 200:
                acknowledged.append(f"second-{n}")
                # the acknowledged PATCH is what the worker holds, now and once everything queued is done
                await worker.get(f"/connectors/{name}")  # a read queued behind whatever the worker took
                config = (await worker.get(f"/connectors/{name}/config")).json()
                assert config["round"] == f"second-{n}", f"an acknowledged PATCH was reverted: {config}"
        assert acknowledged, "no PATCH through the second sidecar was acknowledged"
        final = (await worker.get(f"/connectors/{name}/config")).json()
        assert final["round"] == acknowledged[-1]
        await worker.delete(f"/connectors/{name}")


async def never_runs(worker: httpx.AsyncClient, name: str, watch_s: float) -> list[str]:
    """The states the worker showed for ``name`` while watched: the connector's and its tasks'."""
    seen: list[str] = []
    deadline = time.monotonic() + watch_s
    while time.monotonic() < deadline:
        answer = await worker.get(f"/connectors/{name}/status")
        if answer.status_code == 200:
            status = answer.json()
            seen.append(status["connector"]["state"])
            seen.extend(task["state"] for task in status["tasks"])
        await asyncio.sleep(0.1)
    return seen


@pytest.mark.parametrize(
    "settings",
    [
        # the request's budget runs out during the stall: the create may never have been sent
        pytest.param({"request_budget_s": SHORT_BUDGET_S}, id="budget-runs-out"),
        # the liveness probe finds the worker hung: every wait on it ends at the verdict, the validation's and
        # then the create's, which the worker took and runs once it goes on
        pytest.param({"worker_probe_s": 0.5, "worker_probe_timeout_s": 0.5}, id="probe-verdict"),
    ],
)
async def test_a_connector_created_stopped_never_runs_whatever_the_stall(
    own_worker: OwnWorker, stall: Stalled, settings: dict[str, object]
) -> None:
    name = f"stall-create-{uuid.uuid4().hex[:8]}"
    async with (
        sidecar_with(own_worker.cluster, wait_ready=True, **settings) as sidecar,
        httpx.AsyncClient(base_url=own_worker.cluster.connect_url, timeout=60) as worker,
    ):
        stall.stop()
        answer = await sidecar.client.post(
            "/connectors", json={"name": name, "config": source(name), "initial_state": "STOPPED"}
        )
        await asyncio.sleep(STALL_S)  # the stall goes on: the fault itself
        stall.resume()
        assert answer.status_code == 504, answer.text
        assert "not known" in answer.json()["message"]
        # the worker goes on with what it took; the sidecar holds the connector's fence until it knows
        await eventually(
            lambda: sidecar.client.get("/_sidecar/cluster"),
            lambda r: all(f["connector"] != name for f in r.json()["fences"]),
            timeout_s=30,
            what="the connector's writes no longer held",
        )
        created = (await worker.get(f"/connectors/{name}")).status_code == 200
        if "worker_probe_s" in settings:
            assert created, "the create the worker took was lost"
        if created:
            seen = await never_runs(worker, name, 6.0)
            assert "RUNNING" not in seen, f"a connector created STOPPED ran: {seen}"
            shown = await eventually(
                lambda: sidecar.client.get(f"/connectors/{name}/status"),
                lambda r: r.status_code == 200 and r.json()["connector"]["state"] == "STOPPED",
                timeout_s=30,
                what="the connector STOPPED through the sidecar",
            )
            assert shown.json()["tasks"] == []
        else:  # never created: its target state goes once the sidecar knows, and a create of the name (which
            # waits for the connector's writes held) runs as asked
            answer = await sidecar.client.post("/connectors", json={"name": name, "config": source(name)})
            assert answer.status_code == 201, answer.text
            await eventually(
                lambda: worker.get(f"/connectors/{name}/status"),
                lambda r: r.status_code == 200 and r.json()["connector"]["state"] == "RUNNING",
                timeout_s=30,
                what="a later create of the name RUNNING",
            )
        await worker.delete(f"/connectors/{name}")
