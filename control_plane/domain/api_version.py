"""The Connect version the sidecar advertises in ``GET /`` (``advertised_version=effective``).

Clients gate features on that version (kcctl refuses stop and offsets below 3.5 and 3.6, and sends
cluster-wide logger changes from 3.7 on). The sidecar advertises the newest Connect release whose whole
REST API it provides on this cluster: every feature of ``capabilities.FEATURES`` that a release has is
either the workers' own (the oldest live worker has it) or the sidecar's (emulated). A feature the workers lack
and the sidecar does not emulate (or one forced ``native`` on workers that lack it) caps the version below
the release that added it. Never higher than the newest release whose API the sidecar knows
(``NEWEST_KNOWN``), never lower than the workers' own version.

Which patch release: Kafka's patch releases add no REST API (they fix bugs), so the API of a line is its
first release's. When the whole newest line is provided the sidecar says ``REFERENCE``, the release its
answers are modelled on and compared with in the tests (``4.4.0``: parity means an old worker answers
through the sidecar what 4.4.0 answers); saying another patch release of the line would claim its bugs,
which the sidecar does not reproduce. When a feature caps the version at an older line, the sidecar says
that line's first release (``4.0.0``): it knows which API that line has, not which of its patch releases'
fixes it matches.
"""

from __future__ import annotations

from collections.abc import Mapping

from .capabilities import Capabilities, Decision, Feature, Mode, Version

# Apache Kafka's minor releases, oldest first; the sidecar knows the REST API up to the last one.
RELEASES: tuple[tuple[int, int], ...] = (
    *((2, minor) for minor in range(9)),
    *((3, minor) for minor in range(10)),
    *((4, minor) for minor in range(5)),
)
NEWEST_KNOWN = RELEASES[-1]
REFERENCE = Version((4, 4, 0))  # the newest line's release the sidecar's answers are compared with
assert REFERENCE.parts[:2] == NEWEST_KNOWN


def provided(decision: Decision, worker: Version) -> bool:
    """Whether this cluster answers ``decision``'s feature as the release that added it does."""
    since = decision.spec.native_since
    if since is None or decision.mode is Mode.EMULATED:
        return True
    return decision.mode is Mode.NATIVE and worker >= since


def advertised_version(capabilities: Capabilities, *, effective: bool) -> str | None:
    """The version ``GET /`` shows (and ``/_sidecar/capabilities`` names): the effective one, or with
    ``advertised_version=worker`` the workers' own, the version that decides (the oldest live worker's:
    during a rolling upgrade every sidecar says the same, whichever worker answers); None before any worker
    reported its version."""
    worker = capabilities.version
    if worker is None:
        return None
    return str(effective_version(worker, capabilities.decisions)) if effective else str(worker)


def effective_version(worker: Version, decisions: Mapping[Feature, Decision]) -> Version:
    """The newest release whose whole API this cluster has, through the sidecar."""
    missing = [
        d.spec.native_since for d in decisions.values() if d.spec.native_since is not None and not provided(d, worker)
    ]
    cap = min(missing) if missing else None
    below = [r for r in RELEASES if cap is None or r < cap.parts[:2]]
    newest = max(below) if below else worker.parts[:2]
    if newest <= worker.parts[:2]:
        return worker  # the workers' own release (or newer than the sidecar knows): their own answer
    if newest == NEWEST_KNOWN:
        return REFERENCE
    return Version((newest[0], newest[1], 0))


__all__ = ["NEWEST_KNOWN", "REFERENCE", "RELEASES", "advertised_version", "effective_version", "provided"]
