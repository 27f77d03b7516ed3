"""How the tests find the running stack: ``.stack/env``, written by ``make stack-up`` (deploy/local)."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from spark_jobs.target import read_stack_env

from .paths import ROOT

STACK_DIR = Path(os.environ.get("STACK_DIR", ROOT / ".stack"))
ENV_FILE = STACK_DIR / "env"
STACK_SCRIPT = ROOT / "deploy" / "local" / "stack.py"
NEWEST = "new"


@dataclass(frozen=True)
class Cluster:
    """A Connect cluster of the stack: its worker. The stack's sidecar processes (``make stack-up`` starts
    them, from the code as it was then) are deliberately not here: the tests serve their own sidecar,
    built from the code under test (``harness.Sidecars``)."""

    name: str  # "new" (the newest release), "old", "oldest": the suffix of its variables in .stack/env
    version: str
    connect_url: str
    properties: str  # the worker's properties file

    @property
    def newest(self) -> bool:
        """The newest Connect release of the stack (4.4.0): the one whose answers the others must equal."""
        return self.name == NEWEST

    def at_least(self, version: str) -> bool:
        """Whether the worker is ``version`` (``3.3``, ``3.0.0``) or newer."""
        return version_key(self.version) >= version_key(version)

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
    """``.stack/env`` as the Spark jobs read it when no worker properties file is given."""
    return read_stack_env(path)


def stack_running() -> bool:
    return subprocess.run([sys.executable, str(STACK_SCRIPT), "status"], capture_output=True).returncode == 0


def stack_command(command: str) -> None:
    subprocess.run([sys.executable, str(STACK_SCRIPT), command], check=True)


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) if part.isdigit() else 0 for part in version.split("-")[0].split("."))


def clusters_of(env: dict[str, str]) -> dict[str, Cluster]:
    """Every Connect cluster in ``env``: ``CONNECT_URL`` is the newest (``new``), ``CONNECT_URL_<SUFFIX>``
    another one named ``<suffix>`` (``old``, ``oldest``), each with its ``CONNECT_VERSION`` and
    ``CONNECT_PROPERTIES`` of the same suffix; newest version first."""
    clusters = []
    for key in env:
        if not key.startswith("CONNECT_URL"):
            continue
        suffix = key.removeprefix("CONNECT_URL")
        name = suffix.removeprefix("_").lower() or NEWEST
        clusters.append(Cluster(name, env[f"CONNECT_VERSION{suffix}"], env[key], env[f"CONNECT_PROPERTIES{suffix}"]))
    clusters.sort(key=lambda c: version_key(c.version), reverse=True)
    return {c.name: c for c in clusters}


def cluster_ids() -> dict[str, str]:
    """name -> test id (``connect-<version>``) of every Connect cluster of the stack, without starting it:
    from ``.stack/env`` when there is one, else from the clusters ``deploy/local/stack.py`` starts."""
    if ENV_FILE.exists():
        return {name: f"connect-{c.version}" for name, c in clusters_of(read_env()).items()}
    from .deploy_local import local_stack

    return {c.name: f"connect-{c.version}" for c in local_stack.CLUSTERS}


def load_stack() -> Stack:
    env = read_env()
    return Stack(env["KAFKA_BOOTSTRAP"], clusters_of(env), env["STACK_LOGS"])
