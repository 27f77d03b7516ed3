"""A KRaft broker of its own, for tests that stop and start a broker: the stack's broker is never touched.

Started by ``deploy/local/stack.py``'s ``start_broker`` (the same jars, properties and log4j setup) with
its config, data and log under a directory of its own and on fixed ports, so that a restart comes back
on the same address with the same data (``format_storage=False``).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import time
import warnings
from pathlib import Path

from .deploy_local import local_stack


def exited(pid: int, timeout_s: float) -> bool:
    """Wait until process ``pid`` has exited (a zombie counts), at most ``timeout_s``: on its pidfd, which
    becomes readable when the process terminates (Linux 5.3+)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        readable, _, _ = select.select([fd], [], [], timeout_s)
        return bool(readable)
    finally:
        os.close(fd)


class DedicatedBroker:
    def __init__(self, home: Path) -> None:
        self.home = home
        self.port, self.controller_port = local_stack.free_port(), local_stack.free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        self.pid: int | None = None
        self._formatted = False

    @property
    def log(self) -> Path:
        return self.home / "logs" / "broker.log"

    def start(self) -> None:
        """Spawn the broker (returns at once; see ``wait_ready``). Formats its storage the first time only."""
        assert self.pid is None or not local_stack.alive(self.pid), "the broker is running"
        # start_broker lets go of its Popen while the child runs, on purpose (the stack outlives the
        # script that started it): here that is expected, not a leak.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)
            proc = local_stack.start_broker(
                self.home, self.port, self.controller_port, format_storage=not self._formatted
            )
        self._formatted = True
        self.pid = proc.pid

    def wait_ready(self, timeout_s: float = 60.0) -> None:
        """Until the broker answers a metadata request (a real round trip through the admin API)."""
        assert self.pid is not None, "the broker was not started"
        proc = local_stack.Proc("test-broker", self.pid, str(self.log))
        local_stack.wait_until(
            proc, lambda: local_stack.broker_answers(self.bootstrap), "answer metadata requests", timeout_s
        )

    def kill(self, sig: signal.Signals, timeout_s: float = 30.0) -> float:
        """Send ``sig`` to the broker, wait until it exited (SIGKILL after ``timeout_s``), reap it;
        returns how long it took to go."""
        assert self.pid is not None
        started = time.monotonic()
        os.killpg(self.pid, sig)
        if not exited(self.pid, timeout_s) and local_stack.alive(self.pid):
            os.killpg(self.pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)
        return time.monotonic() - started

    def running(self) -> bool:
        return self.pid is not None and local_stack.alive(self.pid)

    def stop(self) -> None:
        if self.running():
            self.kill(signal.SIGTERM)
