"""Rules about a connector that Connect applies from its configuration alone: its type and its sink
consumer group. Pure; the sidecar and the Spark jobs both decide with these functions.

- Type (AbstractHerder.connectorType): ``sink`` or ``source`` from the plugin class (``SinkConnector`` or
  ``SourceConnector``); the worker's plugin list says which, under every alias Connect accepts for a class
  (``PluginUtils.simpleName`` and ``prunedName``), and a class the worker does not have is ``unknown``
  (Connect fails to load it). Without that list: the class name's suffix where it has
  one (``MirrorSourceConnector`` is a source although it carries ``topics``), else a connector with a
  non-empty ``topics`` or ``topics.regex`` is a sink (SinkConnectorConfig.validate requires one of them).
- Sink group (Worker.baseConsumerConfigs): ``connect-<name>``, overridden by the worker's
  ``consumer.group.id``, overridden by the connector's ``consumer.override.group.id``.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import Literal

from .java_regex import JavaRegex, JavaRegexProblem, translate

ConnectorType = Literal["source", "sink", "unknown"]

CONNECTOR_CLASS_KEY = "connector.class"
SINK_TOPIC_KEYS = ("topics", "topics.regex")  # SinkConnectorConfig.TOPICS_CONFIG, TOPICS_REGEX_CONFIG
GROUP_OVERRIDE_KEY = "consumer.override.group.id"


def plugin_aliases(class_name: str) -> tuple[str, ...]:
    """The names Connect accepts for a connector class: the full name, the simple name, and the simple
    name without its ``Connector`` suffix (PluginUtils.simpleName, prunedName)."""
    simple = class_name.rsplit(".", 1)[-1]
    return tuple(dict.fromkeys((class_name, simple, simple.removesuffix("Connector"))))


def plugin_types(plugins: Iterable[tuple[str, str]]) -> dict[str, str]:
    """(class, type) pairs of the worker's ``GET /connector-plugins`` -> every alias -> ``source``/``sink``."""
    types: dict[str, str] = {}
    for class_name, kind in plugins:
        if kind in ("source", "sink"):
            for alias in plugin_aliases(class_name):
                types[alias] = kind
    return types


def connector_type(
    config: Mapping[str, str | None] | None, known_plugins: Mapping[str, str] | None = None
) -> ConnectorType:
    """``source``, ``sink``, or ``unknown`` (no configuration), as AbstractHerder.connectorType answers."""
    if config is None:
        return "unknown"
    class_name = (config.get(CONNECTOR_CLASS_KEY) or "").strip()
    if known_plugins:  # the worker's plugin list is authoritative: a class it lacks is "unknown" there too
        known = known_plugins.get(class_name)
        return "source" if known == "source" else "sink" if known == "sink" else "unknown"
    simple = class_name.rsplit(".", 1)[-1]
    if simple.endswith(("SourceConnector", "Source")):
        return "source"
    if simple.endswith(("SinkConnector", "Sink")):
        return "sink"
    return "sink" if any((config.get(key) or "").strip() for key in SINK_TOPIC_KEYS) else "source"


def sink_topic_via(config: Mapping[str, str | None] | None, topic: str) -> str | None:
    """How a sink's config names ``topic``: ``topics`` (SinkConnectorConfig.TOPICS_CONFIG, a LIST: split at
    commas, each entry trimmed) or ``topics.regex`` (its Pattern matched against the whole name, as the sink's
    consumer subscription does); None for a source, a config that names it neither way, or a pattern the
    sidecar does not translate exactly (``java_regex``)."""
    if config is None or connector_type(config) != "sink":
        return None
    if topic in (entry.strip() for entry in (config.get("topics") or "").split(",")):
        return "topics"
    regex = (config.get("topics.regex") or "").strip()
    pattern = _subscription(regex) if regex else None
    return "topics.regex" if pattern is not None and pattern.fullmatch(topic) else None


@functools.lru_cache(maxsize=4096)
def _subscription(regex: str) -> JavaRegex | None:
    """A sink's ``topics.regex``, translated once (a history asks the same patterns again and again)."""
    try:
        return translate(regex)
    except JavaRegexProblem:
        return None


OFFSET_RESET_OVERRIDE = "consumer.override.auto.offset.reset"


def sink_offset_reset(config: Mapping[str, str | None] | None, worker_reset: str | None) -> str:
    """Where a sink's consumer starts on a partition its group has no committed offset for: the connector's
    ``consumer.override.auto.offset.reset``, else the worker's ``consumer.auto.offset.reset``, else
    ``earliest``, which Connect sets for every sink consumer (Worker.baseConsumerConfigs)."""
    chosen = (config or {}).get(OFFSET_RESET_OVERRIDE) or worker_reset or "earliest"
    return chosen.strip().lower()


def sink_group_id(name: str, config: Mapping[str, str | None] | None, worker_group_id: str | None) -> str:
    """The consumer group of sink connector ``name`` (Worker.baseConsumerConfigs)."""
    return (config or {}).get(GROUP_OVERRIDE_KEY) or worker_group_id or f"connect-{name}"


__all__ = [
    "CONNECTOR_CLASS_KEY",
    "CONSUMER_BOOTSTRAP_OVERRIDE",
    "GROUP_OVERRIDE_KEY",
    "OFFSET_RESET_OVERRIDE",
    "PRODUCER_BOOTSTRAP_OVERRIDE",
    "SINK_TOPIC_KEYS",
    "ConnectorType",
    "client_cluster",
    "connector_type",
    "on_another_cluster",
    "plugin_aliases",
    "plugin_types",
    "sink_group_id",
    "sink_offset_reset",
    "sink_topic_via",
]


# -- which Kafka cluster a connector's clients use ---------------------------------------------------
PRODUCER_BOOTSTRAP_OVERRIDE = "producer.override.bootstrap.servers"
CONSUMER_BOOTSTRAP_OVERRIDE = "consumer.override.bootstrap.servers"


def _servers(value: str | None) -> frozenset[str]:
    return frozenset(part.strip().lower() for part in (value or "").split(",") if part.strip())


def client_cluster(
    config: Mapping[str, str | None] | None,
    override_key: str,
    worker_bootstrap: str,
    worker_client_bootstrap: str | None,
) -> str:
    """The ``bootstrap.servers`` a connector's producer (``producer.override.``) or consumer
    (``consumer.override.``) uses: the connector's override, else the worker's ``producer.``/``consumer.``
    prefixed setting, else the worker's own (Worker.baseProducerConfigs, baseConsumerConfigs)."""
    return (config or {}).get(override_key) or worker_client_bootstrap or worker_bootstrap


def on_another_cluster(client_bootstrap: str, worker_bootstrap: str) -> bool:
    """Whether a client's bootstrap servers name other brokers than the worker's (compared as sets)."""
    return _servers(client_bootstrap) != _servers(worker_bootstrap)
