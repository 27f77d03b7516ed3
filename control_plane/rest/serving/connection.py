"""One client connection of the sidecar's server (``server``): HTTP/1.1 parsed by ``httptools`` (the parser uvicorn
uses), one request answered at a time, each handed to the pipeline (``pipeline``) and its answer
written in one write.

What a connection does, as uvicorn's httptools protocol does it (a client cannot tell them apart: the tests
compare the bytes): keep-alive (HTTP/1.1, not 1.0; closed after the server's ``keep_alive_s`` idle),
pipelining (one request answered at a time, in order; reading paused while later ones wait),
``Expect: 100-continue`` (sent when the body is first read), flow control both ways, a 400 for what the
parser refuses, the status line and framing of an answer (``Content-Length`` or chunked,
``connection: close``), and ``X-Forwarded-For`` and ``X-Forwarded-Proto`` trusted from a proxy on 127.0.0.1
only (the client and scheme the audit sees).
"""

from __future__ import annotations

import asyncio
import http
import re
from collections import deque
from typing import Protocol, cast

import httptools
import structlog
from starlette.types import Message

from ..request.exchange import Exchange, HttpReply, decoded_path
from .pipeline import Pipeline

log = structlog.get_logger(__name__)

HIGH_WATER = 64 * 1024  # request body bytes buffered before reading pauses
ONE_WRITE = 64 * 1024  # an answer up to this size of body goes out in one write with its head
TRUSTED_PROXIES = frozenset({"127.0.0.1"})  # whose X-Forwarded-* headers are believed


def _status_line(code: int) -> bytes:
    try:
        phrase = http.HTTPStatus(code).phrase.encode()
    except ValueError:  # a code Python has no phrase for: none
        phrase = b""
    return b"HTTP/1.1 %d %s\r\n" % (code, phrase)


STATUS_LINE = {code: _status_line(code) for code in range(100, 600)}
_HEADER_NAME = re.compile(b'[\x00-\x1f\x7f()<>@,;:\\[\\]={} \t\\\\"]')
_HEADER_VALUE = re.compile(b"[\x00-\x08\x0a-\x1f\x7f]")
_INVALID = b"Invalid HTTP request received."
_FAILED = (
    b"HTTP/1.1 500 Internal Server Error\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: 21\r\n"
    b"connection: close\r\n\r\nInternal Server Error"
)


class _Request:
    """A request on a connection: its body as it arrives, and where its answer stands."""

    __slots__ = (
        "body",
        "complete",
        "connection",
        "delivered",
        "disconnected",
        "exchange",
        "expect_100",
        "keep_alive",
        "more_body",
        "started",
        "waiter",
    )

    def __init__(self, connection: Connection, keep_alive: bool, expect_100: bool) -> None:
        self.connection = connection
        self.keep_alive = keep_alive
        self.expect_100 = expect_100
        self.body = bytearray()
        self.more_body = True
        self.delivered = False  # receive gave the whole body
        self.started = False  # the answer's first byte was written
        self.complete = False  # the answer was written
        self.disconnected = False
        self.waiter: asyncio.Future[None] | None = None
        self.exchange: Exchange

    def wake(self) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    async def receive(self) -> Message:
        """ASGI's ``receive`` of the body: what arrived so far; once it was given whole, the next call waits
        for the end of the request (``http.disconnect``)."""
        connection = self.connection
        if self.expect_100 and not connection.closing:
            connection.transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        self.expect_100 = False
        while not (self.disconnected or self.complete) and (self.delivered or (self.more_body and not self.body)):
            connection.resume_reading()
            self.waiter = connection.loop.create_future()
            try:
                await self.waiter
            finally:
                self.waiter = None
        if self.disconnected or self.complete:
            return {"type": "http.disconnect"}
        message: Message = {"type": "http.request", "body": bytes(self.body), "more_body": self.more_body}
        self.body.clear()
        self.delivered = not self.more_body
        return message


class Host(Protocol):
    """What a connection needs of its server (``server.HttpServer``)."""

    loop: asyncio.AbstractEventLoop
    pipeline: Pipeline
    keep_alive_s: float
    connections: set[Connection]
    requests_served: int

    def track(self, task: asyncio.Task[None]) -> None: ...

    def lost(self, connection: Connection) -> None: ...


class Connection(asyncio.Protocol):
    def __init__(self, server: Host) -> None:
        self.server = server
        self.loop = server.loop
        self.transport: asyncio.Transport = None  # type: ignore[assignment]
        self._parser = httptools.HttpRequestParser(self)
        # answer the first of pipelined requests that a client sent after closing its side, as uvicorn does
        self._parser.set_dangerous_leniencies(lenient_data_after_close=True)
        self._client: tuple[str, int] | None = None
        self._scheme = "http"
        self._local: tuple[str, int] | None = None
        self._url = b""
        self._headers: list[tuple[bytes, bytes]] = []
        self._expect_100 = False
        self._forwarded_headers = False  # the request has X-Forwarded-* headers
        self._parsing: _Request | None = None  # the request whose body the parser reads
        self._serving: _Request | None = None  # the request being answered
        self._waiting: deque[_Request] = deque()  # pipelined requests parsed, in order
        self._read_paused = False
        self._writable: asyncio.Future[None] | None = None  # while the transport's buffer is full
        self._idle: asyncio.TimerHandle | None = None
        self._upgraded = False

    # -- asyncio.Protocol -----------------------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's transports are not asyncio's classes
        self.server.connections.add(self)
        peer = transport.get_extra_info("peername")
        self._client = (str(peer[0]), int(peer[1])) if isinstance(peer, tuple) and len(peer) >= 2 else None
        local = transport.get_extra_info("sockname")
        self._local = (str(local[0]), int(local[1])) if isinstance(local, tuple) and len(local) >= 2 else None
        self._scheme = "https" if transport.get_extra_info("sslcontext") is not None else "http"

    def connection_lost(self, exc: Exception | None) -> None:
        self.server.lost(self)
        for request in (self._serving, self._parsing, *self._waiting):
            if request is not None and not request.complete:
                request.disconnected = True
                request.wake()
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)
        self._cancel_idle()

    def eof_received(self) -> None:
        return None

    def pause_writing(self) -> None:
        if self._writable is None:
            self._writable = self.loop.create_future()

    def resume_writing(self) -> None:
        if self._writable is not None:
            if not self._writable.done():
                self._writable.set_result(None)
            self._writable = None

    def data_received(self, data: bytes) -> None:
        self._cancel_idle()
        if self._upgraded:
            return  # the parser stopped at an Upgrade: the rest is not HTTP/1.1 it can read
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._upgraded = True  # no upgrade is served: the request is answered, then the connection closed
            if self._parsing is not None:
                self._parsing.keep_alive = False
        except httptools.HttpParserError:
            log.warning("invalid HTTP request", client=self._client)
            self.transport.write(
                STATUS_LINE[400]
                + b"content-type: text/plain; charset=utf-8\r\ncontent-length: %d\r\nconnection: close\r\n\r\n"
                % len(_INVALID)
                + _INVALID
            )
            self.transport.close()

    # -- httptools' callbacks -------------------------------------------------------------------------------
    def on_message_begin(self) -> None:
        self._url = b""
        self._headers = []
        self._expect_100 = False
        self._forwarded_headers = False

    def on_url(self, url: bytes) -> None:
        self._url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        name = name.lower()
        if name == b"expect" and value.lower() == b"100-continue":
            self._expect_100 = True
        elif name.startswith(b"x-forwarded-"):
            self._forwarded_headers = True
        self._headers.append((name, value))

    def on_headers_complete(self) -> None:
        parser = self._parser
        version = parser.get_http_version()
        url = httptools.parse_url(self._url)
        request = _Request(self, version != "1.0" and parser.should_keep_alive(), self._expect_100)
        client, scheme = self._client, self._scheme
        if self._forwarded_headers and client is not None and client[0] in TRUSTED_PROXIES:
            client, scheme = _forwarded(client, scheme, self._headers)
        request.exchange = Exchange(
            method=parser.get_method().decode("ascii"),
            raw_path=url.path,
            query=url.query or b"",
            headers=self._headers,
            receive=request.receive,
            path=decoded_path(url.path),
            client=client,
            scheme=scheme,
            http_version=version,
            server=self._local,
        )
        self._parsing = request
        if self._serving is None:
            self._start(request)
        else:
            self._pause_reading()
            self._waiting.append(request)

    def on_body(self, body: bytes) -> None:
        request = self._parsing
        if request is None or request.complete:
            return
        request.body += body
        if len(request.body) > HIGH_WATER:
            self._pause_reading()
        request.wake()

    def on_message_complete(self) -> None:
        request = self._parsing
        if request is None or request.complete:
            return
        request.more_body = False
        request.wake()

    # -- serving --------------------------------------------------------------------------------------------
    @property
    def closing(self) -> bool:
        return self.transport.is_closing()

    def _start(self, request: _Request) -> None:
        self._serving = request
        self.server.track(self.loop.create_task(self._serve(request)))

    async def _serve(self, request: _Request) -> None:
        try:
            reply = await self.server.pipeline.serve(request.exchange)
        except asyncio.CancelledError:  # the grace period at shutdown ended
            if not request.started and not self.closing:
                request.keep_alive = False
                self._write(request, self.server.pipeline.cut_short())
            raise
        except Exception:  # the pipeline answers every error itself: this is a bug
            log.exception("a request failed without an answer", path=request.exchange.path)
            if not request.started and not self.closing:
                self.transport.write(_FAILED)
            self.transport.close()
        else:
            if self._writable is not None:
                await self._writable
            if not request.disconnected:
                try:
                    self._write(request, reply)
                except ValueError:
                    log.exception("an answer that cannot be written", path=request.exchange.path)
                    if not request.started:
                        self.transport.write(_FAILED)
                    self.transport.close()
        finally:
            self._done(request)

    def _done(self, request: _Request) -> None:
        request.complete = True
        request.wake()
        self.server.requests_served += 1
        if self.closing:
            return
        if self._waiting:
            self._start(self._waiting.popleft())
        else:
            self._serving = None
            self._idle = self.loop.call_later(self.server.keep_alive_s, self._close_idle)
        self.resume_reading()

    def _write(self, request: _Request, reply: HttpReply) -> None:
        """The answer, framed as uvicorn frames an ASGI answer (``RequestResponseCycle.send``): the status
        line, the headers (their names lower-cased), ``connection: close`` where the connection ends,
        ``transfer-encoding: chunked`` where the answer has no ``Content-Length``; no body for HEAD."""
        status, headers, body = reply.status, reply.headers, reply.body
        head_only = request.exchange.method == "HEAD"
        # a refused byte in a name or value: "!" is allowed in a name, a tab in a value, so joined they hold one
        # exactly when one of them does
        if _HEADER_NAME.search(b"!".join([name for name, _ in headers])):
            raise ValueError("Invalid HTTP header name.")
        if _HEADER_VALUE.search(b"\t".join([value for _, value in headers])):
            raise ValueError("Invalid HTTP header value.")
        content = [STATUS_LINE[status]]
        keep_alive = request.keep_alive
        has_close = False
        chunked: bool | None = None
        length = 0
        for name, value in headers:
            name = name.lower()
            if name == b"content-length" and chunked is None:
                length = int(value.decode())
                chunked = False
            elif name == b"transfer-encoding" and value.lower() == b"chunked":
                length = 0
                chunked = True
            elif name == b"connection" and b"close" in [t.lower().strip() for t in value.split(b",")]:
                keep_alive = False
                has_close = True
            content += (name, b": ", value, b"\r\n")
        if not keep_alive and not has_close:
            content.append(b"connection: close\r\n")
        if chunked is None and not head_only and status not in (204, 304):
            chunked = True
            content.append(b"transfer-encoding: chunked\r\n")
        content.append(b"\r\n")
        tail: list[bytes] = []
        if head_only:
            pass
        elif chunked:
            if body:
                content.append(b"%x\r\n" % len(body))
                tail = [body, b"\r\n0\r\n\r\n"]
            else:
                content.append(b"0\r\n\r\n")
        elif len(body) != length:
            raise ValueError(f"Response content {'longer' if len(body) > length else 'shorter'} than Content-Length")
        else:
            tail = [body]
        request.keep_alive = keep_alive
        request.started = True
        request.expect_100 = False
        if tail and len(body) > ONE_WRITE:  # a large body is not copied into one buffer with the head
            self.transport.write(b"".join(content))
            for part in tail:
                self.transport.write(part)
        else:
            self.transport.write(b"".join(content + tail))
        if not keep_alive:
            self.transport.close()

    def shutdown(self) -> None:
        """The server stops: an idle connection closes now, a busy one after its answer."""
        if self._serving is None:
            self.transport.close()
        else:
            self._serving.keep_alive = False

    # -- flow control and the idle timer ----------------------------------------------------------------------
    def _pause_reading(self) -> None:
        if not self._read_paused:
            self._read_paused = True
            self.transport.pause_reading()

    def resume_reading(self) -> None:
        """Read again, unless pipelined requests wait (they are read once their turn comes)."""
        if self._read_paused and not self._waiting:
            self._read_paused = False
            self.transport.resume_reading()

    def _close_idle(self) -> None:
        self._idle = None
        if not self.closing:
            self.transport.close()

    def _cancel_idle(self) -> None:
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None


def _forwarded(client: tuple[str, int], scheme: str, headers: list[tuple[bytes, bytes]]) -> tuple[tuple[str, int], str]:
    """The client and scheme a trusted proxy reports (uvicorn's ``ProxyHeadersMiddleware``): the scheme of
    ``X-Forwarded-Proto``, the last untrusted host of ``X-Forwarded-For`` (port 0); the last header of each
    name counts."""
    named = dict(headers)
    proto = named.get(b"x-forwarded-proto")
    if proto is not None and proto.decode("latin-1").strip() in ("http", "https"):
        scheme = proto.decode("latin-1").strip()
    hosts = named.get(b"x-forwarded-for")
    if hosts is not None:
        listed = [host.strip() for host in hosts.decode("latin-1").split(",")]
        untrusted = [host for host in listed if host not in TRUSTED_PROXIES]
        host = untrusted[-1] if untrusted else listed[0]
        if host:
            client = (host, 0)
    return client, scheme


__all__ = ["HIGH_WATER", "ONE_WRITE", "STATUS_LINE", "TRUSTED_PROXIES", "Connection", "Host"]
