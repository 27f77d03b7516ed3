"""A real sidecar process (``python -m control_plane ...``), as the tests of its lifecycle (signals, TLS, the
Kubernetes container) and the benchmarks start one, and a scripted Connect worker to put behind it: a small
HTTP/1.1 server that answers ``GET /`` as Connect 4.3.1 and holds ``GET /connectors/slow`` until the test
releases it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx
import orjson

from .paths import ROOT
from .ports import free_port
from .waiting import eventually


class SlowWorker:
    """``url`` answers ``GET /`` (Connect's RootResource), ``GET /connectors/slow`` once ``release`` is
    set (``received`` is set when it arrives), and 404 in Connect's shape otherwise."""

    def __init__(self) -> None:
        self.received = asyncio.Event()
        self.release = asyncio.Event()
        self._server: asyncio.Server | None = None
        self.url = ""

    async def __aenter__(self) -> SlowWorker:
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


class SidecarNotAnswering(AssertionError):
    """The sidecar process exited, or did not answer in time; the message holds the end of its log."""


@dataclass
class SidecarProcess:
    """A sidecar process listening on ``url``, its output in ``log``."""

    name: str
    proc: subprocess.Popen[bytes]
    url: str
    log: Path

    @property
    def pid(self) -> int:
        return self.proc.pid

    def terminate(self) -> None:
        self.proc.send_signal(signal.SIGTERM)

    def stop(self, timeout_s: float = 30) -> None:
        """SIGTERM, then SIGKILL if it still runs after ``timeout_s``; reaped either way."""
        if self.proc.poll() is None:
            self.terminate()
            try:
                self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.proc.wait()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()

    def wait_answering(self, path: str, timeout_s: float, *, verify: object = True) -> None:
        """Until ``GET path`` answers 200 (``/healthz``: listening; ``/readyz``: its view read); raises
        ``SidecarNotAnswering`` if the process exits first or ``timeout_s`` passes."""
        deadline = time.monotonic() + timeout_s
        with httpx.Client(verify=verify, timeout=5) as client:  # type: ignore[arg-type]
            while self.proc.poll() is None:
                try:
                    if client.get(self.url + path).status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline:
                    raise SidecarNotAnswering(f"{self.name}: no 200 on {path} within {timeout_s:g}s{self._log_tail()}")
                time.sleep(0.2)
        raise SidecarNotAnswering(f"{self.name} exited ({self.proc.returncode}){self._log_tail()}")

    async def exited(self, timeout_s: float) -> int:
        """The exit status, once the process ended within ``timeout_s``."""
        code = await eventually(
            lambda: _returncode(self.proc), lambda c: c is not None, timeout_s=timeout_s, what=f"{self.name} exited"
        )
        assert code is not None
        return code

    def _log_tail(self, lines: int = 40) -> str:
        text = self.log.read_text(errors="replace").splitlines() if self.log.exists() else []
        return f"; the end of its log, {self.log}:\n" + "\n".join(text[-lines:])


async def _returncode(proc: subprocess.Popen[bytes]) -> int | None:
    return proc.poll()


def start(
    args: Sequence[str],
    log: Path,
    port: int,
    *,
    name: str = "sidecar",
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    code: Path | None = None,
    scheme: str = "http",
) -> SidecarProcess:
    """``python -m control_plane ARGS`` with the environment and ``env``, listening on ``port`` (as ``args``
    or ``env`` tell it), its output appended to ``log``. ``code``: a folder holding another version's
    ``control_plane`` (a git ref's, for a before/after benchmark), run instead of this checkout's."""
    log.parent.mkdir(parents=True, exist_ok=True)
    other_code = {"PYTHONPATH": str(code)} if code else {}
    with open(log, "ab") as out:  # the child keeps its own descriptor
        proc = subprocess.Popen(
            [sys.executable, "-m", "control_plane", *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=cwd or code or ROOT,
            env={**os.environ, **other_code, **(env or {})},
        )
    return SidecarProcess(name, proc, f"{scheme}://127.0.0.1:{port}", log)


def serve(
    args: Sequence[str],
    log: Path,
    *,
    name: str = "sidecar",
    env: Mapping[str, str] | None = None,
    code: Path | None = None,
    scheme: str = "http",
) -> SidecarProcess:
    """``control-plane serve`` on a free loopback port with ``args`` (``--connect-url URL`` or
    ``--worker-properties FILE``), logging JSON lines."""
    port = free_port()
    return start(
        ["serve", "--host", "127.0.0.1", "--port", str(port), *args],
        log,
        port,
        name=name,
        env={"CONTROL_PLANE_LOG_FORMAT": "json", **(env or {})},
        code=code,
        scheme=scheme,
    )


@contextlib.asynccontextmanager
async def sidecar_process(
    tmp: Path, connect_url: str, env: Mapping[str, str], *, scheme: str = "http", verify: object = True
) -> AsyncIterator[SidecarProcess]:
    """``control-plane serve`` in front of ``connect_url``, once ``GET /healthz`` answers; killed after the
    block if it still runs."""
    log = tmp / f"sidecar-{uuid.uuid4().hex[:8]}.log"
    sidecar = serve(["--connect-url", connect_url], log, env=env, scheme=scheme)
    try:
        await asyncio.to_thread(sidecar.wait_answering, "/healthz", 60, verify=verify)
        yield sidecar
    finally:
        sidecar.kill()
