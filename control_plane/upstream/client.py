"""One pooled client per Connect cluster: failover between workers and retries of rebalance 409s.

``ConnectUpstream.forward`` sends a request to a healthy worker of the cluster and returns the
worker's answer untouched (status, headers minus hop-by-hop ones, raw body bytes). A worker that
refuses connections is tried last for ``worker_down_s``, and so is one that did not answer a
liveness probe (``worker_versions``, bounded by ``probe_timeout_s``: a worker that hangs) or a request
within its budget; when no worker answers, ``NoWorkerAvailable`` names what failed. A request's
``deadline`` bounds every wait for a worker made for it (``BudgetExhausted``), and at most
``max_concurrent_requests`` requests are forwarded at once (the others wait for a slot, at most the pool
timeout, then ``UpstreamOverloaded``). When the liveness probe finds a worker hung or gone, every request
waiting on that worker ends at once the way it ends at its timeout (``stop_waiting``: ``UpstreamTimeout``,
never resent elsewhere), not when its budget runs out. Connect answers 409 when a request raced a
rebalance; such an answer is retried with a bounded exponential backoff and, when retries run out,
returned as it is.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Iterable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Protocol

import aiohttp
import httpx
import orjson
import structlog
import yarl
from tenacity import AsyncRetrying, retry_if_result, stop_after_attempt, wait_exponential

from .errors import (
    BudgetExhausted,
    NoWorkerAvailable,
    UpstreamError,
    UpstreamOverloaded,
    UpstreamTimeout,
    WorkerUnreachable,
    classify,
)
from .transport import RAW_TARGET, PassThroughTransport
from .wire import Limits, Slots

log = structlog.get_logger(__name__)

Headers = list[tuple[bytes, bytes]]
Transport = httpx.AsyncBaseTransport  # what the client sends through (tests put a fake one here)

# RFC 9110 section 7.6.1: connection-specific headers a proxy must not forward; plus the ones that
# describe the framing of one hop (the proxy frames its own messages).
HOP_BY_HOP = frozenset(
    {
        b"connection",
        b"keep-alive",
        b"proxy-authenticate",
        b"proxy-authorization",
        b"proxy-connection",
        b"te",
        b"trailer",
        b"trailers",
        b"transfer-encoding",
        b"upgrade",
        b"host",
        b"content-length",
    }
)
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# methods aiohttp sends without a Content-Length when they have no body (ClientRequest.GET_METHODS); httpx
# puts a Content-Length first on an empty POST, PUT or PATCH
BODILESS_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})
_CL_FIRST = frozenset({"POST", "PUT", "PATCH"})

# The 409 messages of Connect's HerderRequestHandler.completeOrForwardRequest: the request did not
# run because the worker's view of the cluster was changing. Connect's answer carries no other mark
# of the cause; a 409 such as "Connector x already exists" is final and is never retried.
REBALANCE_409_PREFIXES = (
    "Cannot complete request momentarily due to stale configuration",
    "Cannot complete request momentarily due to no known leader URL",
    "Cannot complete request because of a conflicting operation",
    "Request cannot be completed because a rebalance is expected",
)


def strip_hop_by_hop(headers: Iterable[tuple[bytes, bytes]]) -> Headers:
    return _split_framing(headers)[0]


# The deadline of the client's request being served (the REST layer sets it: rest.limits): requests the
# sidecar composes while serving it (the PUT behind an emulated PATCH, a restart) end there too.
REQUEST_DEADLINE: ContextVar[float | None] = ContextVar("request_deadline", default=None)


def _split_framing(headers: Iterable[tuple[bytes, bytes]]) -> tuple[Headers, tuple[tuple[bytes, bytes], ...]]:
    """The headers without the hop-by-hop ones (and the ones ``Connection`` names), and the
    ``content-length`` ones (lower-cased names): one pass, each name lower-cased once."""
    kept: list[tuple[bytes, bytes, bytes]] = []
    framing: list[tuple[bytes, bytes]] = []
    named: set[bytes] | None = None
    for name, value in headers:
        low = name.lower()
        if low in HOP_BY_HOP:
            if low == b"content-length":
                framing.append((low, value))
            elif low == b"connection":
                named = (named or set()) | {token.strip().lower() for token in value.split(b",")}
            continue
        kept.append((low, name, value))
    if named:
        return [(n, v) for low, n, v in kept if low not in named], tuple(framing)
    return [(n, v) for _, n, v in kept], tuple(framing)


@dataclass(frozen=True, slots=True)
class UpstreamRequest:
    method: str
    path: str  # percent-encoded, as received
    query: bytes = b""
    headers: tuple[tuple[bytes, bytes], ...] = ()
    body: bytes = b""
    deadline: float | None = None  # the event loop's time when the client stops waiting (the request budget)


@dataclass(frozen=True, slots=True)
class UpstreamResponse:
    status: int
    headers: Headers
    body: bytes
    worker: str
    attempts: int = 1
    # the framing headers of the worker's answer (content-length), for a HEAD answered without body
    framing: tuple[tuple[bytes, bytes], ...] = ()

    def json(self) -> object:
        return orjson.loads(self.body)


def is_rebalance_conflict(response: UpstreamResponse) -> bool:
    if response.status != 409:
        return False
    try:
        message = orjson.loads(response.body).get("message") or ""
    except (orjson.JSONDecodeError, AttributeError):
        return False
    return isinstance(message, str) and message.startswith(REBALANCE_409_PREFIXES)


def build_transport(kind: str, max_connections: int, keepalive_s: float) -> httpx.AsyncBaseTransport:
    limits = httpx.Limits(
        max_connections=max_connections, max_keepalive_connections=max_connections, keepalive_expiry=keepalive_s
    )
    if kind == "aiohttp":
        # httpx's own pool slows down under concurrency (encode/httpx#3215); aiohttp's does not; and this
        # one sends the client's target byte for byte
        return PassThroughTransport(max_connections, keepalive_s)
    # httpx's own transport, for comparison: it resolves dot segments in the path (not a pass-through)
    return httpx.AsyncHTTPTransport(limits=limits, trust_env=False)


def _origin(worker: str) -> tuple[str, str]:
    """A worker URL's origin and Host header value, as httpx derives them (lowercase host, no default port)."""
    url = httpx.URL(worker)
    netloc = url.netloc.decode("ascii")
    return f"{url.scheme}://{netloc}", netloc


def _plain_http(worker: str) -> tuple[str, int] | None:
    """Host and port of an ``http://`` worker (the lean pool's); None for another scheme."""
    url = httpx.URL(worker)
    if url.scheme != "http" or not url.host:
        return None
    return url.host, url.port or 80


class UpstreamObserver(Protocol):
    """What the upstream reports as it works (``metrics.Metrics`` implements it)."""

    def upstream_error(self, worker: str, kind: str) -> None: ...

    def rebalance_retry(self) -> None: ...


class ConnectUpstream:
    def __init__(
        self,
        workers: Sequence[str],
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        connect_timeout_s: float = 5.0,
        read_timeout_s: float = 95.0,
        pool_timeout_s: float = 10.0,
        worker_down_s: float = 5.0,
        rebalance_retry_max: int = 5,
        rebalance_retry_initial_backoff_ms: int = 200,
        rebalance_retry_max_backoff_ms: int = 3000,
        observer: UpstreamObserver | None = None,
        max_concurrent_requests: int = 0,
        probe_timeout_s: float | None = None,
    ) -> None:
        if not workers:
            raise ValueError("at least one worker URL is needed")
        self.workers = tuple(w.rstrip("/") for w in workers)
        self._transport = transport or build_transport("aiohttp", 100, 15.0)
        self._client = httpx.AsyncClient(
            transport=self._transport,
            timeout=httpx.Timeout(
                connect=connect_timeout_s, read=read_timeout_s, write=read_timeout_s, pool=pool_timeout_s
            ),
            trust_env=False,
        )
        # the lean path's equivalents of what httpx derives per request (see _send_lean)
        self._timeout = aiohttp.ClientTimeout(
            sock_connect=connect_timeout_s, sock_read=read_timeout_s, connect=pool_timeout_s
        )
        self._origins = {w: _origin(w) for w in self.workers}
        self._plain_http = {w: endpoint for w in self.workers if (endpoint := _plain_http(w)) is not None}
        self._limits = Limits(connect_s=connect_timeout_s, read_s=read_timeout_s, pool_s=pool_timeout_s)
        self._down_until: dict[str, float] = {}
        self._worker_down_s = worker_down_s
        self._retry_max = rebalance_retry_max
        self._backoff_initial_s = rebalance_retry_initial_backoff_ms / 1000
        self._backoff_max_s = rebalance_retry_max_backoff_ms / 1000
        self.rebalance_retries = 0
        self.observer = observer
        self._pool_timeout_s = pool_timeout_s
        self._max_concurrent = max_concurrent_requests
        self._slots = Slots(max_concurrent_requests) if max_concurrent_requests else None
        self._probe_timeout_s = probe_timeout_s
        # per worker, the timeout scopes of the requests awaiting its answer off the lean path (stop_waiting)
        self._waiting: dict[str, set[asyncio.Timeout]] = {}
        self._stopped_answering: dict[str, str] = {}  # per worker, why the liveness probe ended the waits last
        # the Server header of the last answer to the liveness probe (rest.stamp puts it on the sidecar's own)
        self.server_header: bytes | None = None

    async def aclose(self) -> None:
        await self._client.aclose()

    def _ordered_workers(self) -> Sequence[str]:
        if not self._down_until:  # every worker up: in the order given
            return self.workers
        now = time.monotonic()
        up = [w for w in self.workers if self._down_until.get(w, 0.0) <= now]
        down = sorted((w for w in self.workers if w not in up), key=lambda w: self._down_until[w])
        return up + down

    async def _send_once(self, worker: str, request: UpstreamRequest) -> UpstreamResponse:
        if isinstance(self._transport, PassThroughTransport):
            return await self._send_lean(self._transport, worker, request)
        url = worker + request.path
        if request.query:
            url += "?" + request.query.decode("latin-1")
        # httpx.Request, not client.build_request: the client's default headers (its User-Agent,
        # Accept-Encoding) must not be added to what the caller sent.
        target = request.path.encode("latin-1") + (b"?" + request.query if request.query else b"")
        http_request = httpx.Request(
            request.method,
            url,
            headers=strip_hop_by_hop(request.headers),
            content=request.body,
            extensions={RAW_TARGET: target},  # byte for byte, as the client sent it (PassThroughTransport)
        )
        try:
            response = await self._client.send(http_request, stream=True)
            try:
                body = b"".join([chunk async for chunk in response.aiter_raw()])
            finally:
                await response.aclose()
        except httpx.HTTPError as exc:
            raise classify(worker, exc) from exc
        self._down_until.pop(worker, None)
        headers, framing = _split_framing(response.headers.raw)
        return UpstreamResponse(response.status_code, headers, body, worker, framing=framing)

    async def _send_lean(
        self,
        transport: PassThroughTransport,
        worker: str,
        request: UpstreamRequest,
        limits: Limits | None = None,
        read_s: float | None = None,
    ) -> UpstreamResponse:
        """What ``_send_once`` does through httpx, without httpx's objects: the same target (byte for
        byte), the same headers in the same order (httpx's Host first, its Content-Length), the same
        timeouts and the same kinds of errors. A plain-HTTP worker is reached through the lean HTTP/1.1
        pool (``upstream.wire``), an HTTPS one through the aiohttp pool."""
        origin, host = self._origins[worker]
        target = request.path + ("?" + request.query.decode("latin-1") if request.query else "")
        headers = strip_hop_by_hop(request.headers)
        host_header = (b"Host", host.encode("ascii"))
        if request.body:
            headers = [host_header, *headers, (b"Content-Length", str(len(request.body)).encode())]
        elif request.method in _CL_FIRST:
            headers = [host_header, (b"Content-Length", b"0"), *headers]
        else:
            headers = [host_header, *headers]
        endpoint = self._plain_http.get(worker)
        if endpoint is not None:
            if not request.body and request.method not in BODILESS_METHODS and request.method not in _CL_FIRST:
                headers.append((b"Content-Length", b"0"))  # what aiohttp adds (ClientRequest.update_body_from_data)
            head = [f"{request.method} {target} HTTP/1.1\r\n".encode("latin-1")]
            head += [b"%s: %s\r\n" % pair for pair in headers]
            head.append(b"\r\n")
            wire_request = b"".join(head) + request.body
            status, raw_headers, body = await transport.wire.exchange(
                worker, endpoint[0], endpoint[1], wire_request, request.method == "HEAD", limits or self._limits, read_s
            )
        else:
            try:
                status, raw_headers, body = await transport.exchange(
                    request.method,
                    yarl.URL(origin + target, encoded=True),
                    [(n.decode("latin-1"), v.decode("latin-1")) for n, v in headers],
                    request.body or None,
                    self._timeout,
                )
            except httpx.HTTPError as exc:
                raise classify(worker, exc) from exc
        if self._down_until:
            self._down_until.pop(worker, None)
        headers, framing = _split_framing(raw_headers)
        return UpstreamResponse(status, headers, body, worker, framing=framing)

    def _reach(self, worker: str) -> None:
        """What the lean path needs of a worker it was not given, derived once (as for the given ones)."""
        if worker in self._origins:
            return
        try:
            url = httpx.URL(worker)
        except httpx.InvalidURL:
            url = httpx.URL()
        if url.scheme not in ("http", "https") or not url.host:
            raise WorkerUnreachable(worker, "not an http or https URL")
        self._origins[worker] = _origin(worker)
        if (endpoint := _plain_http(worker)) is not None:
            self._plain_http[worker] = endpoint

    def _suspect(self, worker: str) -> None:
        """``worker`` failed to answer: tried last for ``worker_down_s`` (until it answers again)."""
        self._down_until[worker] = time.monotonic() + self._worker_down_s

    async def _send_within(self, worker: str, request: UpstreamRequest, deadline: float | None) -> UpstreamResponse:
        """``_send_once`` with every wait ending at ``deadline`` (None: at the timeouts only): on the lean path its
        own timers, shortened (no timeout scope per request: it costs more than the rest of the hop's timers),
        elsewhere a scope. ``stop_waiting`` ends either early, through the same timeout."""
        loop = asyncio.get_running_loop()
        try:
            if worker in self._plain_http and isinstance(self._transport, PassThroughTransport):
                if deadline is None:
                    return await self._send_lean(self._transport, worker, request)
                left = deadline - loop.time()
                if left <= 0:
                    raise UpstreamTimeout(worker, "no time left")
                return await self._send_lean(self._transport, worker, request, self._limits.within(left), left)
            if deadline is not None and deadline <= loop.time():
                raise UpstreamTimeout(worker, "no time left")
            async with asyncio.timeout_at(deadline) as scope:
                waiting = self._waiting.setdefault(worker, set())
                waiting.add(scope)
                try:
                    return await self._send_once(worker, request)
                finally:
                    waiting.discard(scope)
        except (TimeoutError, UpstreamTimeout, WorkerUnreachable) as err:
            # a timeout before the deadline (the loop's timers may fire a little early): the worker's own, or
            # the liveness probe's verdict (stop_waiting), not the budget's
            if deadline is None or loop.time() < deadline - 0.01:
                if isinstance(err, UpstreamError):
                    raise
                raise UpstreamTimeout(worker, self._stopped_answering.get(worker, "stopped answering")) from None
            self._suspect(worker)
            raise BudgetExhausted(worker, "no answer within the request budget") from None

    def stop_waiting(self, worker: str, detail: str, *, hung: bool = True) -> None:
        """The liveness probe found ``worker`` hung or gone: every request awaiting its answer ends now, as
        at its timeout (``UpstreamTimeout`` with ``detail``; a read with a view answer gets that, stale, a
        write the 504 of an unknown outcome). Requests sent to it later wait again (until the next verdict):
        a worker that recovers answers them. A worker that is gone (``hung`` False: it refuses, or cannot
        be reached) leaves a request off the lean path as it is: that one may still be connecting, and its
        own refusal sends it to another worker."""
        self._stopped_answering[worker] = detail
        if isinstance(self._transport, PassThroughTransport):
            self._transport.wire.stop_waiting(worker, detail)
        if not hung:
            return
        now = asyncio.get_running_loop().time()
        for scope in tuple(self._waiting.get(worker, ())):
            if not scope.expired():  # one whose deadline has just passed ends as it is
                scope.reschedule(now)

    async def _send_to_any(self, request: UpstreamRequest) -> UpstreamResponse:
        errors: list[UpstreamError] = []
        for worker in self._ordered_workers():
            try:
                return await self._send_within(worker, request, request.deadline)
            except UpstreamError as err:
                errors.append(err)
                if self.observer:
                    self.observer.upstream_error(worker, type(err).__name__)
                if err.retriable:  # never reached the worker (WorkerUnreachable): safe to send elsewhere
                    self._suspect(worker)
                    log.warning("worker unreachable", worker=worker, error=err.detail)
                    continue
                if request.method in SAFE_METHODS and not isinstance(err, UpstreamTimeout):
                    log.warning("worker connection lost; trying another worker", worker=worker, error=err.detail)
                    continue
                raise
        raise NoWorkerAvailable(errors)

    async def forward(self, request: UpstreamRequest) -> UpstreamResponse:
        if request.deadline is None and (deadline := REQUEST_DEADLINE.get()) is not None:
            request = dataclasses.replace(request, deadline=deadline)  # one the sidecar composed for a client's
        if self._slots is None:
            return await self._forward(request)
        if not self._slots.take_now():  # every slot taken: wait for one, within the pool timeout and the budget
            loop = asyncio.get_running_loop()
            until = loop.time() + self._pool_timeout_s
            try:
                async with asyncio.timeout_at(min(until, request.deadline or until)):
                    await self._slots.take()
            except TimeoutError:
                raise UpstreamOverloaded(self._max_concurrent) from None
        try:
            return await self._forward(request)
        finally:
            self._slots.release()

    async def _forward(self, request: UpstreamRequest) -> UpstreamResponse:
        response = await self._send_to_any(request)
        if not is_rebalance_conflict(response) or self._retry_max == 0:
            return response
        # The slow path: the worker's cluster view was changing; try again after a backoff.
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self._retry_max),
            wait=wait_exponential(multiplier=self._backoff_initial_s, max=self._backoff_max_s),
            retry=retry_if_result(is_rebalance_conflict),
            retry_error_callback=lambda state: state.outcome.result() if state.outcome else None,
            before=self._count_retry,
            sleep=asyncio.sleep,
        )
        try:
            async with asyncio.timeout_at(request.deadline):  # the backoffs too end at the deadline
                await asyncio.sleep(self._backoff_initial_s)
                response = await retrying(self._send_to_any, request)
        except TimeoutError:
            raise BudgetExhausted(response.worker, "no answer within the request budget (rebalance retries)") from None
        attempts = 1 + int(retrying.statistics.get("attempt_number", 1))
        log.info("rebalance conflict retried", path=request.path, attempts=attempts, status=response.status)
        return UpstreamResponse(
            response.status, response.headers, response.body, response.worker, attempts, response.framing
        )

    async def send_to(self, worker: str, request: UpstreamRequest, timeout_s: float | None = None) -> UpstreamResponse:
        """``request`` to one given worker, no failover, no retry; ``UpstreamTimeout`` when it does not answer
        within ``timeout_s``. The worker may be one the sidecar was not given (another member of the
        workers' group): it is reached as the given ones are."""
        self._reach(worker)
        try:
            async with asyncio.timeout(timeout_s):
                return await self._send_once(worker, request)
        except TimeoutError as exc:
            raise UpstreamTimeout(worker, f"no answer within {timeout_s} s") from exc

    def _count_retry(self, _state: object) -> None:
        self.rebalance_retries += 1
        if self.observer:
            self.observer.rebalance_retry()

    async def worker_versions(self) -> dict[str, str | None]:
        """``GET /`` on every worker at once: its version, or None when it did not answer. With a
        ``probe_timeout_s``, a worker that takes longer (one that hangs: it accepts connections and never
        answers) counts as not answering and, like one that refuses, is tried last by ``forward``."""
        answers = await asyncio.gather(*(self._version_of(worker) for worker in self.workers))
        return dict(zip(self.workers, answers, strict=True))

    async def _version_of(self, worker: str) -> str | None:
        try:
            try:
                async with asyncio.timeout(self._probe_timeout_s):
                    response = await self._send_once(worker, UpstreamRequest("GET", "/"))
            except TimeoutError:
                raise UpstreamTimeout(
                    worker, f"no answer to the liveness probe within {self._probe_timeout_s} s"
                ) from None
            server = next((value for name, value in response.headers if name.lower() == b"server"), None)
            if server is not None:
                self.server_header = server
            data = orjson.loads(response.body) if response.status == 200 else {}
            return data.get("version") if isinstance(data, dict) else None
        except UpstreamError as err:
            if isinstance(err, UpstreamTimeout | WorkerUnreachable):  # hung, or gone
                self._suspect(worker)
                # with every pooled connection in use the probe may have waited for one and never reached the
                # worker: that says nothing of the requests the worker has taken
                if not (isinstance(self._transport, PassThroughTransport) and self._transport.wire.exhausted()):
                    self.stop_waiting(
                        worker, f"stopped answering ({err.detail})", hung=isinstance(err, UpstreamTimeout)
                    )
            log.debug("worker did not report its version", worker=worker, error=str(err))
            return None
        except orjson.JSONDecodeError as err:
            log.debug("worker did not report its version", worker=worker, error=str(err))
            return None
