"""Versioned plugins (KIP-891) on every Connect version: the pins of a configuration, checked on their way
to a worker (a ``ConfigCheck`` of ``config_checks``), ``?version=`` of the plugin config endpoint, the
version in statuses, and what each pin resolves to (the sidecar's own report).

A pin is checked against every live worker that can run the connector and its tasks (Connect assigns them
without regard to versions): the workers of the group whose plugins a live sidecar reports
(``plugins.workers``), this sidecar's own always; the others are named in a warning, never guessed. The rule
across workers is ``rules.pin_spread``'s: refused with Connect's answer where no worker has a version inside
the range, by the sidecar's own check where some have and some have not. So every sidecar of a cluster
answers a pin the same, whichever worker it is in front of.

Native (4.1+): the workers do it; the sidecar checks only what Connect gets wrong, and what no single
worker can see (a worker without the version, that a task may be assigned to). A connector pin this
sidecar's own worker cannot satisfy is refused with Connect's answer, as that worker refuses it (Connect
validates on the worker a request reaches). On 4.1 to 4.3 (KAFKA-20751, fixed in 4.4.0) its validation of an
unsatisfiable ``connector.plugin.version`` answers the KIP's answer only the first time per worker, class
name and range: ``CachedConnectors`` keeps the failure and throws it again without the available versions,
and ``AbstractHerder.invalidVersionedConnectorValidation`` then fails with a 500 NullPointerException (on
validate, create, update and PATCH alike). So the sidecar hides such a pin from a worker of those releases
and puts Connect's errors (on ``connector.class`` and the pin, the installed versions recommended) on the
worker's validation of the rest; a 4.4+ worker answers it itself, every time. And a connector pin that is no
version range makes validate answer a 500 wrapping Connect's own 400 ``BadRequestException``
(``ConnectorPluginsResource``, unchanged in 4.4.0; create and update answer the 400): the sidecar answers
the 400.

Emulated (before 4.1, which always loads the newest installed version and ignores the keys): a pin the
newest installed version satisfies on every worker goes through; a pin no installed version satisfies, or
that is no range, is refused with Connect 4.3.1's answers; a pin only an older installed version satisfies
is refused by the sidecar's own check (the worker would run the newest); a pin of a plugin whose versions the
worker does not report (converters, transformations and predicates before 4.1) cannot be checked and is
refused by the sidecar's own check too (``config_checks=warn`` lets both through with a warning). Statuses
show the newest installed version of the connector on the worker that runs it (by its ``worker_id``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from ...rules.maven_range import (
    InvalidVersionSpecificationError,
    invalid_specification_message,
    no_matching_version_message,
    parse_requirement,
    select_version,
)
from ...rules.pin_spread import Enforcement, PinSpread, WorkerPin, spread_message, unknown_workers_warning
from ...rules.plugin_versions import (
    PinOutcome,
    PinResolution,
    PluginKey,
    older_only_message,
    plugin_keys,
    resolve,
    versions_unknown_message,
)
from ...view import ConnectorStateView, StateEntry
from ..capabilities import Capabilities, Feature, Mode
from ..cluster.versions import Version
from ..config_checks import NOTHING, CheckResult, ConfigSubject, RequestKind
from ..config_infos import ConfigProblem
from ..connect_api import Config
from ..errors import BadRequestError
from ..outcomes import SIDECAR, Forward, Refusal
from ..ports import Amend, ConfigOf
from .catalog import PluginCatalog
from .workers import KnownWorker, WorkerCatalogs

ALL_TYPES = ("source", "sink", "converter", "header_converter", "transformation", "predicate")
# a task or connector that is not running has no loaded plugin: 4.1+ reports its version as null
NO_VERSION_STATES = frozenset({"UNASSIGNED"})

# the ids of the live workers of the group (``membership``); None when the group cannot be read
GroupMembers = Callable[[], Awaitable[Sequence[str] | None]]
# CachedConnectors rethrows a connector's version failure with its available versions (KAFKA-20751)
REPEATED_FAILURE_FIXED = Version.of("4.4.0")


def repeats_failure(worker_version: str | None) -> bool:
    """Whether a worker of this version answers a 500 to a repeated unsatisfiable connector pin (4.1 to 4.3,
    and a worker whose version is unknown, taken as the older)."""
    parsed = Version.parse(worker_version) if worker_version else None
    return parsed is None or parsed < REPEATED_FAILURE_FIXED


VersionOn = Callable[[str | None], str | None]  # a worker's id -> the version of a connector there


class PluginVersions:
    def __init__(
        self,
        capabilities: Capabilities,
        catalog: PluginCatalog,
        workers: WorkerCatalogs | None = None,
        members: GroupMembers | None = None,
    ) -> None:
        self.capabilities = self._capabilities = capabilities
        self.catalog = catalog
        self.workers = workers or WorkerCatalogs(catalog, worker_versions=lambda: capabilities.worker_versions)
        self._members = members

    # -- who does it ----------------------------------------------------------------------------
    async def _native(self) -> bool:
        return await self._capabilities.mode(Feature.PLUGIN_VERSIONS) is not Mode.EMULATED

    def emulated(self) -> bool:
        """The sidecar does it now: a worker reported an older version (or the setting forces it)."""
        feature = Feature.PLUGIN_VERSIONS
        return self._capabilities.decision(feature).mode is Mode.EMULATED and self._capabilities.decided(feature)

    def enforcement(self, worker_version: str | None, *, native: bool = False) -> Enforcement:
        """Who keeps a pin on a worker of ``worker_version``: the worker itself (4.1+), or only the sidecar."""
        loads = native or self._capabilities.native_on(Feature.PLUGIN_VERSIONS, worker_version)
        return Enforcement.WORKER if loads else Enforcement.SIDECAR

    def _worker(self) -> str:
        version = self._capabilities.version
        return f"Connect {version}" if version else "this worker"

    async def resolutions(self, config: Config, *, native: bool | None = None) -> list[PinResolution]:
        """Every plugin of ``config`` and what its pin resolves to on this sidecar's worker."""
        side_by_side = await self._native() if native is None else native
        plugins = await self.catalog.current()
        out = []
        for key in plugin_keys(config):
            class_name = plugins.class_name(key.plugin, key.types)
            installed = plugins.versions(class_name, key.types) if class_name else []
            out.append(resolve(key, class_name, installed, side_by_side=side_by_side, worker_version=self._worker()))
        return out

    # -- across the workers -----------------------------------------------------------------------
    async def scope(self) -> tuple[list[KnownWorker], list[str]]:
        """The workers a pin is checked against (this sidecar's own, and every live worker of the group whose
        plugins are known; every known one when the group cannot be read), and the group's workers whose
        plugins are unknown."""
        await self.catalog.current()
        known = self.workers.known()
        own = self.workers.own_id()
        members = await self._members() if self._members is not None else None
        if members is None:
            return list(known.values()), []
        checked = [w for w in known.values() if w.worker in members or w.worker == own]
        return checked, self.workers.unknown(members)

    def spread(self, key: PluginKey, workers: Sequence[KnownWorker], *, native: bool) -> PinSpread:
        pins = []
        for w in workers:
            class_name = w.plugins.class_name(key.plugin, key.types)
            installed = w.plugins.versions(class_name, key.types) if class_name else []
            enforcement = self.enforcement(w.version, native=native)
            label = f"Connect {w.version}" if w.version else "this worker"
            side_by_side = enforcement is Enforcement.WORKER
            resolution = resolve(key, class_name, installed, side_by_side=side_by_side, worker_version=label)
            pins.append(WorkerPin(w.worker, w.version, resolution, enforcement))
        return PinSpread(key, tuple(pins))

    # -- the ConfigCheck --------------------------------------------------------------------------
    async def check(self, subject: ConfigSubject) -> CheckResult:
        pinned = [key for key in plugin_keys(subject.config) if key.spec is not None]
        if not pinned:
            return NOTHING  # nothing pinned: no plugin list needed
        native = await self._native()
        workers, unknown = await self.scope()
        if not workers:
            return NOTHING  # no worker's plugins known yet: the worker answers
        spreads = [self.spread(key, workers, native=native) for key in pinned]
        if native:
            result = self._native_check(subject, spreads, self.workers.own_id())
        else:
            result = self._emulated_check(spreads)
        if unknown and result.refusal is None:
            warning = unknown_workers_warning(unknown, [w.worker for w in workers])
            result = dataclasses.replace(result, warnings=(*result.warnings, warning))
        return result

    def _native_check(self, subject: ConfigSubject, spreads: list[PinSpread], own: str | None) -> CheckResult:
        problems: list[ConfigProblem] = []
        hidden: set[str] = set()
        for s in spreads:
            mine_pin = next((p for p in s.pins if p.worker == own), None)
            mine = mine_pin.resolution if mine_pin else None
            own_version = mine_pin.worker_version if mine_pin else None
            if s.key.is_connector and mine is not None:
                if mine.outcome is PinOutcome.UNPARSEABLE and subject.kind is RequestKind.VALIDATE and mine.error:
                    return CheckResult(refusal=BadRequestError(mine.error))  # 4.3.1: a 500 wrapping this 400
                if mine.outcome is PinOutcome.UNSATISFIABLE and mine.error:
                    if not repeats_failure(own_version):
                        continue  # the worker the request goes to refuses it itself, every time
                    # the worker the request goes to refuses it, as Connect does (4.1 to 4.3 with a 500 from
                    # the second time on): its answer, the pin hidden from it
                    hidden.add(s.key.version_key)
                    problems.extend(_both_keys(mine, mine.error))
                    continue
            if s.unparseable() is not None:
                continue  # the worker answers it (as the same 400 everywhere)
            refused = s.connect_refusal()
            if refused is not None:
                if s.key.is_connector and refused.error:
                    problems.extend(_both_keys(refused, refused.error))
                continue  # a converter's, transformation's or predicate's: the worker answers it right
            problems.extend(_not_holding(s))
        return CheckResult(tuple(problems), hidden_from_worker=frozenset(hidden))

    def _emulated_check(self, spreads: list[PinSpread]) -> CheckResult:
        problems: list[ConfigProblem] = []
        for s in spreads:
            bad = s.unparseable()
            if bad is not None and bad.error:
                if s.key.is_connector:  # AbstractHerder.validateConnectorConfig: a BadRequestException
                    return CheckResult(refusal=BadRequestError(bad.error))
                problems.append(ConfigProblem(s.key.version_key, bad.error, connect_rule=True))
                continue
            refused = s.connect_refusal()
            if refused is not None and refused.error:
                problems.extend(_both_keys(refused, refused.error))
                continue
            problems.extend(_not_holding(s))
        return CheckResult(tuple(problems))

    # -- GET /connector-plugins/{p}/config?version= -------------------------------------------------
    async def plugin_config(self, plugin: str, spec: str | None) -> Forward[None] | Refusal:
        """4.1+ answers it; before, the sidecar answers a version it cannot serve as 4.1 does (400s), and
        forwards the others (the worker describes the newest version, the one it loads)."""
        if spec is None or await self._native():
            return Forward()
        try:
            requirement = parse_requirement(spec)
        except InvalidVersionSpecificationError:
            return Refusal(BadRequestError(invalid_specification_message(spec)), SIDECAR)
        plugins = await self.catalog.current()
        class_name = plugins.class_name(plugin, ALL_TYPES)
        if class_name is None or requirement is None:
            return Forward()  # the worker's own 404, or the newest version
        installed = plugins.versions(class_name, ALL_TYPES)
        known = [v for v in installed if v is not None]
        if len(known) < len(installed):
            return Forward(warnings=(f"{self._worker()} does not report the versions of {class_name}: not checked",))
        selected = select_version(requirement, known)
        if selected is None:
            return Refusal(BadRequestError(no_matching_version_message(class_name, requirement, known)), SIDECAR)
        if selected != known[-1]:
            message = (
                f"Plugin {class_name} matches the version range {requirement} only in version {selected}, but "
                f"{self._worker()} loads only the newest installed version, {known[-1]}"
            )
            return Refusal(BadRequestError(message), SIDECAR)
        return Forward()

    # -- the version in statuses (4.1+ reports it; before, the installed version that runs) --------
    def version_on(self, config: Config | None) -> VersionOn:
        """The version of the connector of ``config`` that a worker before 4.1 runs, by the worker's id: its
        newest installed one there (None where that worker's plugins are unknown)."""
        connector_class = (config or {}).get("connector.class") or ""
        newest = self.workers.newest_connector
        found: dict[str | None, str | None] = {}  # per worker: a connector's tasks run on a few workers

        def on(worker: str | None) -> str | None:
            if worker not in found:
                found[worker] = newest(worker, connector_class) if connector_class else None
            return found[worker]

        return on

    def revision(self) -> object:
        """Changes when a version shown in a status may change: what is known of the workers' plugins."""
        return self.workers.revision()

    def with_versions(self, state: ConnectorStateView, config: Config | None) -> ConnectorStateView:
        on = self.version_on(config)
        tasks = tuple((task, _versioned(entry, on)) for task, entry in state.tasks)
        return dataclasses.replace(state, connector=_versioned(state.connector, on), tasks=tasks)

    def task_with_version(self, entry: StateEntry, config: Config | None) -> StateEntry:
        return _versioned(entry, self.version_on(config))

    def amend_status(self, config_of: ConfigOf) -> Amend:
        """For a worker's own ``GET /connectors/{c}/status`` JSON: the versions added as 4.1+ shows them."""

        async def amend(body: Any) -> Any:
            if not isinstance(body, dict) or not isinstance(body.get("name"), str):
                return body
            await self.catalog.current()
            return add_versions_json(body, self.version_on(await config_of(body["name"])))

        return amend

    def amend_task(self, name: str, config_of: ConfigOf) -> Amend:
        """For a worker's own ``GET /connectors/{c}/tasks/{t}/status`` JSON."""

        async def amend(body: Any) -> Any:
            await self.catalog.current()
            return _state_json(body, self.version_on(await config_of(name)))

        return amend

    def amend_listing(self, config_of: ConfigOf) -> Amend:
        """For a worker's own ``GET /connectors?expand=status`` JSON (with ``expand=info``, its configs)."""

        async def amend(body: Any) -> Any:
            if not isinstance(body, dict):
                return body
            await self.catalog.current()
            out = {}
            for name, expanded in body.items():
                status = expanded.get("status") if isinstance(expanded, dict) else None
                if isinstance(status, dict):
                    info = expanded.get("info")
                    config = info.get("config") if isinstance(info, dict) else await config_of(name)
                    expanded = {**expanded, "status": add_versions_json(status, self.version_on(config))}
                out[name] = expanded
            return out

        return amend


def _not_holding(s: PinSpread) -> tuple[ConfigProblem, ...]:
    """The sidecar's own problem with a pin that does not hold on every worker that can run it (on one
    worker: an older version only, or versions it does not report, in the words of that case)."""
    failing = s.not_holding
    if not failing or s.not_installed_anywhere():
        return ()  # the worker's own error (no such plugin)
    if len(s.pins) == 1:
        (pin,) = failing
        r, label = pin.resolution, f"Connect {pin.worker_version}" if pin.worker_version else "this worker"
        if r.outcome is PinOutcome.OLDER_ONLY:
            return (ConfigProblem(r.key.version_key, older_only_message(r, label), recommended=(r.runs or "",)),)
        if r.outcome is PinOutcome.VERSIONS_UNKNOWN:
            return (ConfigProblem(r.key.version_key, versions_unknown_message(r, label)),)
        return ()
    return (ConfigProblem(s.key.version_key, spread_message(s)),)


def _both_keys(r: PinResolution, message: str) -> tuple[ConfigProblem, ...]:
    """Connect's attribution of an unsatisfiable pin: the class key and the version key, the installed
    versions recommended on the version key (AbstractHerder.invalidVersionedConnectorValidation)."""
    return (
        ConfigProblem(r.key.class_key, message, connect_rule=True),
        ConfigProblem(r.key.version_key, message, recommended=r.installed, connect_rule=True),
    )


def _versioned(entry: StateEntry, on: VersionOn) -> StateEntry:
    if entry.version_field:
        return entry
    shown = None if entry.state in NO_VERSION_STATES else on(entry.worker_id)
    return dataclasses.replace(entry, version=shown, version_field=True)


def _state_json(entry: Any, on: VersionOn) -> Any:
    """ConnectorStateInfo.AbstractState's field order: (id,) state, worker_id, version, trace."""
    if not isinstance(entry, dict) or "version" in entry:
        return entry
    worker = entry.get("worker_id")
    shown = None if entry.get("state") in NO_VERSION_STATES else on(worker if isinstance(worker, str) else None)
    out = {k: v for k, v in entry.items() if k != "trace"}
    out["version"] = shown
    if "trace" in entry:
        out["trace"] = entry["trace"]
    return out


def add_versions_json(status: dict[str, Any], on: VersionOn) -> dict[str, Any]:
    """A connector status in Connect's JSON with ``version`` on the connector and each task: the version on
    the worker that runs it (``on``: by its ``worker_id``)."""
    out = dict(status)
    out["connector"] = _state_json(status.get("connector"), on)
    if isinstance(status.get("tasks"), list):
        out["tasks"] = [_state_json(task, on) for task in status["tasks"]]
    return out


__all__ = ["GroupMembers", "PluginVersions", "VersionOn", "add_versions_json"]
