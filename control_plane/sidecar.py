"""The sidecar's domain entry point (the role Connect's Herder plays): one object the handlers call.

It owns the upstream Connect cluster and the capability decisions; the features of later issues
hang off it. It returns its own dataclasses, never HTTP payloads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .capabilities import CapabilityDetector
from .metrics import Metrics
from .settings import Settings, describe
from .upstream import ConnectUpstream, UpstreamRequest, UpstreamResponse
from .upstream.client import build_transport


@dataclass(frozen=True)
class Readiness:
    ready: bool
    checks: dict[str, bool]


class Sidecar:
    def __init__(self, settings: Settings, upstream: ConnectUpstream, detector: CapabilityDetector) -> None:
        self.settings = settings
        self.upstream = upstream
        self.capabilities = detector

    @classmethod
    def from_settings(
        cls, settings: Settings, upstream: ConnectUpstream | None = None, metrics: Metrics | None = None
    ) -> Sidecar:
        upstream = upstream or ConnectUpstream(
            settings.connect_urls,
            transport=build_transport(
                settings.upstream_transport, settings.upstream_max_connections, settings.upstream_keepalive_s
            ),
            connect_timeout_s=settings.upstream_connect_timeout_s,
            read_timeout_s=settings.upstream_read_timeout_s,
            pool_timeout_s=settings.upstream_pool_timeout_s,
            worker_down_s=settings.worker_down_s,
            rebalance_retry_max=settings.rebalance_retry_max,
            rebalance_retry_initial_backoff_ms=settings.rebalance_retry_initial_backoff_ms,
            rebalance_retry_max_backoff_ms=settings.rebalance_retry_max_backoff_ms,
        )
        upstream.observer = metrics
        detector = CapabilityDetector(
            upstream,
            settings.feature_modes(),
            settings.capability_refresh_s,
            on_answer=metrics.worker_answered if metrics else None,
        )
        return cls(settings, upstream, detector)

    async def start(self) -> None:
        await self.capabilities.start()

    async def stop(self) -> None:
        await self.capabilities.stop()
        await self.upstream.aclose()

    async def forward(self, request: UpstreamRequest) -> UpstreamResponse:
        """Pass a Connect REST request through to a worker of the cluster, unchanged."""
        return await self.upstream.forward(request)

    def readiness(self) -> Readiness:
        checks = {"worker_version_detected": self.capabilities.detected}
        return Readiness(all(checks.values()), checks)

    def info(self) -> dict[str, Any]:
        return {
            "capabilities": self.capabilities.as_dict(),
            "workers": list(self.upstream.workers),
            "settings": describe(self.settings),
        }
