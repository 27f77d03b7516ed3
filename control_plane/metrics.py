"""Prometheus metrics of one sidecar process, in a registry of its own (so tests can make many)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 90.0)


class Metrics:
    content_type = CONTENT_TYPE_LATEST

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "http_requests",
            "HTTP requests answered by the sidecar, per route template, method and status",
            ["route", "method", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "http_request_duration_seconds",
            "Time to answer an HTTP request, per route template and status",
            ["route", "method", "status"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.upstream_errors = Counter(
            "upstream_errors",
            "Failed calls to a Connect worker, per worker and kind of failure",
            ["worker", "kind"],
            registry=self.registry,
        )
        self.rebalance_retries = Counter(
            "upstream_rebalance_retries",
            "Requests sent again because Connect answered 409 during a rebalance",
            registry=self.registry,
        )
        self.worker_up = Gauge(
            "upstream_worker_version_detected",
            "1 when the worker answered GET / at the last capability check",
            ["worker"],
            registry=self.registry,
        )

    # -- what the upstream and the capability detector report
    def upstream_error(self, worker: str, kind: str) -> None:
        self.upstream_errors.labels(worker, kind).inc()

    def rebalance_retry(self) -> None:
        self.rebalance_retries.inc()

    def worker_answered(self, worker: str, answered: bool) -> None:
        self.worker_up.labels(worker).set(1 if answered else 0)

    def observe(self, route: str, method: str, status: int, seconds: float) -> None:
        labels = (route, method, str(status))
        self.requests.labels(*labels).inc()
        self.latency.labels(*labels).observe(seconds)

    def render(self) -> bytes:
        return generate_latest(self.registry)
