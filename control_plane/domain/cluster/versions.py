"""The Connect releases of the cluster's workers: a worker's version as ``GET /`` reports it (``Version``,
compared by release), and whose versions decide the capabilities: every live worker of the Connect
cluster, not only the workers this sidecar was given.

A sidecar is given some workers' URLs (``connect_urls``; in Kubernetes, its own pod's worker only). During
a rolling upgrade the other workers may be older: were the given workers alone to decide, a feature would
be native on one sidecar and emulated on the next. The workers' group (Connect's ``group.id``, read by
``membership.ClusterMembership``) has every live worker, so with it the versions that decide are the given
workers' answers and every live member's: every sidecar of the cluster decides the same, and a worker that
leaves the group stops deciding once its group session ends. Without the group (no Kafka settings) the
given workers' answers decide alone, as the only ones known.

A live worker whose version is unknown (its ``GET /`` did not answer or named no release, or the group
could not be read) is not left out silently: ``unknown`` says why, and ``Capabilities`` then moves its
decision to an older version only, never to a newer one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol


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

    @classmethod
    def of(cls, text: str) -> Version:
        version = cls.parse(text)
        if version is None:
            raise ValueError(f"not a version: {text!r}")
        return version

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
class LiveWorkers:
    """The live members of the workers' group: each one's URL and ``GET /`` version (None where it did not
    answer), or why the group could not be read (then ``versions`` says nothing)."""

    group: str
    versions: Mapping[str, str | None]
    error: str | None = None


class GroupVersions(Protocol):
    """The port ``Capabilities`` reads the group through (``membership.ClusterMembership``): a group not
    read within ``timeout_s`` is one that could not be read."""

    async def live_workers(self, timeout_s: float) -> LiveWorkers: ...


@dataclass(frozen=True)
class DecidingVersions:
    """The workers whose versions decide (URL -> version, None where unknown), the group they were read
    with (None: the given workers alone), and why a live worker's version is unknown (None: none is)."""

    versions: dict[str, str | None]
    group: str | None = None
    unknown: str | None = None

    @property
    def oldest(self) -> Version | None:
        """The oldest of the versions known; None when none is."""
        return min((v for v in map(release, self.versions.values()) if v is not None), default=None)


def deciding_versions(given: Mapping[str, str | None], live: LiveWorkers | None) -> DecidingVersions:
    """``given``: the given workers' answers (None: no answer; such a worker decides nothing unless the group
    has it); ``live``: the group's members, None without the group."""
    answered = {url: version for url, version in given.items() if version is not None}
    if live is None:
        return DecidingVersions(dict(sorted(answered.items())))
    if live.error is not None:
        why = f"the live workers of group {live.group} are unknown ({live.error})"
        return DecidingVersions(dict(sorted(answered.items())), live.group, why)
    versions = dict(sorted({**live.versions, **answered}.items()))  # a worker's own answer to the sidecar first
    unread = [url for url, version in versions.items() if release(version) is None]
    if not unread:
        return DecidingVersions(versions, live.group)
    named = ", ".join(unread)
    why = f"no version from {named} (GET / did not answer or named no release)"
    return DecidingVersions(versions, live.group, why)


def release(text: str | None) -> Version | None:
    """The release a worker's ``GET /`` names, None when it names none."""
    return Version.parse(text) if text else None


__all__ = ["DecidingVersions", "GroupVersions", "LiveWorkers", "Version", "deciding_versions", "release"]
