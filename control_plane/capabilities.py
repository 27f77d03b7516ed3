"""Which features the Connect worker does natively, and which the sidecar must emulate.

``decide`` is pure: from the worker's version (``GET /``) and the operator's per-feature settings it
returns one ``Decision`` per feature. The first native release of each feature is the table in
``shared/ARCHITECTURE.md``. ``CapabilityDetector`` keeps the decisions current: it asks every worker
for its version at start and then every ``capability_refresh_s``; during a rolling upgrade the oldest
version that answers decides, so a feature is used natively only once every worker has it.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import structlog

from .background import cancel_and_wait
from .settings import FeatureMode
from .upstream import ConnectUpstream

log = structlog.get_logger(__name__)


@dataclass(frozen=True, order=True)
class Version:
    parts: tuple[int, int, int]
    text: str = field(compare=False, default="")

    @classmethod
    def parse(cls, text: str) -> Version | None:
        """``4.3.1``, ``3.7.0-SNAPSHOT`` -> the numeric release; None if there is none.

        Confluent Platform builds (``7.6.0-ccs``, ``7.4.1-ce``) report the platform's version: they
        are read as the Apache Kafka release they ship (CP 7.6 is Kafka 3.6, CP 8.1 is Kafka 4.1).
        """
        match = re.match(r"\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?(-c[ce]s?\b)?", text or "")
        if not match:
            return None
        major, minor, patch = (int(g) if g else 0 for g in match.groups()[:3])
        if match.group(4):
            major, minor = _kafka_of_confluent(major, minor)
        return cls((major, minor, patch), text.strip())

    def __str__(self) -> str:
        return self.text or ".".join(map(str, self.parts))


def _kafka_of_confluent(major: int, minor: int) -> tuple[int, int]:
    """Confluent Platform major.minor -> the Apache Kafka major.minor it is built on."""
    if major >= 7:  # CP 7.x ships Kafka 3.x, CP 8.x Kafka 4.x
        return major - 4, minor
    if major == 6:  # CP 6.0, 6.1, 6.2 ship Kafka 2.6, 2.7, 2.8
        return 2, 6 + minor
    if major == 5:  # CP 5.0 ... 5.5 ship Kafka 2.0 ... 2.5
        return 2, minor
    return major, minor


@dataclass(frozen=True)
class Feature:
    name: str
    spec: str
    native_since: Version | None
    summary: str


def _v(text: str) -> Version:
    version = Version.parse(text)
    assert version is not None
    return version


FEATURES: tuple[Feature, ...] = (
    Feature("topic_tracking", "KIP-558", _v("2.5.0"), "GET /connectors/{c}/topics, PUT .../topics/reset"),
    Feature("topic_creation", "KIP-158", _v("2.6.0"), "topic.creation.* rules for source connectors"),
    Feature("stop_and_offsets_read", "KIP-875", _v("3.5.0"), "PUT /connectors/{c}/stop, GET .../offsets"),
    Feature("offsets_alter_reset", "KIP-875", _v("3.6.0"), "PATCH and DELETE /connectors/{c}/offsets"),
    Feature("plugin_versions", "KIP-891", _v("4.1.0"), "*.plugin.version, versions in status"),
    Feature("status_store_retries", "status-store retries", None, "configurable status-write retries"),
)
FEATURES_BY_NAME = {f.name: f for f in FEATURES}


@dataclass(frozen=True)
class Decision:
    feature: Feature
    native: bool
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "mode": "native" if self.native else "emulated",
            "spec": self.feature.spec,
            "native_since": str(self.feature.native_since) if self.feature.native_since else None,
            "reason": self.reason,
            "summary": self.feature.summary,
        }


def decide(worker_version: Version | None, modes: Mapping[str, FeatureMode]) -> dict[str, Decision]:
    decisions = {}
    for feature in FEATURES:
        mode = modes.get(feature.name, FeatureMode.AUTO)
        if mode is FeatureMode.NATIVE:
            decision = Decision(feature, True, "forced native by setting")
        elif mode is FeatureMode.EMULATED:
            decision = Decision(feature, False, "forced emulated by setting")
        elif feature.native_since is None:
            decision = Decision(feature, False, "no Connect release has it")
        elif worker_version is None:
            decision = Decision(feature, False, "worker version unknown (no worker answered yet)")
        elif worker_version >= feature.native_since:
            decision = Decision(feature, True, f"worker {worker_version} >= {feature.native_since}")
        else:
            decision = Decision(feature, False, f"worker {worker_version} < {feature.native_since}")
        decisions[feature.name] = decision
    return decisions


class CapabilityDetector:
    """Keeps the per-feature decisions in step with the versions the workers report."""

    def __init__(
        self,
        upstream: ConnectUpstream,
        modes: Mapping[str, FeatureMode],
        refresh_s: float,
        on_answer: Callable[[str, bool], None] | None = None,
    ) -> None:
        self._upstream = upstream
        self._on_answer = on_answer
        self._modes = dict(modes)
        self._refresh_s = refresh_s
        self.worker_versions: dict[str, str] = {}
        self.version: Version | None = None
        self.detected_at: float | None = None
        self.decisions = decide(None, self._modes)
        self._task: asyncio.Task[None] | None = None
        self._detected = asyncio.Event()

    @property
    def detected(self) -> bool:
        return self.version is not None

    def is_native(self, feature: str) -> bool:
        return self.decisions[feature].native

    async def refresh(self) -> bool:
        answers = await self._upstream.worker_versions()
        if self._on_answer:
            for url, answer in answers.items():
                self._on_answer(url, answer is not None)
        versions = {url: v for url, v in answers.items() if v is not None}
        if not versions:
            return False
        parsed = [p for p in (Version.parse(v) for v in versions.values()) if p is not None]
        if not parsed:
            return False
        oldest = min(parsed)
        if oldest != self.version or versions != self.worker_versions:
            log.info("capabilities detected", worker_versions=versions, version=str(oldest))
        self.worker_versions = versions
        self.version = oldest
        self.detected_at = time.time()
        self.decisions = decide(oldest, self._modes)
        self._detected.set()
        return True

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="capability-detector")

    async def wait_detected(self, timeout_s: float) -> bool:
        try:
            await asyncio.wait_for(self._detected.wait(), timeout_s)
        except TimeoutError:
            return False
        return True

    async def _run(self) -> None:
        delay = 0.5
        while True:
            try:
                ok = await self.refresh()
            except Exception:
                log.exception("capability detection failed")
                ok = False
            # until a worker has answered once, try again soon; then at the configured pace
            await asyncio.sleep(self._refresh_s if ok else delay)
            delay = min(delay * 2, self._refresh_s)

    async def stop(self) -> None:
        await cancel_and_wait(self._task)

    def as_dict(self) -> dict[str, Any]:
        return {
            "worker_version": str(self.version) if self.version else None,
            "worker_versions": self.worker_versions,
            "detected_at": self.detected_at,
            "features": {name: d.as_dict() for name, d in self.decisions.items()},
        }
