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

    name: str  # "new", "old", ... (the suffix of its variables in .stack/env, lower case; "" is "new")
    version: str
    connect_url: str
    properties: str  # the worker's properties file

    def worker_property(self, key: str) -> str:
        from control_plane.worker_properties import read_properties

        return read_properties(self.properties)[key]


@dataclass(frozen=True)
class Stack:
    bootstrap: str
    clusters: dict[str, Cluster]  # newest Connect version first
    logs: str

    @property
    def newest(self) -> Cluster:
        return next(iter(self.clusters.values()))


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


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) if part.isdigit() else 0 for part in version.split("-")[0].split("."))


def clusters_of(env: dict[str, str]) -> dict[str, Cluster]:
    """Every Connect cluster of the stack: each ``CONNECT_URL<suffix>`` with its ``CONNECT_VERSION<suffix>``
    and ``CONNECT_PROPERTIES<suffix>`` (no suffix: "new"; ``_OLD``: "old"; ...), newest version first."""
    clusters = [
        Cluster(
            key.removeprefix("CONNECT_URL").lstrip("_").lower() or "new",
            env[f"CONNECT_VERSION{key.removeprefix('CONNECT_URL')}"],
            url,
            env[f"CONNECT_PROPERTIES{key.removeprefix('CONNECT_URL')}"],
        )
        for key, url in env.items()
        if key.startswith("CONNECT_URL")
    ]
    return {c.name: c for c in sorted(clusters, key=lambda c: version_key(c.version), reverse=True)}


def load_stack() -> Stack:
    env = read_env()
    return Stack(env["KAFKA_BOOTSTRAP"], clusters_of(env), env["STACK_LOGS"])
