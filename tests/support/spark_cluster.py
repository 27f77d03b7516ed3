"""A real Spark standalone cluster on loopback, from the installed PySpark: one master and one worker
(``spark-class org.apache.spark.deploy.master.Master`` / ``...worker.Worker``), small memory, their logs
under a temporary directory. Ready when the master's status page (``/json/``) lists the worker ALIVE;
stopped (SIGTERM, then SIGKILL) afterwards."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from .waiting import eventually

BIN = Path(sys.executable).parent


@dataclass(frozen=True)
class Standalone:
    master_url: str  # spark://127.0.0.1:<port>
    ui_url: str
    logs: Path

    def log_tail(self, lines: int = 30) -> str:
        return "\n".join(
            f"{p.name}: {line}"
            for p in sorted(self.logs.glob("*.log"))
            for line in p.read_text(errors="replace").splitlines()[-lines:]
        )


def _start(args: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:  # the child keeps its own descriptor
        return subprocess.Popen([str(BIN / "spark-class"), *args], stdout=out, stderr=subprocess.STDOUT, env=env)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@asynccontextmanager
async def standalone_cluster(
    tmp: Path, ports: tuple[int, int, int], worker_memory: str = "1g", cores: int = 2
) -> AsyncIterator[Standalone]:
    master_port, master_ui, worker_ui = ports
    logs = tmp / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_DAEMON_MEMORY": "256m",  # the master's and the worker's own JVMs
        "SPARK_LOG_DIR": str(logs),
        "PYSPARK_PYTHON": sys.executable,  # the executors' Python workers: this venv (pyarrow, the codecs)
    }
    cluster = Standalone(f"spark://127.0.0.1:{master_port}", f"http://127.0.0.1:{master_ui}", logs)
    procs = [
        _start(
            [
                "org.apache.spark.deploy.master.Master",
                *("--host", "127.0.0.1", "--port", str(master_port), "--webui-port", str(master_ui)),
            ],
            logs / "master.log",
            env,
        )
    ]
    try:
        procs.append(
            _start(
                [
                    "org.apache.spark.deploy.worker.Worker",
                    *("--host", "127.0.0.1", "--webui-port", str(worker_ui)),
                    *("--cores", str(cores), "--memory", worker_memory, "--work-dir", str(tmp / "work")),
                    cluster.master_url,
                ],
                logs / "worker.log",
                env,
            )
        )

        async def status() -> dict[str, Any]:
            for proc in procs:
                assert proc.poll() is None, f"a Spark daemon exited:\n{cluster.log_tail()}"
            try:
                async with httpx.AsyncClient(timeout=5) as client:
                    answer = await client.get(f"{cluster.ui_url}/json/")
                    return answer.json() if answer.status_code == 200 else {}
            except httpx.HTTPError:
                return {}

        def alive(s: dict[str, Any]) -> bool:
            return s.get("status") == "ALIVE" and any(w.get("state") == "ALIVE" for w in s.get("workers", []))

        await eventually(status, alive, timeout_s=120, what="the standalone master with an ALIVE worker")
        yield cluster
    finally:
        for proc in reversed(procs):
            _stop(proc)
