"""A real sidecar process (``python -m control_plane serve``) for the tests of its lifecycle (signals,
TLS), and a scripted Connect worker to put behind it: a small HTTP/1.1 server that answers ``GET /`` as
Connect 4.3.1 and holds ``GET /connectors/slow`` until the test releases it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping
from pathlib import Path

import httpx
import orjson

from .harness import closed_port
from .paths import ROOT
from .waiting import eventually


class ScriptedWorker:
    """``url`` answers ``GET /`` (Connect's RootResource), ``GET /connectors/slow`` once ``release`` is
    set (``received`` is set when it arrives), and 404 in Connect's shape otherwise."""

    def __init__(self) -> None:
        self.received = asyncio.Event()
        self.release = asyncio.Event()
        self._server: asyncio.Server | None = None
        self.url = ""

    async def __aenter__(self) -> ScriptedWorker:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"
        return self

    async def __aexit__(self, *_: object) -> None:
        assert self._server is not None
        self._server.close()
        self.release.set()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    (
                        int(line.split(b":")[1])
                        for line in head.lower().split(b"\r\n")
                        if line.startswith(b"content-length:")
                    ),
                    0,
                )
                await reader.readexactly(length)
                path = head.split(b" ")[1].decode()
                body: dict[str, object]
                if path == "/":
                    status, body = 200, {"version": "4.3.1", "commit": "0123456789abcdef", "kafka_cluster_id": "c"}
                elif path == "/connectors/slow":
                    self.received.set()
                    await self.release.wait()
                    status, body = 200, {"name": "slow"}
                else:
                    status, body = 404, {"error_code": 404, "message": f"Connector {path} not found"}
                data = orjson.dumps(body)
                writer.write(
                    b"HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                    % (status, len(data), data)
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


class SidecarProcess:
    def __init__(self, proc: subprocess.Popen[bytes], url: str, log: Path) -> None:
        self.proc = proc
        self.url = url
        self.log = log

    def terminate(self) -> None:
        self.proc.send_signal(signal.SIGTERM)

    async def exited(self, timeout_s: float) -> int:
        """The exit status, once the process ended within ``timeout_s``."""
        code = await eventually(
            lambda: _returncode(self.proc), lambda c: c is not None, timeout_s=timeout_s, what="the sidecar exited"
        )
        assert code is not None
        return code


async def _returncode(proc: subprocess.Popen[bytes]) -> int | None:
    return proc.poll()


@contextlib.asynccontextmanager
async def sidecar_process(
    tmp: Path, connect_url: str, env: Mapping[str, str], *, scheme: str = "http", verify: object = True
) -> AsyncIterator[SidecarProcess]:
    """``python -m control_plane serve`` on a free loopback port, once ``GET /healthz`` answers; killed
    after the block if it still runs."""
    port = closed_port()
    log = tmp / f"sidecar-{port}.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(  # noqa: ASYNC220 - the process runs on its own; only its start blocks
            [sys.executable, "-m", "control_plane", "serve", "--port", str(port), "--connect-url", connect_url],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=ROOT,
            env={**os.environ, "CONTROL_PLANE_LOG_FORMAT": "json", **env},
        )
    running = SidecarProcess(proc, f"{scheme}://127.0.0.1:{port}", log)
    try:

        async def healthy() -> bool:
            if proc.poll() is not None:
                raise AssertionError(f"the sidecar exited ({proc.returncode}):\n{log.read_text()}")
            try:
                async with httpx.AsyncClient(verify=verify, timeout=5) as client:  # type: ignore[arg-type]
                    return (await client.get(running.url + "/healthz")).status_code == 200
            except httpx.TransportError:
                return False

        await eventually(healthy, bool, timeout_s=60, what="the sidecar process answering")
        yield running
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
