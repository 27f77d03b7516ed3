"""A Connect worker of a test's own cluster (its own group.id, internal topics and port, against the stack's
broker), from the stack's jars, started as ``deploy/local/stack.py`` starts the stack's: for tests that
suspend or kill a worker (the shared stack's workers are never touched)."""

from __future__ import annotations

import contextlib
import os
import signal
import uuid
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .deploy_local import files_under, local_stack
from .stack import Cluster, Stack


@dataclass(frozen=True)
class OwnWorker:
    cluster: Cluster
    pid: int


@contextlib.contextmanager
def own_worker(stack: Stack, home: Path, version: str, prefix: str) -> Iterator[OwnWorker]:
    """A worker of ``version`` with its config and log under ``home``; resumed (SIGCONT) and stopped at
    the end whatever the test did to it."""
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    with files_under(home), warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)  # the Popen object goes, the worker runs on
        proc = local_stack.start_connect(
            name, version, stack.bootstrap, properties=local_stack.quick_discovery(version)
        )
    try:
        local_stack.wait_until(proc, lambda: local_stack.connect_ready(proc.url), "answer on its REST port")
        yield OwnWorker(Cluster(name, version, proc.url, proc.extra["properties"]), proc.pid)
    finally:
        os.kill(proc.pid, signal.SIGCONT)
        local_stack.stop([proc])


class OwnWorkers:
    """The session's own workers, one per release, started on first use (about 25 s each) and stopped at
    the end of the session; each test that suspends one resumes it."""

    def __init__(self, stack: Stack, home: Path) -> None:
        self._stack = stack
        self._home = home
        self._started = contextlib.ExitStack()
        self._workers: dict[str, OwnWorker] = {}

    def of(self, version: str) -> OwnWorker:
        if version not in self._workers:
            home = self._home / version
            home.mkdir(parents=True, exist_ok=True)
            self._workers[version] = self._started.enter_context(own_worker(self._stack, home, version, "own"))
        return self._workers[version]

    def close(self) -> None:
        self._started.close()


__all__ = ["OwnWorker", "OwnWorkers", "own_worker"]
