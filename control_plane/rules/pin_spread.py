"""How one version pin holds across the workers of a cluster, each with its own installed plugins. Pure: the
resolution on each worker is :mod:`.plugin_versions`'.

Connect validates a pin only against the plugins of the worker that validates the request: the one the
client reached, for validate; that one and then the leader, for create and update (``DistributedHerder
.doPutConnectorConfig`` validates before it forwards a write to the leader, which validates again); the
leader, for PATCH. Every other worker resolves the pin only when a connector or task is assigned to it
(``DelegatingClassLoader.findPluginLoader``, ``pluginClassLoader``: a ``VersionedPluginLoadingException``
when no installed version is inside the range, or the plugin is not installed), and assignment is
version-unaware (KIP-891: "a connector may be scheduled to a worker without any included versions present
and may become FAILED"). So a pin missing on one worker only is accepted by Connect, or refused, depending on
the worker a request reaches, and fails later on that worker. Before 4.1 the worker ignores the pin and
runs its newest installed version, whatever the range.

The rule the sidecar applies, the same whichever sidecar a request reaches:

- ``connect_refusal``: no known worker has a version inside the range, and one at least has the plugin:
  Connect's own refusal (it refuses the pin on every worker that could validate it);
- ``not_holding``: the pin holds on some workers and not on others (or a worker cannot check it): the
  sidecar's own problem, named per worker with what happens there (``spread_message``): refused unless
  ``config_checks=warn``.

``Enforcement`` says who keeps a pin that holds: the worker (4.1+: it loads the selected version, or fails)
or nobody but the sidecar's checks (before 4.1: "checked, not enforced by the worker").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from .plugin_versions import PinOutcome, PinResolution, PluginKey

HOLDING = frozenset({PinOutcome.LATEST, PinOutcome.RESOLVED})
# the range is satisfied by an installed version there (the worker may still not load it)
INSIDE = HOLDING | {PinOutcome.OLDER_ONLY, PinOutcome.VERSIONS_UNKNOWN}


class Enforcement(StrEnum):
    WORKER = "enforced by the worker"  # 4.1+: loads the selected version, or fails the connector or task
    SIDECAR = "checked, not enforced by the worker"  # before 4.1: ignores the pin, runs the newest installed


@dataclass(frozen=True)
class WorkerPin:
    """One pin on one worker."""

    worker: str  # its id (host:port)
    worker_version: str | None  # its Connect version
    resolution: PinResolution
    enforcement: Enforcement

    @property
    def holds(self) -> bool:
        return self.resolution.outcome in HOLDING

    @property
    def runs(self) -> str | None:
        """The version a connector or task assigned to this worker runs; None where it fails or is unknown."""
        r = self.resolution
        if r.outcome is PinOutcome.UNSATISFIABLE and self.enforcement is Enforcement.SIDECAR and r.installed:
            return r.installed[-1]  # the worker ignores the pin
        return r.runs

    @property
    def label(self) -> str:
        return f"{self.worker} (Connect {self.worker_version})" if self.worker_version else self.worker

    def consequence(self) -> str:
        """What happens to the pin on this worker, where it does not hold."""
        r = self.resolution
        assigned = "a connector or task assigned there"
        if r.outcome is PinOutcome.NOT_INSTALLED:
            return f"{r.key.plugin} is not installed: {assigned} fails"
        if r.outcome is PinOutcome.UNSATISFIABLE:
            available = ", ".join(r.installed)
            if self.enforcement is Enforcement.WORKER:
                return f"no installed version is inside the range (available versions: [{available}]): {assigned} fails"
            return (
                f"no installed version is inside the range (available versions: [{available}]): {assigned} runs "
                f"{self.runs or 'its newest installed version'}, the worker ignores the pin"
            )
        if r.outcome is PinOutcome.OLDER_ONLY:
            return (
                f"only {r.selected} is inside the range, but the worker always loads the newest installed version, "
                f"{r.runs}"
            )
        if r.outcome is PinOutcome.VERSIONS_UNKNOWN:
            return "the worker does not report the versions of its installed copies: the pin cannot be checked"
        return r.reason


@dataclass(frozen=True)
class PinSpread:
    """One pin across the known workers (by id)."""

    key: PluginKey
    pins: tuple[WorkerPin, ...]

    @property
    def not_holding(self) -> tuple[WorkerPin, ...]:
        return tuple(p for p in self.pins if not p.holds)

    def unparseable(self) -> PinResolution | None:
        return next((p.resolution for p in self.pins if p.resolution.outcome is PinOutcome.UNPARSEABLE), None)

    def connect_refusal(self) -> PinResolution | None:
        """Connect's refusal of the pin, wherever it is validated: no known worker has a version inside the
        range, and one at least has the plugin (the first such worker's resolution, for its message)."""
        if any(p.resolution.outcome in INSIDE for p in self.pins):
            return None
        return next((p.resolution for p in self.pins if p.resolution.outcome is PinOutcome.UNSATISFIABLE), None)

    def not_installed_anywhere(self) -> bool:
        return all(p.resolution.outcome is PinOutcome.NOT_INSTALLED for p in self.pins)


def spread_message(spread: PinSpread) -> str:
    """The sidecar's own problem with a pin that does not hold on every worker that can run it."""
    first = spread.pins[0].resolution
    name = next((p.resolution.class_name for p in spread.pins if p.resolution.class_name), None) or first.key.plugin
    requirement = next((p.resolution.requirement for p in spread.pins if p.resolution.requirement), first.key.spec)
    failing = "; ".join(f"on {p.label}: {p.consequence()}" for p in spread.not_holding)
    return (
        f"Plugin {name} version range {requirement} does not hold on every worker that can run the connector "
        f"and its tasks (Connect assigns them without regard to plugin versions): {failing}"
    )


def unknown_workers_warning(unknown: Sequence[str], known: Sequence[str]) -> str:
    return (
        f"the installed plugins of worker(s) {', '.join(unknown)} are unknown (no live sidecar in front of them "
        f"reports them): version pins are checked against {', '.join(known) or 'no worker'} only"
    )


__all__ = [
    "HOLDING",
    "Enforcement",
    "PinSpread",
    "WorkerPin",
    "spread_message",
    "unknown_workers_warning",
]
