"""How the tests find the running stack: ``.stack/env``, written by ``make stack-up`` (deploy/local)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STACK_DIR = Path(os.environ.get("STACK_DIR", ROOT / ".stack"))
ENV_FILE = STACK_DIR / "env"
STACK_SCRIPT = ROOT / "deploy" / "local" / "stack.py"


@dataclass(frozen=True)
class Cluster:
    """A Connect cluster of the stack: its worker. The stack's sidecar processes (``make stack-up`` starts
    them, from the code as it was then) are deliberately not here: the tests serve their own sidecar,
    built from the code under test (``harness.Sidecars``)."""

    name: str  # "new" or "old"
    version: str
    connect_url: str
    properties: str  # the worker's properties file

    def worker_property(self, key: str) -> str:
        from control_plane.worker_properties import read_properties

        return read_properties(self.properties)[key]


@dataclass(frozen=True)
class Stack:
    bootstrap: str
    clusters: dict[str, Cluster]
    logs: str


def read_env(path: Path = ENV_FILE) -> dict[str, str]:
    env: dict[str, str] = {}
    for line in path.read_text().splitlines():
        line = line.removeprefix("export ").strip()
        if "=" in line:
            key, _, value = line.partition("=")
            env[key] = " ".join(shlex.split(value))
    return env


def stack_running() -> bool:
    return subprocess.run([sys.executable, str(STACK_SCRIPT), "status"], capture_output=True).returncode == 0


def stack_command(command: str) -> None:
    subprocess.run([sys.executable, str(STACK_SCRIPT), command], check=True)


def load_stack() -> Stack:
    env = read_env()
    clusters = {
        "new": Cluster("new", env["CONNECT_VERSION"], env["CONNECT_URL"], env["CONNECT_PROPERTIES"]),
        "old": Cluster("old", env["CONNECT_VERSION_OLD"], env["CONNECT_URL_OLD"], env["CONNECT_PROPERTIES_OLD"]),
    }
    return Stack(env["KAFKA_BOOTSTRAP"], clusters, env["STACK_LOGS"])
