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

The client puts each request as it goes on the wire (the target byte for byte, the headers without the
hop-by-hop ones, Host first, a Content-Length where one goes) and hands it to its transport
(``upstream.transport``), which carries it to one worker: it decides which worker, whether to try
another and when the budget has run out on the transport's errors alone, whatever the transport.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Iterable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Protocol

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
)
from .schemes import SchemeTransport
from .transport import Headers, Limits, Transport, WorkerRequest
from .wire import Slots

log = structlog.get_logger(__name__)

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
# Where a request without a body carries a Content-Length: first (after Host) on an empty POST, PUT or
# PATCH (where httpx puts it), none on the methods aiohttp sends without one (ClientRequest.GET_METHODS),
# last on any other method (where aiohttp adds it). Every transport sends the headers as given.
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


# DistributedHerder.checkRebalanceNeeded's RebalanceNeededException where HerderRequestHandler does not turn
# it into a 409: ConnectExceptionMapper answers it 500 with its own message.
REBALANCE_500_PREFIX = "Request cannot be completed because a rebalance is expected"


def is_rebalance_answer(status: int, message: str) -> bool:
    """Whether Connect's answer says only that its group was rebalancing: the request did not run."""
    if status == 409:
        return message.startswith(REBALANCE_409_PREFIXES)
    return status == 500 and message.startswith(REBALANCE_500_PREFIX)


# RestClient.httpRequest's answer when a follower's forward of a request to its leader failed (the leader gone
# or not answering, as when it leaves the group): the leader may have taken the request.
FORWARD_FAILED_PREFIX = "IO Error trying to forward REST request"


def is_forward_failure(status: int, message: str) -> bool:
    """Whether Connect's answer says a follower could not forward the request to its leader: its outcome is
    not known."""
    return status == 500 and message.startswith(FORWARD_FAILED_PREFIX)


def strip_hop_by_hop(headers: Iterable[tuple[bytes, bytes]]) -> Headers:
    return _split_framing(headers)[0]


# The deadline of the client's request being served (the REST layer sets it: rest.steps.limits): requests the
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
    # a rebalance 409 retried (an operation the sidecar composes); a client's request passed through gets the
    # worker's 409 at once, as from the worker: clients and operators run their own backoff
    retry_rebalance: bool = True


@dataclass(frozen=True, slots=True)
class UpstreamResponse:
    status: int
    headers: Headers
    body: bytes
    worker: str
    attempts: int = 1
    # the framing headers of the worker's answer (content-length), for a HEAD answered without body
    framing: tuple[tuple[bytes, bytes], ...] = ()
    # what the sidecar adds to the worker's answer (a write that went through without its fence): warnings
    warnings: tuple[str, ...] = ()

    def json(self) -> object:
        return orjson.loads(self.body)


def is_rebalance_conflict(response: UpstreamResponse) -> bool:
    if response.status != 409:
        return False
    try:
        message = orjson.loads(response.body).get("message") or ""
    except (orjson.JSONDecodeError, AttributeError):
        return False
    return isinstance(message, str) and is_rebalance_answer(409, message)


def build_transport(max_connections: int, keepalive_s: float) -> Transport:
    """The workers' transport: plain HTTP over the lean pool, HTTPS over aiohttp's (``upstream.schemes``)."""
    return SchemeTransport(max_connections, keepalive_s)


def _host(url: yarl.URL) -> bytes:
    """A worker URL's Host header value: its host, lowercased and IDNA-encoded, and its port unless the
    scheme's default."""
    return (url.host_port_subcomponent or "").encode("ascii")


class UpstreamObserver(Protocol):
    """What the upstream reports as it works (``metrics.Metrics`` implements it)."""

    def upstream_error(self, worker: str, kind: str) -> None: ...

    def rebalance_retry(self) -> None: ...


class ConnectUpstream:
    def __init__(
        self,
        workers: Sequence[str],
        *,
        transport: Transport | None = None,
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
        self._transport = transport or build_transport(100, 15.0)
        self._hosts = {w: _host(yarl.URL(w)) for w in self.workers}  # per worker, its Host header value
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
        # the Server header of the last answer to the liveness probe (rest.steps.stamp puts it on the sidecar's own)
        self.server_header: bytes | None = None

    async def aclose(self) -> None:
        await self._transport.aclose()

    def _ordered_workers(self) -> Sequence[str]:
        if not self._down_until:  # every worker up: in the order given
            return self.workers
        now = time.monotonic()
        up = [w for w in self.workers if self._down_until.get(w, 0.0) <= now]
        down = sorted((w for w in self.workers if w not in up), key=lambda w: self._down_until[w])
        return up + down

    async def _send_once(
        self, worker: str, request: UpstreamRequest, deadline: float | None = None
    ) -> UpstreamResponse:
        """``request`` to ``worker`` through the transport, as it goes on the wire: the target byte for byte,
        the headers in order without the hop-by-hop ones, Host first, a Content-Length where it goes."""
        target = request.path + ("?" + request.query.decode("latin-1") if request.query else "")
        headers = strip_hop_by_hop(request.headers)
        host_header = (b"Host", self._hosts[worker])
        if request.body:
            headers = [host_header, *headers, (b"Content-Length", str(len(request.body)).encode())]
        elif request.method in _CL_FIRST:
            headers = [host_header, (b"Content-Length", b"0"), *headers]
        elif request.method in BODILESS_METHODS:
            headers = [host_header, *headers]
        else:
            headers = [host_header, *headers, (b"Content-Length", b"0")]
        status, raw_headers, body = await self._transport.send(
            WorkerRequest(worker, request.method, target, headers, request.body), self._limits, deadline
        )
        if self._down_until:
            self._down_until.pop(worker, None)
        headers, framing = _split_framing(raw_headers)
        return UpstreamResponse(status, headers, body, worker, framing=framing)

    def _reach(self, worker: str) -> None:
        """What a request needs of a worker it was not given, derived once (as for the given ones)."""
        if worker in self._hosts:
            return
        try:
            url = yarl.URL(worker)
        except ValueError:
            url = yarl.URL()
        if url.scheme not in ("http", "https") or not url.host:
            raise WorkerUnreachable(worker, "not an http or https URL")
        self._hosts[worker] = _host(url)

    def _suspect(self, worker: str) -> None:
        """``worker`` failed to answer: tried last for ``worker_down_s`` (until it answers again)."""
        self._down_until[worker] = time.monotonic() + self._worker_down_s

    async def _send_within(self, worker: str, request: UpstreamRequest, deadline: float | None) -> UpstreamResponse:
        """``_send_once`` with every wait ending at ``deadline`` (None: at the timeouts only), each transport
        its own way (the lean pool shortens its timers, aiohttp's pool puts a timeout scope around the
        request); a wait that ended there is the budget's (``BudgetExhausted``), and the worker is tried
        last."""
        loop = asyncio.get_running_loop()
        try:
            if deadline is not None and deadline <= loop.time():
                raise UpstreamTimeout(worker, "no time left")
            return await self._send_once(worker, request, deadline)
        except (UpstreamTimeout, WorkerUnreachable):
            # a timeout before the deadline (the loop's timers may fire a little early): the worker's own, or
            # the liveness probe's verdict (stop_waiting), not the budget's
            if deadline is None or loop.time() < deadline - 0.01:
                raise
            self._suspect(worker)
            raise BudgetExhausted(worker, "no answer within the request budget") from None

    def stop_waiting(self, worker: str, detail: str, *, hung: bool = True) -> None:
        """The liveness probe found ``worker`` hung or gone: every request awaiting its answer ends now, as
        at its timeout (``UpstreamTimeout`` with ``detail``; a read with a view answer gets that, stale, a
        write the 504 of an unknown outcome). Requests sent to it later wait again (until the next verdict):
        a worker that recovers answers them. A worker that is gone (``hung`` False: it refuses, or cannot
        be reached) leaves a request as it is where the transport cannot tell whether it has reached the
        worker (aiohttp's pool): that one may still be connecting, and its own refusal sends it to another
        worker."""
        self._transport.stop_waiting(worker, detail, hung=hung)

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
        if not request.retry_rebalance or not is_rebalance_conflict(response) or self._retry_max == 0:
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
                if not self._transport.exhausted():
                    self.stop_waiting(
                        worker, f"stopped answering ({err.detail})", hung=isinstance(err, UpstreamTimeout)
                    )
            log.debug("worker did not report its version", worker=worker, error=str(err))
            return None
        except orjson.JSONDecodeError as err:
            log.debug("worker did not report its version", worker=worker, error=str(err))
            return None
