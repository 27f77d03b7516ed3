"""Pure DataFrame-in, DataFrame-out transforms of the two jobs (no reading, no writing)."""

from .compare import history_view, running_connectors, sidecar_disagreements
from .connectors import connector_configs, connector_events
from .creation import creation_mismatches
from .decode import (
    decode_config_records,
    decode_history_records,
    decode_offsets_per_record,
    decode_status_records_per_record,
    partition_aggregates,
    record_counts,
    skipped,
)
from .history import config_versions, topics_only_earlier_configs_named
from .jvm_decode import HIGHEST_PARTITION, OffsetParts, clustered, decode_offset_parts, with_normal
from .jvm_status import decode_status_records
from .offsets import (
    PARTITION_STATS_SCHEMA,
    first_missing_offsets,
    key_summary,
    non_canonical_keys,
    offset_history,
    offsets_now,
    offsets_went_backwards,
    orphaned_offsets,
    partition_stats,
    source_restore_plan,
    step_candidates,
)
from .sinks import orphaned_sink_offsets, sink_offsets, sink_restore_plan
from .timeline import recent_changes, state_summary, state_timeline
from .topics import (
    sink_topic_references,
    sinks_never_active,
    topic_usage,
    topics_summary,
    topics_unused_by_connectors,
    topics_without_connector,
)

__all__ = [
    "HIGHEST_PARTITION",
    "PARTITION_STATS_SCHEMA",
    "OffsetParts",
    "clustered",
    "config_versions",
    "connector_configs",
    "connector_events",
    "creation_mismatches",
    "decode_config_records",
    "decode_history_records",
    "decode_offset_parts",
    "decode_offsets_per_record",
    "decode_status_records",
    "decode_status_records_per_record",
    "first_missing_offsets",
    "history_view",
    "key_summary",
    "non_canonical_keys",
    "offset_history",
    "offsets_now",
    "offsets_went_backwards",
    "orphaned_offsets",
    "orphaned_sink_offsets",
    "partition_aggregates",
    "partition_stats",
    "recent_changes",
    "record_counts",
    "running_connectors",
    "sidecar_disagreements",
    "sink_offsets",
    "sink_restore_plan",
    "sink_topic_references",
    "sinks_never_active",
    "skipped",
    "source_restore_plan",
    "state_summary",
    "state_timeline",
    "step_candidates",
    "topic_usage",
    "topics_only_earlier_configs_named",
    "topics_summary",
    "topics_unused_by_connectors",
    "topics_without_connector",
    "with_normal",
]
