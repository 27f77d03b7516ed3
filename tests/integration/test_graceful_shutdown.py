"""Graceful shutdown of a real sidecar process: on SIGTERM it stops accepting connections, lets the
request under way finish (a slow answer of the worker behind it), then exits; the wait is bounded by
``shutdown_grace_s``. (Pending status writes are flushed by the lifespan's shutdown: test_status_writer.)"""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

import httpx
import pytest

from control_plane.rest.steps.limits import SHUTTING_DOWN
from tests.support.sidecar_process import SlowWorker, sidecar_process
from tests.support.waiting import eventually

pytestmark = pytest.mark.timeout(120)
EXITED = (0, -signal.SIGTERM)  # 0: shut down in order; killed by the signal itself would be the other


async def refused(url: str) -> bool:
    try:
        async with httpx.AsyncClient(timeout=2) as client:
            await client.get(url + "/healthz")
    except (httpx.ConnectError, httpx.RemoteProtocolError):  # refused, or accepted as the listener closed
        return True  # and closed unanswered: either way a new request is not served
    return False


async def test_sigterm_finishes_the_request_under_way(tmp_path: Path) -> None:
    async with (
        SlowWorker() as worker,
        sidecar_process(tmp_path, worker.url, {"CONTROL_PLANE_SHUTDOWN_GRACE_S": "30"}) as sidecar,
        httpx.AsyncClient(timeout=60) as client,
    ):
        in_flight = asyncio.create_task(client.get(sidecar.url + "/connectors/slow"))
        await asyncio.wait_for(worker.received.wait(), 30)
        sidecar.terminate()
        await eventually(lambda: refused(sidecar.url), bool, timeout_s=20, what="new connections refused")
        assert not in_flight.done()
        worker.release.set()
        response = await in_flight
        assert response.status_code == 200 and response.json() == {"name": "slow"}
        assert await sidecar.exited(timeout_s=20) in EXITED
    log = sidecar.log.read_text()
    assert "Waiting for connections to close" in log or "Shutting down" in log
    assert "Traceback" not in log


async def test_the_wait_for_requests_under_way_is_bounded(tmp_path: Path) -> None:
    async with (
        SlowWorker() as worker,
        sidecar_process(tmp_path, worker.url, {"CONTROL_PLANE_SHUTDOWN_GRACE_S": "1"}) as sidecar,
        httpx.AsyncClient(timeout=60) as client,
    ):
        in_flight = asyncio.create_task(client.get(sidecar.url + "/connectors/slow"))
        await asyncio.wait_for(worker.received.wait(), 30)
        started = time.monotonic()
        sidecar.terminate()
        assert await sidecar.exited(timeout_s=20) in EXITED
        assert time.monotonic() - started < 8
        response = await in_flight  # cut at the end of the grace period: Connect's error shape
        assert response.status_code == 503
        assert response.json() == {"error_code": 503, "message": SHUTTING_DOWN}
