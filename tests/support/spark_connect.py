"""A Spark Connect server on loopback from the installed PySpark (:mod:`spark_jobs.connect_server`), its log
under a temporary directory; ready when its gRPC port accepts a connection; stopped (SIGTERM, then
SIGKILL) afterwards. A job reaches it as a client of its own (``--remote``), in a child process: a test
process keeps its classic session (the ``spark`` fixture), which one process cannot have beside a remote one
once PySpark's Spark Connect mode is on."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from spark_jobs import connect_server

from .waiting import eventually


@dataclass(frozen=True)
class ConnectServer:
    url: str  # sc://127.0.0.1:<port>
    log: Path

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:]) if self.log.exists() else ""


@asynccontextmanager
async def spark_connect_server(tmp: Path, port: int, driver_memory: str = "1g") -> AsyncIterator[ConnectServer]:
    server = ConnectServer(f"sc://127.0.0.1:{port}", tmp / "spark-connect.log")
    proc = connect_server.start(server.log, port=port, driver_memory=driver_memory)
    try:

        async def accepts() -> bool:
            assert proc.poll() is None, f"the Spark Connect server exited:\n{server.log_tail()}"
            return await asyncio.to_thread(connect_server.accepts, port)

        await eventually(accepts, bool, timeout_s=180, what="the Spark Connect server's port")
        yield server
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                await asyncio.to_thread(proc.wait, 30)
            except subprocess.TimeoutExpired:
                proc.kill()
                await asyncio.to_thread(proc.wait)
