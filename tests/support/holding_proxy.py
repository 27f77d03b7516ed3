"""A loopback proxy in front of a real Connect worker that passes every request through byte for byte, but
holds the ones a test names: such a request never reaches the worker and is never answered, its
connection stays open. A sidecar put in front of it is caught in the middle of a write it makes through
the worker (the write begun, its fence held) for as long as the test wants, e.g. to kill it there."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from urllib.parse import urlsplit


class HoldingProxy:
    """``url`` relays to ``upstream``; a request whose request line ``hold`` accepts is kept (``held``
    lists their request lines, ``holding`` is set at the first). ``hold`` may be set at any time."""

    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream)
        assert parts.scheme == "http" and parts.hostname and parts.port, upstream
        self._upstream = (parts.hostname, parts.port)
        self.hold: Callable[[bytes], bool] = lambda _line: False
        self.held: list[bytes] = []
        self.holding = asyncio.Event()
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self.url = ""

    async def __aenter__(self) -> HoldingProxy:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"
        return self

    async def __aexit__(self, *_: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        me = asyncio.current_task()
        assert me is not None
        self._connections.add(me)
        up_writer: asyncio.StreamWriter | None = None
        answers: asyncio.Task[None] | None = None
        try:  # from the first await: a proxy closed while this connects closes the client's connection too
            up_reader, up_writer = await asyncio.open_connection(*self._upstream)
            answers = asyncio.create_task(_copy(up_reader, writer))
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                fields = [line.split(b":", 1) for line in head.lower().split(b"\r\n")[1:] if b":" in line]
                headers = {name.strip(): value.strip() for name, value in fields}
                assert b"transfer-encoding" not in headers, "a chunked request body: not relayed here"
                body = await reader.readexactly(int(headers.get(b"content-length", b"0")))
                line = head.split(b"\r\n", 1)[0]
                if self.hold(line):
                    self.held.append(line)
                    self.holding.set()
                    await asyncio.Event().wait()  # never sent on, never answered
                up_writer.write(head + body)
                await up_writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass  # the client went away (a killed sidecar, say)
        finally:
            if answers is not None:
                answers.cancel()
            for stream in (writer, up_writer):
                if stream is not None:
                    stream.close()
            self._connections.discard(me)


async def _copy(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    """The worker's answers, as they come, until it closes the connection (then the client's too)."""
    with contextlib.suppress(ConnectionError):
        while data := await source.read(65536):
            sink.write(data)
            await sink.drain()
    sink.close()
