"""Spark batch jobs over Kafka Connect's internal topics: offsets reconciliation and topic-usage audit.

Each job reads (:mod:`.read`, :mod:`.kafka_admin`, :mod:`.sidecar_view`), transforms with pure
DataFrame-in, DataFrame-out functions (:mod:`.transforms`) and writes (:mod:`.report`); the entry points
:mod:`.offsets_reconcile` and :mod:`.topic_audit` wire them together. Records are decoded with the
sidecar's own codecs (:mod:`control_plane.codecs`) inside the Python workers.
"""
