"""A worker that hangs (accepts connections, never answers) is handled like one that is down: a real
Connect worker suspended with SIGSTOP. The view keeps answering fast, and its answers are marked stale
once the liveness probe (its own short timeout) finds no worker answering. A request waiting on the worker
ends at the probe's verdict, not at the end of its budget (30 s, the default): a proxied request gets the
504 of a worker that stopped answering, and a read with a view answer gets that answer (a route of the
sidecar's with ``READ_FROM=upstream``, or a passed-through ``GET /connectors/{c}`` and ``.../tasks``),
marked stale; a request already waiting when the worker stopped too.

The worker is the tests' own (deploy/local/stack.py's ``start_connect``, from the stack's jars, with
its own group.id, internal topics and port, against the stack's broker), of each release of the stack: the
shared stack's workers are never suspended.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
import uuid

import httpx
import pytest

from tests.support.deploy_local import local_stack
from tests.support.harness import sidecar_with
from tests.support.own_worker import OwnWorker, OwnWorkers
from tests.support.waiting import eventually

SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
BUDGET_S = 30.0  # the request budget (the default)
PROBE_S = 0.5  # the liveness probe: every 0.5 s, each bounded at 0.5 s
VERDICT_S = 3.0  # a request to the suspended worker ends within this of the next verdict (2 probes, and slack)
FAST_S = 0.5  # a view read while the worker hangs


@pytest.fixture(scope="module", params=[local_stack.NEW_VERSION, local_stack.OLD_VERSION, local_stack.OLDEST_VERSION])
def own_worker(own_workers: OwnWorkers, request: pytest.FixtureRequest) -> OwnWorker:
    """A Connect worker of the tests' own cluster, of each release of the stack: the newest (the sidecar
    defers to it) and the older ones (the sidecar emulates the newer API in front of them)."""
    return own_workers.of(request.param)


async def timed(client: httpx.AsyncClient, path: str) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    response = await client.get(path)
    return response, time.monotonic() - started


async def test_a_suspended_worker_is_handled_like_one_that_is_down(own_worker: OwnWorker) -> None:
    cluster = own_worker.cluster
    name = f"hung-{uuid.uuid4().hex[:8]}"
    config = {"connector.class": SOURCE, "file": f"/tmp/{name}-absent", "topic": name, "tasks.max": "1"}
    async with httpx.AsyncClient(base_url=cluster.connect_url, timeout=60) as worker:
        assert (await worker.post("/connectors", json={"name": name, "config": config})).status_code == 201
    async with (
        sidecar_with(
            cluster, worker_probe_s=PROBE_S, worker_probe_timeout_s=PROBE_S, request_budget_s=BUDGET_S
        ) as viewing,
        sidecar_with(
            cluster,
            read_from="upstream",
            worker_probe_s=PROBE_S,
            worker_probe_timeout_s=PROBE_S,
            request_budget_s=BUDGET_S,
        ) as forwarding,
    ):
        status = f"/connectors/{name}/status"
        fresh = await eventually(
            lambda: viewing.client.get(status),
            lambda r: r.status_code == 200 and r.json()["connector"]["state"] == "RUNNING",
            what="the connector RUNNING in the view",
        )
        assert "x-sidecar-stale" not in fresh.headers
        async with httpx.AsyncClient(base_url=cluster.connect_url, timeout=60) as worker:  # the worker's own answers
            native = {
                path: (await worker.get(path)).json() for path in (f"/connectors/{name}", f"/connectors/{name}/tasks")
            }
        os.kill(own_worker.pid, signal.SIGSTOP)
        stopped = time.monotonic()
        try:
            # a passed-through read sent before the probe finds the worker hung: it waits on the worker
            waiting = asyncio.create_task(timed(viewing.client, f"/connectors/{name}"))
            # the view: fast, and marked stale once the probe finds no worker answering
            stale = await eventually(
                lambda: timed(viewing.client, status),
                lambda answer: answer[0].headers.get("x-sidecar-stale") == "true",
                timeout_s=15,
                what="the view's answer marked stale",
            )
            assert stale[0].status_code == 200 and stale[0].json()["connector"]["state"] == "RUNNING"
            to_stale = time.monotonic() - stopped
            assert to_stale < 5  # a probe every 0.5 s, each bounded at 0.5 s
            # ... answered at the probe's verdict (the view's answer, stale), not after the 30 s budget
            response, took = await asyncio.wait_for(waiting, BUDGET_S + 5)
            assert response.status_code == 200, response.text
            assert response.headers["x-sidecar-stale"] == "true" and response.headers["x-sidecar-source"] == "view"
            assert response.json() == native[f"/connectors/{name}"]
            assert took < to_stale + 1, f"answered {took:.2f} s after it was sent, stale after {to_stale:.2f} s"
            print(f"the read waiting on the worker answered after {took:.2f} s")
            for _ in range(5):
                response, took = await timed(viewing.client, status)
                assert response.status_code == 200 and took < FAST_S
            # a proxied request: the 504 of a worker that stopped answering, at the next verdict (not Connect's
            # 90 s, nor the budget's 30 s)
            started = time.monotonic()
            response = await viewing.client.post(f"/connectors/{name}/tasks/0/restart")
            took = time.monotonic() - started
            assert response.status_code == 504, response.text
            assert response.json()["error_code"] == 504 and "stopped answering" in response.json()["message"]
            assert took < VERDICT_S
            print(f"stale after {to_stale:.2f} s; the proxied 504 after {took:.2f} s")
            # a proxied read the view can answer (rest.steps.unanswered): the view's answer, the worker's own, stale
            for path, answer in native.items():
                response, took = await timed(viewing.client, path)
                assert response.status_code == 200, response.text
                assert response.headers["x-sidecar-stale"] == "true" and response.headers["x-sidecar-source"] == "view"
                assert response.json() == answer
                assert took < VERDICT_S
            missing, _ = await timed(viewing.client, "/connectors/no-such-connector/tasks")
            assert missing.status_code == 404 and missing.headers["x-sidecar-stale"] == "true"
            assert missing.json() == {"error_code": 404, "message": "Connector no-such-connector not found"}
            # a read the workers answer on this sidecar, with a view answer: the view's, stale, within the budget
            response, took = await timed(forwarding.client, status)
            assert response.status_code == 200, response.text
            assert response.headers["x-sidecar-stale"] == "true" and response.headers["x-sidecar-source"] == "view"
            assert took < VERDICT_S
            print(f"the view's answer in place of the worker's after {took:.2f} s")
        finally:
            os.kill(own_worker.pid, signal.SIGCONT)
        # answering again: the view's answers are fresh again, proxied requests reach the worker
        await eventually(
            lambda: viewing.client.get(status),
            lambda r: "x-sidecar-stale" not in r.headers,
            timeout_s=30,
            what="the view fresh again",
        )
        # the worker's own answer again, on both sidecars
        for sidecar in (viewing, forwarding):
            response = await sidecar.client.get(f"/connectors/{name}")
            assert response.status_code == 200 and "x-sidecar-source" not in response.headers, response.headers
        assert (await viewing.client.delete(f"/connectors/{name}")).status_code == 204
