"""The sidecar's own endpoints: readiness, the status writes it carries out, and what it knows of the
workers, its settings and its view."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...storage.status_writes import StatusWrites
from ..newer.feature import NewerApi
from ..ports import StatusSink, Workers
from ..read_rule import ReadRule


@dataclass(frozen=True)
class Readiness:
    ready: bool
    checks: dict[str, bool]


class SidecarInfo:
    def __init__(
        self,
        rule: ReadRule,
        workers: Workers,
        newer: NewerApi,
        status_writes: StatusSink,
        describe_settings: Callable[[], dict[str, Any]],
    ) -> None:
        self._capabilities = rule.capabilities
        self._view = rule.view
        self._probe = rule.probe
        self._workers = workers
        self._newer = newer
        self._status_writes = status_writes
        self._describe_settings = describe_settings

    def readiness(self) -> Readiness:
        """With a view: ready once it has read its topics to the end offsets seen at start (it can then
        answer reads even while every worker is down). Without: once a worker reported its version."""
        if self._view is not None:
            checks = {"view_caught_up": self._view.ready}
        else:
            checks = {"worker_version_detected": self._capabilities.detected}
        return Readiness(all(checks.values()), checks)

    def status_writes(self) -> StatusWrites:
        return self._status_writes.snapshot()

    def capabilities_info(self) -> dict[str, Any]:
        """The workers' real versions and the decisions, with the version ``GET /`` advertises (None: the
        worker's own)."""
        return {**self._capabilities.as_dict(), "advertised_version": self._newer.advertised_version()}

    def info(self) -> dict[str, Any]:
        return {
            "capabilities": self.capabilities_info(),
            "workers": list(self._workers.workers),
            "settings": self._describe_settings(),
            "view": self._view_info(),
        }

    def _view_info(self) -> dict[str, Any] | None:
        if self._view is None:
            return None
        state = self._view.state
        return {
            "ready": self._view.ready,
            "age_s": state.age_s(),
            "workers_answering": self._probe.answering if self._probe else None,
            "counts": state.counts(),
            **self._view.diagnostics(),
        }


__all__ = ["Readiness", "SidecarInfo"]
