"""KIP-891's plugin keys of a connector configuration, Connect's plugin aliases, and how one version pin
resolves against the versions a worker has installed. Pure: no I/O; the versions and ranges are
:mod:`.maven_range`'s.

- ``plugin_keys``: the (class key, version key) pairs of a configuration, as ``ConnectorConfig`` (4.1+)
  reads them: ``connector.class``/``connector.plugin.version``, ``key|value|header.converter``/
  ``...plugin.version``, ``transforms.<alias>.type``/``transforms.<alias>.plugin.version`` and the same for
  ``predicates``, for the aliases listed in ``transforms`` and ``predicates``.
- ``connect_aliases``: ``PluginUtils.computeAliases``: a plugin's simple name and its simple name without
  the suffix of its type (``prunedName``), each only when no other plugin class has it.
- ``resolve``: what Connect does with a pin (``PluginUtils.connectorVersionRequirement`` and
  ``DelegatingClassLoader#findPluginLoader``), and on a worker that cannot load an older version beside
  the newest (before 4.1: it always loads the newest and ignores the pin), what runs there.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from .maven_range import (
    InvalidVersionSpecificationError,
    no_matching_version_message,
    parse_requirement,
    select_version,
    sort_versions,
)

CONNECTOR_TYPES: tuple[str, ...] = ("source", "sink")
CONVERTER_TYPES: tuple[str, ...] = ("converter",)
HEADER_CONVERTER_TYPES: tuple[str, ...] = ("header_converter",)
TRANSFORMATION_TYPES: tuple[str, ...] = ("transformation",)
PREDICATE_TYPES: tuple[str, ...] = ("predicate",)
VERSION_SUFFIX = "plugin.version"
CONNECTOR_VERSION_KEY = "connector.plugin.version"

# PluginUtils.prunedName: the suffix cut from the simple name, per type of GET /connector-plugins
_PRUNED_SUFFIX = {
    "source": "Connector",
    "sink": "Connector",
    "converter": "Converter",
    "header_converter": "HeaderConverter",
    "transformation": "Transformation",
    "predicate": "Predicate",
}


@dataclass(frozen=True)
class PluginKey:
    """One plugin of a connector configuration: the key naming its class and the key pinning its version."""

    class_key: str
    version_key: str
    types: tuple[str, ...]  # the plugin types of GET /connector-plugins it can be
    plugin: str  # the class key's value, trimmed (a class name or an alias)
    spec: str | None  # the version key's value as given; None when absent

    @property
    def is_connector(self) -> bool:
        return self.types == CONNECTOR_TYPES


def _java_list(value: str | None) -> list[str]:
    """ConfigDef.Type.LIST: trimmed, split on commas with the blanks around them; empty is no item."""
    text = (value or "").strip()
    return [item.strip() for item in text.split(",")] if text else []


def plugin_keys(config: Mapping[str, str | None]) -> list[PluginKey]:
    """Every plugin named by ``config`` (its class key set and not blank), in Connect's order of validation."""
    pairs: list[tuple[str, str, tuple[str, ...]]] = [
        ("connector.class", CONNECTOR_VERSION_KEY, CONNECTOR_TYPES),
        ("header.converter", f"header.converter.{VERSION_SUFFIX}", HEADER_CONVERTER_TYPES),
        ("key.converter", f"key.converter.{VERSION_SUFFIX}", CONVERTER_TYPES),
        ("value.converter", f"value.converter.{VERSION_SUFFIX}", CONVERTER_TYPES),
    ]
    for prefix, kinds in (("transforms", TRANSFORMATION_TYPES), ("predicates", PREDICATE_TYPES)):
        for alias in dict.fromkeys(_java_list(config.get(prefix))):
            pairs.append((f"{prefix}.{alias}.type", f"{prefix}.{alias}.{VERSION_SUFFIX}", kinds))
    keys = []
    for class_key, version_key, types in pairs:
        plugin = (config.get(class_key) or "").strip()
        if plugin:
            keys.append(PluginKey(class_key, version_key, types, plugin, config.get(version_key)))
    return keys


def _simple_name(class_name: str) -> str:
    """``Class#getSimpleName`` from a binary name: after the last ``.`` and the last ``$``."""
    return class_name.rsplit(".", 1)[-1].rsplit("$", 1)[-1]


def _pruned_name(class_name: str, plugin_type: str) -> str:
    simple = _simple_name(class_name)
    suffix = _PRUNED_SUFFIX.get(plugin_type)
    position = simple.rfind(suffix) if suffix else -1
    return simple[:position] if position > 0 else simple


def connect_aliases(plugins: Iterable[tuple[str, str]]) -> dict[str, str]:
    """(class, type) pairs -> alias -> class, as ``PluginUtils.computeAliases`` (4.3.1): an alias that names
    two classes is no alias."""
    claimed: dict[str, set[str]] = {}
    for class_name, plugin_type in plugins:
        for alias in (_simple_name(class_name), _pruned_name(class_name, plugin_type)):
            claimed.setdefault(alias, set()).add(class_name)
    return {alias: next(iter(names)) for alias, names in claimed.items() if len(names) == 1}


class PinOutcome(StrEnum):
    NOT_INSTALLED = "not_installed"  # the worker has no such plugin: its own error, the sidecar says nothing
    LATEST = "latest"  # no version key, or ``latest``: the newest installed version
    RESOLVED = "resolved"  # a version inside the range is installed (and runs on this worker)
    UNSATISFIABLE = "unsatisfiable"  # no installed version is inside the range: Connect refuses it
    UNPARSEABLE = "unparseable"  # not a Maven version range: Connect refuses it
    OLDER_ONLY = "older_only"  # only an older version satisfies it, and this worker loads only the newest
    VERSIONS_UNKNOWN = "versions_unknown"  # the worker does not report this plugin's versions (before 4.1)


@dataclass(frozen=True)
class PinResolution:
    key: PluginKey
    class_name: str | None  # the full class name (an alias resolved); None when not installed
    installed: tuple[str, ...]  # installed versions in Connect's order (ascending)
    requirement: str | None  # the range as Connect shows it (``[1.0,2.0)``); None without one
    selected: str | None  # the version Connect 4.1+ loads for it
    runs: str | None  # the version that runs on this worker
    outcome: PinOutcome
    error: str | None  # Connect's message for a pin it refuses (UNSATISFIABLE, UNPARSEABLE)
    reason: str


def resolve(
    key: PluginKey,
    class_name: str | None,
    installed: Sequence[str | None],
    *,
    side_by_side: bool,
    worker_version: str = "this worker",
) -> PinResolution:
    """How ``key``'s pin resolves against the installed versions of ``class_name`` (None: not installed).
    ``installed`` holds None for a copy whose version the worker does not report. ``side_by_side``: the
    worker loads the version the pin selects (4.1+); otherwise it always loads the newest."""
    known = tuple(sort_versions(v for v in installed if v is not None))
    if class_name is None or not installed:
        return PinResolution(
            key, None, (), None, None, None, PinOutcome.NOT_INSTALLED, None, f"{key.plugin} is not installed"
        )
    try:
        requirement = parse_requirement(key.spec)
    except InvalidVersionSpecificationError as error:
        return PinResolution(
            key, class_name, known, None, None, None, PinOutcome.UNPARSEABLE, error.message,
            f"{key.version_key} is not a version range: {error.message}",
        )  # fmt: skip
    newest = known[-1] if known else None
    if len(known) < len(installed):  # a copy without a reported version
        if requirement is None:
            return PinResolution(
                key, class_name, known, None, None, None, PinOutcome.LATEST, None,
                f"no version pinned; {worker_version} loads the copy of {class_name} it finds (it does not "
                "report the version of such plugins)",
            )  # fmt: skip
        return PinResolution(
            key, class_name, known, str(requirement), None, None, PinOutcome.VERSIONS_UNKNOWN, None,
            f"{worker_version} does not report the versions of {class_name}: the pin cannot be checked",
        )  # fmt: skip
    if requirement is None:
        why = "latest" if key.spec is not None else f"no {key.version_key}"
        return PinResolution(
            key, class_name, known, None, newest, newest, PinOutcome.LATEST, None,
            f"{why}: the newest installed version, {newest}",
        )  # fmt: skip
    selected = select_version(requirement, known)
    if selected is None:
        message = no_matching_version_message(class_name, requirement, known)
        return PinResolution(
            key, class_name, known, str(requirement), None, None, PinOutcome.UNSATISFIABLE, message,
            f"no installed version is inside {requirement}",
        )  # fmt: skip
    if side_by_side or selected == newest:
        return PinResolution(
            key, class_name, known, str(requirement), selected, selected, PinOutcome.RESOLVED, None,
            f"{selected} is the newest installed version inside {requirement}",
        )  # fmt: skip
    return PinResolution(
        key, class_name, known, str(requirement), selected, newest, PinOutcome.OLDER_ONLY, None,
        f"{selected} is the newest installed version inside {requirement}, but {worker_version} loads only the "
        f"newest installed version, {newest} (an older version cannot run beside it before Connect 4.1)",
    )  # fmt: skip


def older_only_message(resolution: PinResolution, worker_version: str) -> str:
    """The sidecar's refusal of a pin that only an older installed version satisfies, on a worker that
    cannot load it (it loads the newest)."""
    return (
        f"Plugin {resolution.class_name} matches the version range {resolution.requirement} only in version "
        f"{resolution.selected}, but {worker_version} always loads the newest installed version, {resolution.runs}: "
        "an older version cannot run beside it before Connect 4.1"
    )


def versions_unknown_message(resolution: PinResolution, worker_version: str) -> str:
    return (
        f"Plugin {resolution.class_name}: {worker_version} does not report the versions of its installed copies, "
        f"so the version range {resolution.requirement} cannot be checked (the worker ignores it)"
    )


__all__ = [
    "CONNECTOR_TYPES",
    "CONNECTOR_VERSION_KEY",
    "PinOutcome",
    "PinResolution",
    "PluginKey",
    "connect_aliases",
    "older_only_message",
    "plugin_keys",
    "resolve",
    "versions_unknown_message",
]
