"""The composition root: everything the sidecar runs is built here, from the settings, in order; started
in that order and stopped in reverse, a partial start undone (``root.running``, as Connect's
``ConnectDistributed.startConnect`` reads top to bottom: stores, herder, REST server).

    clients (the write path to Kafka, the workers' client, access, the status writer) -> the Kafka side,
    built or not in one place (``kafka_side``: the view, the config writer, the sidecars' topic, the fence,
    the presence, the membership) -> the capabilities -> the features on top (``features``: the read rule,
    one facade per feature, the herder)

- ``root``: ``running(settings, metrics)``, an async context manager yielding the ``Runtime``, the typed
  state the HTTP layer's lifespan hands its handlers; ``transport`` and ``status_producer`` put fakes under
  the real upstream client and status writer (the unit tests' seams);
- ``clients``: the clients every part is built on, and the ``build_*`` functions the tests build one with;
- ``kafka_side``: the Kafka side, decided once (``KafkaSide`` with a view, ``NoKafkaSide`` without);
- ``features``: the features on the clients and the side;
- ``meetings``: what one feature is given of another (plan and the history's rollback write through the
  configs feature; auto-restart's restarts in the audit log).
"""

from .clients import build_audit_sink, build_kafka_writes, build_status_writer, build_upstream, build_view
from .root import Runtime, running

__all__ = [
    "Runtime",
    "build_audit_sink",
    "build_kafka_writes",
    "build_status_writer",
    "build_upstream",
    "build_view",
    "running",
]
