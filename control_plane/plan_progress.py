"""An apply's progress on a terminal (``plan_cli``): while the sidecar carries out the plan, a counter of its
steps that the cluster already shows, from ``GET /connectors?expand=info`` through the same sidecar once a
second: a create or update once the connector has the plan's config, a delete once it is gone. Only on a
terminal; a poll that fails leaves the counter as it was (the apply's own answer is what counts).
"""

from __future__ import annotations

import sys
import threading
from typing import Any, TextIO

import httpx

INTERVAL_S = 1.0


def done_steps(steps: list[dict[str, Any]], listed: dict[str, Any]) -> int:
    """How many of ``steps`` ``listed`` (``GET /connectors?expand=info``'s answer) shows carried out."""
    count = 0
    for step in steps:
        info = (listed.get(step["name"]) or {}).get("info")
        if step["action"] == "delete":
            count += info is None
        elif info is not None and info.get("config") == step.get("config"):
            count += 1
    return count


class ApplyCounter:
    def __init__(self, steps: list[dict[str, Any]], url: str, headers: dict[str, str], out: TextIO) -> None:
        self._steps = steps
        self._url = url.rstrip("/")
        self._headers = headers
        self._out = out
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="apply-progress", daemon=True)

    def start(self) -> ApplyCounter:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join(timeout=5)
        self._out.write("\r\033[K")
        self._out.flush()

    def _run(self) -> None:
        total = len(self._steps)
        with httpx.Client(base_url=self._url, headers=self._headers, timeout=10) as client:
            while not self._stopped.wait(INTERVAL_S):
                try:
                    answer = client.get("/connectors", params={"expand": "info"})
                    listed = answer.json() if answer.status_code == 200 else None
                except (httpx.HTTPError, ValueError):
                    listed = None
                if isinstance(listed, dict) and not self._stopped.is_set():
                    self._out.write(f"\r\033[Kapplying: {done_steps(self._steps, listed)}/{total} step(s) done")
                    self._out.flush()


def shown(plan: dict[str, Any], url: str, headers: dict[str, str], out: TextIO | None = None) -> ApplyCounter | None:
    """The counter of ``plan``'s steps, started (None when there is none to count)."""
    steps = [s for s in plan.get("connectors", []) if isinstance(s, dict) and s.get("action") != "unchanged"]
    return ApplyCounter(steps, url, headers, out or sys.stderr).start() if steps else None


__all__ = ["ApplyCounter", "done_steps", "shown"]
