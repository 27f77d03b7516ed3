"""Whose versions decide the capabilities: every live worker of the Connect cluster, not only the workers
this sidecar was given.

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

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from .version import Version


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


__all__ = ["DecidingVersions", "GroupVersions", "LiveWorkers", "deciding_versions", "release"]
