"""A worker the liveness probe finds hung: every request already waiting on it ends at the probe's verdict,
the way it ends at its timeout (``UpstreamTimeout``, a write never resent to another worker), not when its
budget runs out; a worker that answers again is used again. Real listeners stand in for the workers; the
probe (``worker_versions``) is run by the test, so the verdict comes when the test says."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest

from control_plane.upstream import BudgetExhausted, ConnectUpstream, UpstreamRequest, UpstreamTimeout
from control_plane.upstream.aiohttp_transport import AiohttpTransport
from control_plane.upstream.client import build_transport

BUDGET_S = 30.0  # the request budget: far longer than the test waits
PROBE_TIMEOUT_S = 0.2
VERSION = b'{"version":"4.3.1","commit":"c","kafka_cluster_id":"k"}'


@dataclass
class Worker:
    """A listener that takes requests and, while ``answering`` is clear, never answers them (a worker that
    hangs, ``GET /`` too); once it is set, it answers each with Connect's ``GET /`` body."""

    url: str = ""
    answering: asyncio.Event = field(default_factory=asyncio.Event)
    took: asyncio.Event = field(default_factory=asyncio.Event)  # a request other than ``GET /`` was taken
    requests: list[bytes] = field(default_factory=list)  # each request line

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    (int(h.split(b":", 1)[1]) for h in head.split(b"\r\n") if h.lower().startswith(b"content-length:")),
                    0,
                )
                if length:
                    await reader.readexactly(length)
                line = head.split(b"\r\n", 1)[0]
                self.requests.append(line)
                if not line.startswith(b"GET / "):
                    self.took.set()
                await self.answering.wait()
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                    % (len(VERSION), VERSION)
                )
                await writer.drain()


@contextlib.asynccontextmanager
async def workers(count: int) -> AsyncIterator[list[Worker]]:
    started: list[Worker] = []
    servers: list[asyncio.Server] = []
    writers: list[asyncio.StreamWriter] = []
    for _ in range(count):
        worker = Worker()

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, worker: Worker = worker) -> None:
            writers.append(writer)
            await worker.handle(reader, writer)

        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        worker.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        started.append(worker)
        servers.append(server)
    try:
        yield started
    finally:
        for worker in started:
            worker.answering.set()
        for writer in writers:
            writer.close()
        for server in servers:
            server.close()
            await server.wait_closed()


def upstream_of(urls: list[str], path: str) -> ConnectUpstream:
    """The lean path (the default transport, for plain-HTTP workers) or the one with a timeout scope per
    request (aiohttp's pool, the HTTPS workers' transport)."""
    transport = AiohttpTransport(4, 5.0) if path == "scope" else None
    return ConnectUpstream(urls, transport=transport, read_timeout_s=60, probe_timeout_s=PROBE_TIMEOUT_S)


def sent(method: str, deadline_s: float = BUDGET_S) -> UpstreamRequest:
    return UpstreamRequest(method, "/connectors/a", deadline=asyncio.get_running_loop().time() + deadline_s)


PATHS = pytest.mark.parametrize("path", ["lean", "scope"])


@PATHS
@pytest.mark.parametrize("method", ["GET", "POST"])
async def test_a_request_waiting_on_a_hung_worker_ends_at_the_probes_verdict(path: str, method: str) -> None:
    async with workers(1) as [worker]:
        upstream = upstream_of([worker.url], path)
        try:
            waiting = asyncio.create_task(upstream.forward(sent(method)))
            await asyncio.wait_for(worker.took.wait(), 5)
            started = time.monotonic()
            assert await upstream.worker_versions() == {worker.url: None}  # the probe: no answer in time
            with pytest.raises(UpstreamTimeout) as caught:
                await asyncio.wait_for(waiting, 2.0)  # not the 30 s of its budget
            assert time.monotonic() - started < PROBE_TIMEOUT_S + 1.0
        finally:
            await upstream.aclose()
    # the timeout's error (the 504 of an unknown outcome for a write), saying why
    assert type(caught.value) is UpstreamTimeout
    assert caught.value.detail.startswith("stopped answering (") and "liveness probe" in caught.value.detail


@PATHS
async def test_a_cut_write_is_never_sent_to_another_worker(path: str) -> None:
    async with workers(2) as [hung, other]:
        other.answering.set()
        upstream = upstream_of([hung.url, other.url], path)
        try:
            waiting = asyncio.create_task(upstream.forward(sent("POST")))
            await asyncio.wait_for(hung.took.wait(), 5)
            assert await upstream.worker_versions() == {hung.url: None, other.url: "4.3.1"}
            with pytest.raises(UpstreamTimeout):
                await asyncio.wait_for(waiting, 2.0)
        finally:
            await upstream.aclose()
    assert [line for line in other.requests if not line.startswith(b"GET / ")] == []


@PATHS
async def test_a_worker_that_answers_again_is_used_again(path: str) -> None:
    async with workers(1) as [worker]:
        upstream = upstream_of([worker.url], path)
        try:
            waiting = asyncio.create_task(upstream.forward(sent("GET")))
            await asyncio.wait_for(worker.took.wait(), 5)
            await upstream.worker_versions()
            with pytest.raises(UpstreamTimeout):
                await asyncio.wait_for(waiting, 2.0)
            worker.answering.set()
            # a request after the verdict waits for the worker's answer (it is not cut by the old verdict)
            answer = await asyncio.wait_for(upstream.forward(sent("GET")), 5)
            assert answer.status == 200 and answer.worker == worker.url
            assert await upstream.worker_versions() == {worker.url: "4.3.1"}
        finally:
            await upstream.aclose()


@PATHS
async def test_the_budget_still_ends_a_wait_the_probe_does_not(path: str) -> None:
    async with workers(1) as [worker]:
        upstream = upstream_of([worker.url], path)
        try:
            started = time.monotonic()
            with pytest.raises(UpstreamTimeout) as caught:
                await upstream.forward(sent("GET", deadline_s=0.3))
            assert time.monotonic() - started < 1.5
        finally:
            await upstream.aclose()
    assert "request budget" in caught.value.detail


async def test_a_probe_that_found_no_free_connection_ends_no_wait() -> None:
    """Every pooled connection in use: the probe waits for one, never reaches the worker, and its timeout
    says nothing of the requests the worker has taken (they end at their own budget)."""
    async with workers(1) as [worker]:
        upstream = ConnectUpstream(
            [worker.url], transport=build_transport(1, 5.0), read_timeout_s=60, probe_timeout_s=PROBE_TIMEOUT_S
        )
        try:
            waiting = asyncio.create_task(upstream.forward(sent("GET", deadline_s=1.0)))
            await asyncio.wait_for(worker.took.wait(), 5)
            assert await upstream.worker_versions() == {worker.url: None}
            with pytest.raises(BudgetExhausted):
                await asyncio.wait_for(waiting, 3.0)
        finally:
            await upstream.aclose()
    assert [line for line in worker.requests if line.startswith(b"GET / ")] == []  # the probe never reached it
