"""Which Connect cluster a job looks at, resolved once at start.

The sidecar's own settings do the work (:func:`control_plane.settings.load_settings`): the worker's
properties file gives ``bootstrap.servers``, the three internal topic names, ``consumer.group.id``,
``consumer.bootstrap.servers``, ``topic.creation.enable`` and the Kafka client security settings (and the
sidecars' topic, where the config history is, from the sidecar's ``SIDECARS_TOPIC`` or ``group.id``);
``CONTROL_PLANE_*`` variables and command-line options win over it. With no properties file given, the
local stack's is used, found through ``.stack/env`` (written by ``make stack-up``), together with its
sidecar's URL.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from control_plane.settings import SettingsError, load_settings

ROOT = Path(__file__).resolve().parents[1]
STACK_ENV = Path(os.environ.get("STACK_DIR", ROOT / ".stack")) / "env"


# records a poll of Spark's Kafka source hands over at most (the consumer's max.poll.records, 500 by
# default). Spark's InternalKafkaConsumer.fetch follows every poll with the partition's available range
# (seekToBeginning, position, seekToEnd, position: two ListOffsets requests to the broker), so at 500 a
# poll the 10 M records of the bench's offsets topic cost 40,000 round trips, and the read's tasks spent
# more time waiting for them than on the CPU. A poll hands over records already fetched (a fetch brings
# at most max.partition.fetch.bytes, 1 MiB, of the task's one partition), so a larger count holds about
# one fetch's records at a time
KAFKA_POLL_RECORDS = 10_000


class TargetError(ValueError):
    """The cluster to look at cannot be determined; the message says what to pass."""


@dataclass(frozen=True)
class Target:
    bootstrap: str
    config_topic: str
    status_topic: str
    offsets_topic: str
    consumer_group_id: str | None = None  # the worker-wide sink group override, if any
    consumer_bootstrap: str | None = None  # the worker's consumer.bootstrap.servers: where its sinks read
    topic_creation_enable: bool = True
    sidecar_url: str | None = None
    worker_properties: str | None = None
    client_properties: dict[str, str] = field(default_factory=dict)  # security.protocol, sasl.*, ssl.*
    aiokafka_kwargs: dict[str, Any] = field(default_factory=dict)
    history_topic: str | None = None  # the sidecars' own topic, where they keep the config history

    @property
    def topics(self) -> dict[str, str]:
        """role -> topic name: the three internal topics"""
        return {"config": self.config_topic, "status": self.status_topic, "offsets": self.offsets_topic}

    def topics_of(self, roles: tuple[str, ...]) -> dict[str, str]:
        """role -> topic name of ``roles``: the internal topics' and ``history`` (the sidecars' topic)."""
        every = {**self.topics, **({"history": self.history_topic} if self.history_topic else {})}
        return {role: name for role, name in every.items() if role in roles}

    def spark_kafka_options(self) -> dict[str, str]:
        options = {
            "kafka.bootstrap.servers": self.bootstrap,
            "kafka.isolation.level": "read_committed",
            # a batch read knows its end offsets: a fetch need not wait for more (the default 500 ms per
            # fetch makes a sparse, compacted topic crawl)
            "kafka.fetch.max.wait.ms": "20",
            "kafka.max.poll.records": str(KAFKA_POLL_RECORDS),
        }
        options.update({f"kafka.{k}": v for k, v in self.client_properties.items()})
        return options


def read_stack_env(path: Path = STACK_ENV) -> dict[str, str]:
    """``.stack/env``: ``export KEY=value`` lines, shell-quoted."""
    env: dict[str, str] = {}
    for line in path.read_text().splitlines():
        line = line.removeprefix("export ").strip()
        if "=" in line:
            key, _, value = line.partition("=")
            env[key] = " ".join(shlex.split(value))
    return env


def resolve_target(
    *,
    worker_properties: str | None = None,
    bootstrap: str | None = None,
    sidecar_url: str | None = None,
    use_sidecar: bool = True,
    stack_env: Path = STACK_ENV,
    kafka: bool = True,
) -> Target:
    """The cluster of the job; ``kafka``: whether it will ask Kafka, so needs its client's settings (an
    offline run does not: it neither builds them nor imports the Kafka client, aiokafka)."""
    if kafka:
        from control_plane.kafka_config import client_kwargs  # with aiokafka: only a run that asks Kafka
    stack_sidecar = None
    if worker_properties is None and not os.environ.get("CONTROL_PLANE_WORKER_PROPERTIES") and stack_env.exists():
        env = read_stack_env(stack_env)
        worker_properties = env.get("CONNECT_PROPERTIES")
        stack_sidecar = env.get("SIDECAR_URL")
    try:
        settings = load_settings(worker_properties=worker_properties, bootstrap_servers=bootstrap)
    except SettingsError as err:
        raise TargetError(str(err)) from None
    topics = {
        "config.storage.topic": settings.config_storage_topic,
        "status.storage.topic": settings.status_storage_topic,
        "offset.storage.topic": settings.offset_storage_topic,
    }
    missing = [key for key, value in topics.items() if not value]
    if missing:
        hint = (
            "pass --worker-properties (the Connect worker's properties file), set CONTROL_PLANE_* variables, "
            "or start the local stack with `make stack-up`"
        )
        raise TargetError(f"the internal topic names are unknown ({', '.join(missing)}): {hint}")
    return Target(
        bootstrap=settings.bootstrap_servers,
        config_topic=settings.config_storage_topic or "",
        status_topic=settings.status_storage_topic or "",
        offsets_topic=settings.offset_storage_topic or "",
        consumer_group_id=settings.consumer_group_id,
        consumer_bootstrap=settings.worker_consumer_bootstrap_servers,
        topic_creation_enable=settings.topic_creation_enable,
        sidecar_url=(sidecar_url or stack_sidecar) if use_sidecar else None,
        worker_properties=worker_properties or settings.worker_properties,
        client_properties=dict(settings.kafka_client_properties),
        aiokafka_kwargs=client_kwargs(settings) if kafka else {},
        history_topic=settings.sidecars_topic_name,
    )
