"""``python -m spark_jobs.topic_audit``: which connectors used which topics, and when.

From the status topic's KIP-558 topic records and their tombstones, the config topic and the broker's
topic metadata: per topic, the connectors that used it, first and last seen, resets. Findings: topics no
connector has used for a given period (``--unused-after``); topics that exist with no connector; sink
connectors whose ``topics`` or ``topics.regex`` name topics that never became active; topics a source
connector's creation rules (KIP-158) would have created with other partitions, replication factor or
cleanup policy than they have; from the config history the sidecars keep (their own topic), each
connector's earlier configs and the topics only those named (``--snapshot``: as exported). And the
timeline of connector and task state changes.

Writes ``<out>/topic-audit.json`` and ``<out>/tables/*`` (Parquet).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from control_plane.rules.times import iso

from . import transforms as T
from .job import Inputs, expected_records, load, parse_duration, parser, prepare, resolve, run, start_spark
from .kafka_admin import broker_facts
from .kept import keep, run_frames
from .progress import Progress
from .report import finding, rows, write_json, write_tables
from .session import existing_session
from .transforms.driver_codec import local_frame
from .transforms.topics import BROKER_TOPICS_SCHEMA

JOB = "topic-audit"
DEFAULT_OUT = "reports/topic-audit"
DEFAULT_UNUSED = "7d"


def build_parser() -> argparse.ArgumentParser:
    p = parser(JOB, "Audit which Kafka Connect connectors used which topics, and when.", DEFAULT_OUT)
    p.add_argument(
        "--unused-after",
        "--idle-after",  # its former name
        dest="unused_after",
        default=DEFAULT_UNUSED,
        help=f"report topics no connector has used for this long: 90s, 15m, 12h, 7d (default: {DEFAULT_UNUSED})",
    )
    p.add_argument("--ignore-topics", help="a regex of topic names never to report as without connector")
    return p


def audit(args: argparse.Namespace) -> int:
    target = resolve(args, use_sidecar=False)
    progress = Progress(JOB, 5)
    online, ends = prepare(args, target, progress, history=True)
    unused_ms = parse_duration(args.unused_after)
    owned = existing_session() is None  # a test process shares its one session
    spark = start_spark(args, JOB, progress, kafka=args.snapshot is None, records=expected_records(args, ends))
    try:
        with run_frames():  # its own kept frames released, not the shared session's others (kept.py)
            inputs = load(args, spark, target, progress, ends, online, roles=("config", "status", "history"))
            report = _audit(args, inputs, unused_ms, progress)
    finally:
        if owned:
            spark.stop()
    _print_summary(report, args)
    return 0


def _audit(args: argparse.Namespace, inputs: Inputs, unused_ms: int, progress: Progress) -> dict[str, Any]:
    spark, target, limit, status = inputs.spark, inputs.target, args.max_findings, inputs.status
    assert status is not None  # read: load's roles
    progress.step("auditing topic usage")
    connectors = keep(T.connector_configs(inputs.config), StorageLevel.MEMORY_AND_DISK)
    usage = keep(T.topic_usage(status, T.connector_events(inputs.config)), StorageLevel.MEMORY_AND_DISK)
    skipped_sections: dict[str, str] = {}
    broker: DataFrame | None = None
    on_broker: int | None = None
    if inputs.online:
        facts = broker_facts(target.aiokafka_kwargs, [], None, args.kafka_timeout_s)
        broker = local_frame(spark, [tuple(vars(t).values()) for t in facts.topics], BROKER_TOPICS_SCHEMA)
        on_broker = len(facts.topics)
    else:
        for name in ("topics_without_connector", "creation_mismatches"):
            skipped_sections[name] = "offline: the broker's topic metadata was not read"
    summary = keep(T.topics_summary(usage, broker), StorageLevel.MEMORY_AND_DISK)
    references = T.sink_topic_references(connectors, broker)
    timeline = keep(T.state_timeline(status), StorageLevel.MEMORY_AND_DISK)

    findings: dict[str, dict[str, Any]] = {}
    findings["topics_unused_by_connectors"] = finding(
        T.topics_unused_by_connectors(summary, inputs.now_ms, unused_ms), limit, ["last_used", "topic"]
    )
    findings["topics_unused_by_connectors"]["unused_after"] = args.unused_after
    if broker is not None:
        findings["topics_without_connector"] = finding(
            T.topics_without_connector(summary, references, list(target.topics.values()), args.ignore_topics),
            limit,
            ["topic"],
        )
        findings["creation_mismatches"] = finding(
            T.creation_mismatches(connectors, usage, broker, target.topic_creation_enable),
            limit,
            ["connector", "topic"],
        )
        if not target.topic_creation_enable:
            findings["creation_mismatches"]["note"] = "topic.creation.enable=false on the worker: no rules apply"
    findings["sinks_never_active_topics"] = finding(
        T.sinks_never_active(references, usage, broker), limit, ["connector", "topic"]
    )
    versions, history = _history(inputs, limit, skipped_sections)
    if versions is not None:
        findings["topics_only_earlier_configs_named"] = finding(
            T.topics_only_earlier_configs_named(versions, references, broker), limit, ["topic", "connector"]
        )

    # counted before the tables are written: the count builds the kept timeline (a window over every state
    # record) in parallel tasks, where the one task writing its table (write_tables) would build it alone
    state_changes = timeline.count()
    progress.step(f"writing {args.out}")
    tables = write_tables(
        args.out,
        {
            "topic_usage": usage,
            "topics": summary,
            "state_timeline": timeline,
            "connectors": connectors.drop("properties"),
            **({"config_history": versions} if versions is not None else {}),
        },
    )
    used = summary.filter(F.size("connectors") > 0)
    topics = finding(used, limit, ["topic"])  # its count: the topics used
    report = {
        "job": JOB,
        "generated_at": iso(int(time.time() * 1000)),
        "now": iso(inputs.now_ms),
        "source": inputs.source,
        "records": inputs.counts,
        "skipped_records": inputs.skipped,
        "summary": {
            "topics_used": topics["count"],
            "topics_in_use_now": used.filter(F.size("active_connectors") > 0).count(),
            "topics_on_broker": on_broker,
            "connector_topic_pairs": usage.count(),
            "state_changes": state_changes,
            "config_versions": history["versions"] if history else None,
            "findings": {name: f["count"] for name, f in findings.items()},
        },
        "findings": findings,
        "topics": topics,
        "connector_states": finding(T.state_summary(timeline), limit, ["connector"]),
        "config_history": history,
        "recent_state_changes": rows(T.recent_changes(timeline), 50),
        "skipped_sections": skipped_sections,
        "tables": tables,
        "elapsed_s": round(progress.elapsed_s, 1),
    }
    write_json(args.out / "topic-audit.json", report)
    return report


def _history(
    inputs: Inputs, limit: int, skipped_sections: dict[str, str]
) -> tuple[DataFrame | None, dict[str, Any] | None]:
    """The connectors' versions the config history keeps, and the report's section of them (per connector:
    how many, the first and the last kept); None with the reason in ``skipped_sections`` when there is none."""
    topic = inputs.target.history_topic
    if inputs.history is None:
        skipped_sections["config_history"] = f"no config history: the sidecars' topic {topic} does not exist"
        return None, None
    if not inputs.counts.get("history"):
        where = "the snapshot" if inputs.source.get("kind") == "snapshot" else f"the sidecars' topic {topic}"
        skipped_sections["config_history"] = f"no config history in {where}"
        return None, None
    versions = keep(T.config_versions(inputs.history), StorageLevel.MEMORY_AND_DISK)
    per_connector = versions.groupBy("connector").agg(
        F.count("*").alias("versions"),
        F.min("changed_at").alias("first_kept"),
        F.max("changed_at").alias("last_change"),
        F.max_by("change", "version").alias("last"),
    )
    section = finding(per_connector, limit, ["connector"])
    return versions, {"topic": topic, "versions": versions.count(), "connectors": section}


def _print_summary(report: dict[str, Any], args: argparse.Namespace) -> None:
    s, f = report["summary"], report["findings"]
    on_broker = "" if s["topics_on_broker"] is None else f" of {s['topics_on_broker']} on the broker"
    lines = [
        f"{JOB}: {s['topics_used']} topic(s) used by connectors{on_broker}, {s['topics_in_use_now']} in use now; "
        f"{s['state_changes']} state change(s)",
        f"  unused by connectors for {f['topics_unused_by_connectors']['unused_after']:<6} "
        f"{f['topics_unused_by_connectors']['count']} topic(s)",
    ]
    if "topics_without_connector" in f:
        lines.append(f"  topics without a connector     {f['topics_without_connector']['count']}")
    lines.append(f"  sink topics never active       {f['sinks_never_active_topics']['count']}")
    if "topics_only_earlier_configs_named" in f:
        lines.append(f"  topics only earlier configs named {f['topics_only_earlier_configs_named']['count']}")
    if s["config_versions"] is not None:
        lines.append(f"  config versions in the history {s['config_versions']}")
    if "creation_mismatches" in f:
        lines.append(f"  topic-creation mismatches      {f['creation_mismatches']['count']}")
    for name, reason in report["skipped_sections"].items():
        lines.append(f"  {name}: skipped ({reason})")
    lines.append(f"report: {args.out / 'topic-audit.json'}; tables: {args.out / 'tables'} ({report['elapsed_s']}s)")
    print("\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run(JOB, lambda: audit(args))


if __name__ == "__main__":
    sys.exit(main())
