"""KIP-769 (Connect 3.2) on older workers: ``GET /connector-plugins?connectorsOnly=false`` and
``GET /connector-plugins/{p}/config``, composed of what they serve: ``GET /connector-plugins`` (the
connectors) and ``PUT /connector-plugins/{p}/config/validate`` (the definitions of a connector's keys,
and the transformations and predicates the worker has, as the recommended values of
``transforms.<alias>.type`` and ``predicates.<alias>.type``).

Mirrors Connect 4.3.1's ``ConnectorPluginsResource`` (the list: sink connectors, source connectors,
transformations, predicates, converters, header converters, each sorted by class name) and
``AbstractHerder.connectorPluginConfig`` (the plugin's own keys first, then the framework's keys it does
not redefine; 404 ``Unknown plugin <p>.``), and ``PluginUtils`` for the aliases a plugin is known by.

What an old worker does not tell, and so the sidecar finds elsewhere or cannot say:
- converters and header converters (no endpoint names them): Kafka's own, on every worker's classpath
  (``KAFKA_CONVERTERS``), and those of the workers' ``plugin.path`` when the sidecar knows it and can read
  it (``control_plane.plugin_path``, the worker's own scan redone on the class files); without a version,
  as for transformations. Their definitions cannot be composed: 501, as for transformations;
- the versions of transformations and predicates: left out, as 3.2+ shows a plugin that does not
  implement ``Versioned`` (``PluginInfo.NoVersionFilter``; the case of every transformation and predicate
  that ships with Kafka before 3.2; a third-party one that reports a version is shown without it too);
- the configuration definitions of transformations and predicates: the validate endpoint embeds them
  renumbered and regrouped (``ConfigDef.embed``: in ``sortedConfigs`` order, numbered from the embedding
  key's, the group prefixed), so the order and numbers ``ConfigDef.configKeys`` keeps are lost, and no
  other endpoint before 3.2 runs a transformation's ``config()``: refused (``Unsupported``).
The framework keys are those of the worker's own version (``name``, ``tasks.max``, ... as 2.8 defines
them), not 4.3.1's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from ...upstream import UpstreamRequest
from ..connect_api import JSON_HEADERS, validate_path
from ..definitions import FIELDS
from ..errors import NotFoundError, Unsupported, WorkerRefused
from ..ports import Workers

CONNECTOR_TYPES = ("sink", "source")
# ConnectorConfig, SinkConnectorConfig, SourceConnectorConfig (2.x to 3.1): the framework's groups; the
# framework's keys come first in a validate answer, the connector's after them
FRAMEWORK_GROUPS = frozenset({"Common", "Transforms", "Predicates", "Error Handling", "Topic Creation"})
FRAMEWORK_GROUP_PREFIXES = ("Transforms: ", "Predicates: ")
UNDEFINED_VERSION = "undefined"  # PluginUtils.UNDEFINED_VERSION
INTERNAL_PACKAGE = "org.apache.kafka.connect.runtime."  # PredicatedTransformation: not a plugin to list
ALIAS = "sidecar"
# Kafka's own converters, on the classpath of every worker from 2.0 to 3.1 (connect-api, connect-runtime
# and connect-json at those tags: the same classes throughout); header converters: those and SimpleHeaderConverter
KAFKA_CONVERTERS = frozenset(
    {
        *(f"org.apache.kafka.connect.converters.{n}Converter" for n in ("ByteArray", "Double", "Float", "Integer")),
        *(f"org.apache.kafka.connect.converters.{n}Converter" for n in ("Long", "Short")),
        "org.apache.kafka.connect.json.JsonConverter",
        "org.apache.kafka.connect.storage.StringConverter",
    }
)
KAFKA_HEADER_CONVERTERS = KAFKA_CONVERTERS | {"org.apache.kafka.connect.storage.SimpleHeaderConverter"}
# the converters and header converters of the workers' plugin.path; None: the sidecar does not know it
PathConverters = Callable[[], Awaitable[tuple[frozenset[str], frozenset[str]] | None]]


@dataclass(frozen=True)
class ListedPlugin:
    """rest/entities/PluginInfo."""

    class_name: str
    type: str
    version: str


def _simple_name(class_name: str) -> str:
    return class_name.rsplit(".", 1)[-1]


def aliases(class_name: str) -> tuple[str, ...]:
    """PluginUtils.simpleName and prunedName: ``FileStreamSinkConnector``, ``FileStreamSink``."""
    simple = _simple_name(class_name)
    for suffix in ("Connector", "Converter", "Transformation", "Predicate"):
        if simple.endswith(suffix) and len(simple) > len(suffix):
            return (simple, simple[: -len(suffix)])
    return (simple,)


def find(name: str, plugins: Sequence[ListedPlugin]) -> ListedPlugin | None:
    """The plugin ``name`` means: its class name, or an alias that no other plugin has (Plugins.pluginClass)."""
    for plugin in plugins:
        if plugin.class_name == name:
            return plugin
    matches = {p.class_name: p for p in plugins if name in aliases(p.class_name)}
    return next(iter(matches.values())) if len(matches) == 1 else None


def plugin_list(
    connectors: Sequence[ListedPlugin],
    transformations: Sequence[str],
    predicates: Sequence[str],
    converters: Sequence[str] = (),
    header_converters: Sequence[str] = (),
) -> list[ListedPlugin]:
    """ConnectorPluginsResource's order: sinks, sources, transformations, predicates, converters, header
    converters; by class name."""
    out = [p for kind in CONNECTOR_TYPES for p in sorted(connectors, key=lambda p: p.class_name) if p.type == kind]
    for kind, names in (
        ("transformation", transformations),
        ("predicate", predicates),
        ("converter", converters),
        ("header_converter", header_converters),
    ):
        listed = sorted({n for n in names if not n.startswith(INTERNAL_PACKAGE)})
        out += [ListedPlugin(n, kind, UNDEFINED_VERSION) for n in listed]
    return out


def _framework(definition: Mapping[str, Any]) -> bool:
    group = definition.get("group")
    return isinstance(group, str) and (group in FRAMEWORK_GROUPS or group.startswith(FRAMEWORK_GROUP_PREFIXES))


def config_key_info(definition: Mapping[str, Any]) -> dict[str, Any]:
    """A validate answer's ``definition`` (ConfigKeyInfo with ``order``) in 4.2+'s shape, every field of
    ``definitions.FIELDS`` present."""
    renamed = {("order_in_group" if key == "order" else key): value for key, value in definition.items()}
    return {key: renamed.get(key) for key in FIELDS} | renamed


def connector_config_keys(validated: Mapping[str, Any]) -> list[dict[str, Any]]:
    """AbstractHerder.connectorPluginConfig from a validate answer: the connector's own keys, then the
    framework's (the validate answer has the framework's first, a key the connector redefines in place)."""
    definitions = [c["definition"] for c in validated.get("configs", [])]
    split = 0
    while split < len(definitions) and _framework(definitions[split]):
        split += 1
    return [config_key_info(d) for d in (*definitions[split:], *definitions[:split])]


class PluginListings:
    """KIP-769's answers composed of what an older worker serves: ``plugins`` (the list) and ``config``
    (a connector's definitions) answer as 4.3.1 does, where they can."""

    def __init__(self, workers: Workers, path_converters: PathConverters | None = None) -> None:
        self._workers = workers
        self._path_converters = path_converters

    async def converters(self) -> tuple[frozenset[str], frozenset[str], bool]:
        """The converters and header converters: Kafka's own and the plugin path's; and whether the plugin
        path's are known."""
        found = await self._path_converters() if self._path_converters is not None else None
        converters, headers = found or (frozenset(), frozenset())
        return KAFKA_CONVERTERS | converters, KAFKA_HEADER_CONVERTERS | headers, found is not None

    async def _call(self, method: str, path: str, body: object = None) -> Any:
        raw = b"" if body is None else orjson.dumps(body)
        answer = await self._workers.forward(UpstreamRequest(method, path, headers=JSON_HEADERS, body=raw))
        if not 200 <= answer.status < 300:
            raise WorkerRefused.of(answer.status, answer.body)
        return answer.json()

    async def connectors(self) -> list[ListedPlugin]:
        listed = await self._call("GET", "/connector-plugins")
        return [ListedPlugin(p["class"], p["type"], p["version"]) for p in listed]

    async def _validate(self, connector: ListedPlugin, config: Mapping[str, str]) -> Mapping[str, Any]:
        body = {"connector.class": connector.class_name, **config}
        if connector.type == "sink":  # SinkConnectorConfig.validate: one of topics or topics.regex
            body.setdefault("topics", ALIAS)
        validated: Mapping[str, Any] = await self._call("PUT", validate_path(connector.class_name), body)
        return validated

    async def _classes(self, connectors: Sequence[ListedPlugin]) -> tuple[list[str], list[str]]:
        """The transformations and predicates: ConnectorConfig's ClassRecommender of their ``type`` keys."""
        if not connectors:
            return [], []
        validated = await self._validate(connectors[0], {"transforms": ALIAS, "predicates": ALIAS})
        found: dict[str, list[str]] = {}
        for config in validated.get("configs", []):
            found[config["definition"]["name"]] = list(config["value"].get("recommended_values") or [])
        return found.get(f"transforms.{ALIAS}.type", []), found.get(f"predicates.{ALIAS}.type", [])

    async def plugins(self) -> tuple[list[ListedPlugin], bool]:
        """The list; whether the plugin path's converters are in it."""
        connectors = await self.connectors()
        converters, headers, complete = await self.converters()
        return plugin_list(connectors, *await self._classes(connectors), sorted(converters), sorted(headers)), complete

    async def config(self, name: str) -> list[dict[str, Any]]:
        connectors = await self.connectors()
        connector = find(name, connectors)
        if connector is not None:
            return connector_config_keys(await self._validate(connector, {}))
        converters, headers, _ = await self.converters()
        other = find(name, plugin_list([], *await self._classes(connectors), sorted(converters), sorted(headers)))
        if other is None:
            raise NotFoundError(f"Unknown plugin {name}.")  # AbstractHerder.connectorPluginConfig
        raise Unsupported(
            f"The configuration definitions of {other.type} plugins ({other.class_name}) are not available "
            "from this Connect version (GET /connector-plugins/{plugin}/config is native from 3.2; before, "
            "only connectors' definitions can be composed: no endpoint runs another plugin's config())"
        )


__all__ = [
    "KAFKA_CONVERTERS",
    "KAFKA_HEADER_CONVERTERS",
    "UNDEFINED_VERSION",
    "ListedPlugin",
    "PathConverters",
    "PluginListings",
    "aliases",
    "config_key_info",
    "connector_config_keys",
    "find",
    "plugin_list",
]
