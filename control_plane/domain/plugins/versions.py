"""Versioned plugins (KIP-891) on every Connect version: the pins of a configuration, checked on their way
to a worker (a ``ConfigCheck`` of ``config_checks``), ``?version=`` of the plugin config endpoint, the
version in statuses, and what each pin resolves to (the sidecar's own report).

Native (4.1+): the workers do it; the sidecar checks only what Connect 4.3.1 gets wrong. Its validation of
an unsatisfiable ``connector.plugin.version`` answers the KIP's answer only the first time per worker, class
name and range: ``CachedConnectors`` keeps the failure and throws it again without the available versions,
and ``AbstractHerder.invalidVersionedConnectorValidation`` then fails with a 500 NullPointerException (on
validate, create, update and PATCH alike). So the sidecar hides that pin from the worker and puts Connect's
errors (on ``connector.class`` and the pin, the installed versions recommended) on the worker's validation
of the rest. And a connector pin that is no version range makes 4.3.1's validate answer a 500 wrapping its
own 400 ``BadRequestException`` (create and update answer the 400): the sidecar answers the 400.

Emulated (before 4.1, which always loads the newest installed version and ignores the keys): a pin the
newest installed version satisfies goes through; a pin no installed version satisfies, or that is no range,
is refused with Connect 4.3.1's answers; a pin only an older installed version satisfies is refused by the
sidecar's own check (the worker would run the newest); a pin of a plugin whose versions the worker does not
report (converters, transformations and predicates before 4.1) cannot be checked and is refused by the
sidecar's own check too (``config_checks=warn`` lets both through with a warning).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ...rules.maven_range import (
    InvalidVersionSpecificationError,
    invalid_specification_message,
    no_matching_version_message,
    parse_requirement,
    select_version,
)
from ...rules.plugin_versions import (
    CONNECTOR_TYPES,
    PinOutcome,
    PinResolution,
    older_only_message,
    plugin_keys,
    resolve,
    versions_unknown_message,
)
from ...view import ConnectorStateView, StateEntry
from ..capabilities import Capabilities, Feature, Mode
from ..config_checks import NOTHING, CheckResult, ConfigSubject, RequestKind
from ..config_infos import ConfigProblem
from ..connect_api import Config
from ..errors import BadRequestError
from ..outcomes import SIDECAR, Forward, Refusal
from ..ports import Amend, ConfigOf
from .catalog import PluginCatalog, PluginList

ALL_TYPES = ("source", "sink", "converter", "header_converter", "transformation", "predicate")
# a task or connector that is not running has no loaded plugin: 4.1+ reports its version as null
NO_VERSION_STATES = frozenset({"UNASSIGNED"})


class PluginVersions:
    def __init__(self, capabilities: Capabilities, catalog: PluginCatalog) -> None:
        self._capabilities = capabilities
        self.catalog = catalog

    # -- who does it ----------------------------------------------------------------------------
    async def _native(self) -> bool:
        return await self._capabilities.mode(Feature.PLUGIN_VERSIONS) is not Mode.EMULATED

    def emulated(self) -> bool:
        """The sidecar does it now: a worker reported an older version (or the setting forces it)."""
        feature = Feature.PLUGIN_VERSIONS
        return self._capabilities.decision(feature).mode is Mode.EMULATED and self._capabilities.decided(feature)

    def _worker(self) -> str:
        version = self._capabilities.version
        return f"Connect {version}" if version else "this worker"

    async def resolutions(self, config: Config, *, native: bool | None = None) -> list[PinResolution]:
        """Every plugin of ``config`` and what its pin resolves to on this cluster."""
        side_by_side = await self._native() if native is None else native
        plugins = await self.catalog.current()
        return [self._resolve(plugins, key, side_by_side) for key in plugin_keys(config)]

    def _resolve(self, plugins: PluginList, key: Any, side_by_side: bool) -> PinResolution:
        class_name = plugins.class_name(key.plugin, key.types)
        installed = plugins.versions(class_name, key.types) if class_name else []
        return resolve(key, class_name, installed, side_by_side=side_by_side, worker_version=self._worker())

    # -- the ConfigCheck --------------------------------------------------------------------------
    async def check(self, subject: ConfigSubject) -> CheckResult:
        if not any(key.spec is not None for key in plugin_keys(subject.config)):
            return NOTHING  # nothing pinned: no plugin list needed
        native = await self._native()
        pinned = [r for r in await self.resolutions(subject.config, native=native) if r.key.spec is not None]
        return self._native_check(subject, pinned) if native else self._emulated_check(pinned)

    def _native_check(self, subject: ConfigSubject, pinned: list[PinResolution]) -> CheckResult:
        for r in pinned:
            if not r.key.is_connector:
                continue
            if r.outcome is PinOutcome.UNPARSEABLE and subject.kind is RequestKind.VALIDATE and r.error:
                return CheckResult(refusal=BadRequestError(r.error))  # 4.3.1: a 500 wrapping this 400
            if r.outcome is PinOutcome.UNSATISFIABLE and r.error:
                return CheckResult(_both_keys(r, r.error), hidden_from_worker=frozenset({r.key.version_key}))
        return NOTHING

    def _emulated_check(self, pinned: list[PinResolution]) -> CheckResult:
        problems: list[ConfigProblem] = []
        for r in pinned:
            if r.outcome is PinOutcome.UNPARSEABLE and r.error:
                if r.key.is_connector:  # AbstractHerder.validateConnectorConfig: a BadRequestException
                    return CheckResult(refusal=BadRequestError(r.error))
                problems.append(ConfigProblem(r.key.version_key, r.error, connect_rule=True))
            elif r.outcome is PinOutcome.UNSATISFIABLE and r.error:
                problems.extend(_both_keys(r, r.error))
            elif r.outcome is PinOutcome.OLDER_ONLY:
                message = older_only_message(r, self._worker())
                problems.append(ConfigProblem(r.key.version_key, message, recommended=(r.runs or "",)))
            elif r.outcome is PinOutcome.VERSIONS_UNKNOWN:
                problems.append(ConfigProblem(r.key.version_key, versions_unknown_message(r, self._worker())))
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
    def version_of(self, config: Config | None) -> str | None:
        """The version of the connector of ``config`` that an old worker runs: its newest installed one."""
        plugins = self.catalog.snapshot
        class_name = plugins.class_name((config or {}).get("connector.class") or "", CONNECTOR_TYPES)
        known = [v for v in plugins.versions(class_name, CONNECTOR_TYPES) if v] if class_name else []
        return known[-1] if known else None

    def with_versions(self, state: ConnectorStateView, config: Config | None) -> ConnectorStateView:
        version = self.version_of(config)
        tasks = tuple((task, _versioned(entry, version)) for task, entry in state.tasks)
        return dataclasses.replace(state, connector=_versioned(state.connector, version), tasks=tasks)

    def task_with_version(self, entry: StateEntry, config: Config | None) -> StateEntry:
        return _versioned(entry, self.version_of(config))

    def amend_status(self, config_of: ConfigOf) -> Amend:
        """For a worker's own ``GET /connectors/{c}/status`` JSON: the versions added as 4.1+ shows them."""

        async def amend(body: Any) -> Any:
            if not isinstance(body, dict) or not isinstance(body.get("name"), str):
                return body
            await self.catalog.current()
            return add_versions_json(body, self.version_of(await config_of(body["name"])))

        return amend

    def amend_task(self, name: str, config_of: ConfigOf) -> Amend:
        """For a worker's own ``GET /connectors/{c}/tasks/{t}/status`` JSON."""

        async def amend(body: Any) -> Any:
            await self.catalog.current()
            return _state_json(body, self.version_of(await config_of(name)))

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
                    expanded = {**expanded, "status": add_versions_json(status, self.version_of(config))}
                out[name] = expanded
            return out

        return amend


def _both_keys(r: PinResolution, message: str) -> tuple[ConfigProblem, ...]:
    """Connect's attribution of an unsatisfiable pin: the class key and the version key, the installed
    versions recommended on the version key (AbstractHerder.invalidVersionedConnectorValidation)."""
    return (
        ConfigProblem(r.key.class_key, message, connect_rule=True),
        ConfigProblem(r.key.version_key, message, recommended=r.installed, connect_rule=True),
    )


def _versioned(entry: StateEntry, version: str | None) -> StateEntry:
    if entry.version_field:
        return entry
    shown = None if entry.state in NO_VERSION_STATES else version
    return dataclasses.replace(entry, version=shown, version_field=True)


def _state_json(entry: Any, version: str | None) -> Any:
    """ConnectorStateInfo.AbstractState's field order: (id,) state, worker_id, version, trace."""
    if not isinstance(entry, dict) or "version" in entry:
        return entry
    shown = None if entry.get("state") in NO_VERSION_STATES else version
    out = {k: v for k, v in entry.items() if k != "trace"}
    out["version"] = shown
    if "trace" in entry:
        out["trace"] = entry["trace"]
    return out


def add_versions_json(status: dict[str, Any], version: str | None) -> dict[str, Any]:
    """A connector status in Connect's JSON with ``version`` on the connector and each task."""
    out = dict(status)
    out["connector"] = _state_json(status.get("connector"), version)
    if isinstance(status.get("tasks"), list):
        out["tasks"] = [_state_json(task, version) for task in status["tasks"]]
    return out


__all__ = ["PluginVersions", "add_versions_json"]
