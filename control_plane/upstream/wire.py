"""The transport to plain-HTTP workers (``upstream.transport``): a lean HTTP/1.1 client, one request on one
pooled keep-alive connection, the request written as given (target byte for byte, headers in order), the
answer parsed by httptools (the parser uvicorn serves with). It does the little a pass-through needs and
nothing else: no redirects, cookies, decompression, auth or URL handling, so a request costs a fraction of
a general-purpose client's. A request's deadline shortens its own timers (no timeout scope per request: it
would cost more than the rest of the hop's timers).

Failures are the upstream seam's errors (``upstream.errors``), with the meanings the aiohttp transport
gives aiohttp's: the request never reached the worker (refused, connect timeout, no free connection) is
``WorkerUnreachable``; a connection that broke once the request may have been sent (a stale keep-alive
connection included) is ``WorkerDisconnected``; no answer within the read timeout is ``UpstreamTimeout``,
and so is a wait the liveness probe ends early (``WirePool.stop_waiting``: the worker stopped answering or
is gone; this transport knows which requests were written to it).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from typing import cast

import httptools
import yarl

from .errors import ConnectionRefused, UpstreamError, UpstreamTimeout, WorkerDisconnected, WorkerUnreachable
from .transport import Answer, Headers, Limits, WorkerRequest


class Slots:
    """``asyncio.Semaphore`` for the hot path: a free slot is taken without a coroutine (``take_now``);
    ``take`` waits for one, first come first served; ``release`` hands it to the first waiter."""

    __slots__ = ("_free", "_waiters")

    def __init__(self, count: int) -> None:
        self._free = count
        self._waiters: deque[asyncio.Future[None]] = deque()

    def take_now(self) -> bool:
        if self._free > 0 and not self._waiters:
            self._free -= 1
            return True
        return False

    async def take(self) -> None:
        if self.take_now():
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except BaseException:  # cancelled (a timeout): a slot handed over meanwhile goes to the next one
            if waiter.done() and not waiter.cancelled():
                self.release()
            else:
                with contextlib.suppress(ValueError):
                    self._waiters.remove(waiter)
            raise

    def exhausted(self) -> bool:
        """No slot is free (a taker waits)."""
        return self._free == 0

    def release(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
        self._free += 1


class _Connection(asyncio.Protocol):
    """One connection to a worker; one request at a time."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.idle_since = 0.0
        self._parser = httptools.HttpResponseParser(self)
        self._answer: asyncio.Future[Answer] | None = None
        self._head_only = False
        self._reset()

    def _reset(self) -> None:
        self._headers: Headers = []
        self._body: list[bytes] = []
        self._headers_done = False

    # -- asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # a stream transport (asyncio's or uvloop's, which does not derive from asyncio.Transport)
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        if self._answer is None or self._answer.done():  # bytes nobody asked for: the connection is unusable
            self.close()
            return
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._fail(WorkerDisconnected("", f"malformed answer ({exc})"))
            self.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self._answer is not None and not self._answer.done():
            if self._headers_done and not self._framed():  # the body of an answer without framing ends here
                self._complete()
            else:
                self._fail(WorkerDisconnected("", f"connection lost ({exc or 'Server disconnected'})"))

    # -- httptools callbacks
    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers.append((name, value))

    def _framed(self) -> bool:
        """Content-Length or chunked: the parser knows where the body ends."""
        return any(n.lower() in (b"content-length", b"transfer-encoding") for n, _ in self._headers)

    def on_headers_complete(self) -> None:
        self._headers_done = True
        if self._head_only and self._parser.get_status_code() >= 200:
            # a HEAD answer has no body whatever its headers say; the parser cannot be told so, so
            # the connection is not reused
            self._complete()
            self.close()

    def on_body(self, body: bytes) -> None:
        self._body.append(body)

    def on_message_complete(self) -> None:
        status = self._parser.get_status_code()
        if 100 <= status < 200 and status != 101:  # an interim answer (100 Continue): the final one follows
            self._reset()
            return
        if not self._parser.should_keep_alive():
            self.closed = True
        self._complete()

    # -- the client side
    def _complete(self) -> None:
        if self._answer is not None and not self._answer.done():
            self._answer.set_result((self._parser.get_status_code(), self._headers, b"".join(self._body)))

    def _fail(self, err: UpstreamError) -> None:
        if self._answer is not None and not self._answer.done():
            self._answer.set_exception(err)

    def send(self, request: bytes, head_only: bool) -> asyncio.Future[Answer]:
        assert self.transport is not None
        self._reset()
        self._head_only = head_only
        self._answer = asyncio.get_running_loop().create_future()
        self.transport.write(request)
        return self._answer

    def time_out(self, after_s: float) -> None:
        self.stop_waiting(f"no answer in time (read timeout {after_s:g}s)")

    def stop_waiting(self, detail: str) -> None:
        """The wait for the answer ends now, as at the read timeout (``UpstreamTimeout``)."""
        self._fail(UpstreamTimeout("", detail))

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()


class WirePool:
    """The plain-HTTP transport: keep-alive connections per worker, at most ``max_connections`` in use at once
    (all workers)."""

    def __init__(self, max_connections: int, keepalive_s: float) -> None:
        self._slots = Slots(max_connections)
        self._keepalive_s = keepalive_s
        self._idle: dict[tuple[str, int], deque[_Connection]] = {}
        self._waiting: dict[str, set[_Connection]] = {}  # per worker, the connections awaiting an answer
        self._endpoints: dict[str, tuple[str, int]] = {}  # per worker, its host and port (derived once)

    async def send(self, request: WorkerRequest, limits: Limits, deadline: float | None = None) -> Answer:
        worker = request.worker
        endpoint = self._endpoints.get(worker) or self._endpoint(worker)
        read_s = None
        if deadline is not None:  # every wait shortened to what is left of the budget
            read_s = deadline - asyncio.get_running_loop().time()
            limits = limits.within(read_s)
        head = [f"{request.method} {request.target} HTTP/1.1\r\n".encode("latin-1")]
        head += [b"%s: %s\r\n" % pair for pair in request.headers]
        head.append(b"\r\n")
        return await self._send(
            worker, endpoint[0], endpoint[1], b"".join(head) + request.body, request.method == "HEAD", limits, read_s
        )

    def _endpoint(self, worker: str) -> tuple[str, int]:
        url = yarl.URL(worker)
        if url.scheme != "http" or not url.host or url.port is None:
            raise WorkerUnreachable(worker, "not an http URL")
        endpoint = self._endpoints[worker] = (url.host, url.port)
        return endpoint

    def stop_waiting(self, worker: str, detail: str, *, hung: bool = True) -> None:
        """Every request awaiting ``worker``'s answer ends now, as at its read timeout (``UpstreamTimeout``
        with ``detail``); its connection is closed. Whether the worker is hung or gone: a request waits for
        an answer here only once it was written to the worker."""
        for conn in tuple(self._waiting.get(worker, ())):
            conn.stop_waiting(detail)

    def exhausted(self) -> bool:
        """Every connection is in use: a request now waits for one before it reaches any worker."""
        return self._slots.exhausted()

    async def _send(
        self,
        worker: str,
        host: str,
        port: int,
        request: bytes,
        head_only: bool,
        limits: Limits,
        read_s: float | None = None,
    ) -> Answer:
        """Send ``request`` (a whole HTTP/1.1 request, head and body) and return the answer's status,
        raw headers and body. ``worker`` names the worker in errors; ``read_s``: a read timeout shorter
        than the limits' (what is left of the request's budget)."""
        if not self._slots.take_now():  # every connection in use: wait for one, within the pool timeout
            try:
                async with asyncio.timeout(limits.pool_s):
                    await self._slots.take()
            except TimeoutError:
                raise WorkerUnreachable(worker, "no free connection in the pool") from None
        try:
            return await self._exchange(worker, host, port, request, head_only, limits, read_s)
        finally:
            self._slots.release()

    async def _exchange(
        self, worker: str, host: str, port: int, request: bytes, head_only: bool, limits: Limits, read_s: float | None
    ) -> Answer:
        conn = self._idle_connection((host, port)) or await self._connect(worker, host, port, limits)
        answer = conn.send(request, head_only)
        # the read timeout as one timer on the answer (cheaper than a timeout scope per request)
        if read_s is None or read_s > limits.read_s:
            read_s = limits.read_s
        timer = asyncio.get_running_loop().call_later(read_s, conn.time_out, read_s)
        waiting = self._waiting.get(worker)
        if waiting is None:
            waiting = self._waiting[worker] = set()
        waiting.add(conn)
        try:
            status, headers, body = await answer
        except UpstreamError as err:
            conn.close()
            raise type(err)(worker, err.detail) from None
        except BaseException:  # cancelled: the connection is in an unknown state
            conn.close()
            raise
        finally:
            timer.cancel()
            waiting.discard(conn)
        if not conn.closed:
            conn.idle_since = time.monotonic()
            self._idle.setdefault((host, port), deque()).append(conn)
        return status, headers, body

    def _idle_connection(self, key: tuple[str, int]) -> _Connection | None:
        idle = self._idle.get(key)
        now = time.monotonic()
        while idle:
            conn = idle.pop()  # the most recently used: the least likely to have been closed by the worker
            if not conn.closed and now - conn.idle_since < self._keepalive_s:
                return conn
            conn.close()
        return None

    async def _connect(self, worker: str, host: str, port: int, limits: Limits) -> _Connection:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(limits.connect_s):
                _, conn = await loop.create_connection(_Connection, host, port)
        except TimeoutError:
            raise WorkerUnreachable(worker, f"connect timed out (after {limits.connect_s:g}s)") from None
        except ConnectionRefusedError as exc:
            raise ConnectionRefused(worker, f"cannot connect ({exc})") from None
        except OSError as exc:
            raise WorkerUnreachable(worker, f"cannot connect ({exc})") from None
        return conn

    async def aclose(self) -> None:
        for idle in self._idle.values():
            for conn in idle:
                with contextlib.suppress(Exception):
                    conn.close()
        self._idle.clear()


__all__ = ["Slots", "WirePool"]
