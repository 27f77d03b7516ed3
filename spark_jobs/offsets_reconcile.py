"""``python -m spark_jobs.offsets_reconcile``: reconcile every connector's offsets.

Per connector and partition, from the offsets topic's full history: the latest offset (compaction
semantics), the number of commits, the first and last commit time; for sinks, the committed group offsets
against the log start and end offsets. Findings: offsets of connectors that no longer exist; source keys
the worker would not find (bytes that differ from its encoding, one partition under several keys, a key
outside its hash's partition); offsets that went backwards; sink offsets below the log start or beyond the
log end; sink lag; connectors whose view in the sidecar disagrees with the history. And a restore plan:
the ``PATCH /connectors/{c}/offsets`` bodies that put every connector back to its offsets as of a time,
never with an entry that would skip records a sink has not read; a sink whose consumer reads another
Kafka cluster than the internal topics' is not planned (its group and topics are not on this one).

Writes ``<out>/offsets-report.json``, ``<out>/restore-plan.json`` and ``<out>/tables/*`` (Parquet).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import Row
from pyspark.sql import functions as F

from control_plane.rules.connectors import CONSUMER_BOOTSTRAP_OVERRIDE, client_cluster, on_another_cluster
from control_plane.rules.java_regex import JavaRegexProblem, translate
from control_plane.rules.times import iso

from . import transforms as T
from .job import (
    Inputs,
    expected_records,
    load,
    parse_time,
    parser,
    prepare,
    resolve,
    run,
    session_shuffle_partitions,
    start_spark,
)
from .kafka_admin import SinkSpec, broker_facts, sink_group
from .kept import keep, run_frames
from .progress import Progress
from .report import finding, finding_of_rows, write_json, write_tables
from .session import existing_session
from .sidecar_view import SidecarView, read_sidecar_view
from .target import Target
from .transforms.compare import SIDECAR_ANSWERS_SCHEMA, SIDECAR_OFFSETS_SCHEMA
from .transforms.driver_codec import local_frame
from .transforms.sinks import SINK_PARTITIONS_SCHEMA

JOB = "offsets-reconcile"
BY_HISTORY = "history_not_retained"  # the source partitions' unknown entries; the others are sinks'
DEFAULT_OUT = "reports/offsets"


def build_parser() -> argparse.ArgumentParser:
    p = parser(JOB, "Reconcile Kafka Connect offsets from the internal topics' history.", DEFAULT_OUT)
    p.add_argument("--as-of", help="the restore plan's time: ISO-8601 or ms since the epoch (default: now)")
    p.add_argument("--sidecar-url", help="the sidecar to compare with (default: the local stack's)")
    p.add_argument("--no-sidecar", action="store_true", help="skip the comparison with the sidecar")
    return p


def _sidecar_view(url: str, progress: Progress) -> SidecarView:
    progress.step(f"asking the sidecar at {url} for every connector's offsets")
    view = read_sidecar_view(url)
    unanswered = [error for name, error in view.answers if name == "*"]
    if unanswered:
        progress.note(f"the sidecar did not answer ({unanswered[0]})")
    else:
        progress.note(f"{len(view.answers)} connector(s) listed")
    return view


def _sink_specs(connectors: list[Row], target: Target) -> tuple[list[SinkSpec], dict[str, str]]:
    """The sinks whose groups and topics the driver reads, and the existing sinks not planned, with why:
    a consumer on another Kafka cluster (its group and topics are not on the one the job reads: neither
    read nor planned), or a ``topics.regex`` not translated exactly to Java's semantics (its group is
    read, but which topics it reads is not known: not planned rather than guessed)."""
    specs: list[SinkSpec] = []
    skipped: dict[str, str] = {}
    for row in (r for r in connectors if r["type"] == "sink"):
        name, props = row["connector"], row["properties"] or {}
        servers = client_cluster(props, CONSUMER_BOOTSTRAP_OVERRIDE, target.bootstrap, target.consumer_bootstrap)
        if on_another_cluster(servers, target.bootstrap):
            if row["exists"]:
                skipped[name] = (
                    f"its consumer reads another Kafka cluster ({servers}) than the internal topics' "
                    f"({target.bootstrap}): its group and topics are not read there"
                )
            continue
        topics = tuple(t.strip() for t in (props.get("topics") or "").split(",") if t.strip())
        pattern = (props.get("topics.regex") or "").strip()
        regex = None
        if pattern:
            try:
                regex = translate(pattern)
            except JavaRegexProblem as err:
                if row["exists"]:
                    skipped[name] = f"its topics.regex is not matched here as Java would match it: {err}"
        specs.append(
            SinkSpec(name, sink_group(name, props, target.consumer_group_id), bool(row["exists"]), topics, regex)
        )
    return specs, skipped


BASES = {
    "offsets_topic": "the partition's last commit at or before as-of in the offsets topic's retained history",
    "tombstone": "a tombstone at or before as-of: the partition had no offset then (a null offset resets it)",
    "no_record_yet": "no record of the partition at or before as-of, and its offsets topic partition lost "
    "no record before its first one: it had no offset then (a null offset resets it)",
    "history_not_retained": "no record of the partition at or before as-of is retained and older records were "
    "removed: its offset then is unknown; left out of the body",
    "committed": "the sink group's committed offset now (a plan as of now)",
    "offsets_for_times": "the first record written at or after as-of (Kafka's offsets-for-times): where the sink "
    "stood then had it caught up; the group's commit history is not read",
    "log_end": "no record written at or after as-of: the log end (where the sink stood then had it caught up)",
    "not_read_by_connector": "a committed offset of the sink's group for a topic the connector does not read "
    "(topics, or topics.regex matched as Java's Pattern): stale or another consumer's; left out of the body",
    "beyond_log_end": "a position beyond the log end: applied, a consumer fetching there once the log has grown "
    "past it would skip the records before; left out of the body",
    "sink_behind": "a position past the next record the sink reads now (its committed offset, else the log "
    "start): applied, it would skip records the sink has not read; left out of the body",
}


def _restore_plan(plan: list[Row], connectors: list[Row], as_of_ms: int, skipped: dict[str, str]) -> dict[str, Any]:
    """``restore-plan.json`` from the plan's rows (ordered by connector and partition_json), and the sinks
    not planned (``skipped``, with why)."""
    kinds = {r["connector"]: r["type"] for r in connectors if r["exists"]}
    entries: dict[str, dict[str, Any]] = {}
    for row in plan:
        entry = entries.setdefault(row["connector"], {"offsets": [], "based_on": set(), "not_restored": []})
        partition = json.loads(row["partition_json"])
        entry["based_on"].add(row["based_on"])
        if row["action"] == "unknown":
            entry["not_restored"].append({"partition": partition, "reason": row["reason"]})
            continue
        offset = None if row["offset_json"] is None else json.loads(row["offset_json"])
        entry["offsets"].append({"partition": partition, "offset": offset})
    used = sorted({basis for e in entries.values() for basis in e["based_on"]})
    return {
        "as_of": iso(as_of_ms),
        "how": "for each connector: PUT /connectors/{c}/stop, then the PATCH below, then PUT /connectors/{c}/resume",
        "based_on": {basis: BASES.get(basis, basis) for basis in used},
        "connectors": {
            name: {
                "type": kinds.get(name),
                "method": "PATCH",
                "path": f"/connectors/{name}/offsets",
                "body": {"offsets": e["offsets"]} if e["offsets"] else None,  # Connect refuses an empty list
                "based_on": sorted(e["based_on"]),
                "not_restored": e["not_restored"],
            }
            for name, e in entries.items()
        },
        "skipped": dict(sorted(skipped.items())),
    }


def reconcile(args: argparse.Namespace) -> int:
    target = resolve(args)
    progress = Progress(JOB, 6 if target.sidecar_url else 5)
    online, ends = prepare(args, target, progress)
    as_of_ms = parse_time(args.as_of) if args.as_of else int(time.time() * 1000)
    sidecar = _sidecar_view(target.sidecar_url, progress) if online and target.sidecar_url else None
    owned = existing_session() is None  # a test process shares its one session
    spark = start_spark(args, JOB, progress, kafka=args.snapshot is None, records=expected_records(args, ends))
    try:
        with run_frames():  # its own kept frames released, not the shared session's others (kept.py)
            inputs = load(args, spark, target, progress, ends, online, roles=("config", "offsets"))
            report = _reconcile(args, inputs, sidecar, as_of_ms, progress)
    finally:
        if owned:
            spark.stop()
    _print_summary(report, args)
    return 0


def _reconcile(
    args: argparse.Namespace, inputs: Inputs, sidecar: SidecarView | None, as_of_ms: int, progress: Progress
) -> dict[str, Any]:
    spark, target, limit, offsets = inputs.spark, inputs.target, args.max_findings, inputs.offsets
    assert offsets is not None  # read: load's roles
    progress.step("reconciling")
    connectors = keep(T.connector_configs(inputs.config), StorageLevel.MEMORY_AND_DISK)
    # one aggregation over the records for what the history and the restore plan ask of each key; as of a
    # time after every record, the plan is as of now: each key's last record, the offset the worker holds
    after_all = as_of_ms >= inputs.latest.get("offsets", as_of_ms)
    # a row a key, in as many partitions as a shuffle makes, not the kept records' (sized for 1 M records
    # each): each small query after it runs that many tasks, not one a kept partition
    per_key = T.key_summary(offsets, None if after_all else as_of_ms).coalesce(session_shuffle_partitions(spark))
    summary = keep(per_key, StorageLevel.MEMORY_AND_DISK)
    history = keep(T.offset_history(summary), StorageLevel.MEMORY_AND_DISK)
    skipped_sections: dict[str, str] = {}

    connector_rows = connectors.collect()  # one row a connector: every question of the driver about them
    specs, skipped_sinks = _sink_specs(connector_rows, target)
    if inputs.online:
        plan_time = as_of_ms if args.as_of else None  # as of now: the committed offsets, not offsets-for-times
        facts = broker_facts(target.aiokafka_kwargs, specs, plan_time, args.kafka_timeout_s)
        sink_rows = [tuple(vars(p).values()) for p in facts.sink_partitions]
        if facts.unreadable_topics:
            progress.note(
                f"log offsets not read for {len(facts.unreadable_topics)} topic(s): "
                + ", ".join(facts.unreadable_topics[:5])
            )
            skipped_sections["sink_log_offsets"] = "not read for topics " + ", ".join(facts.unreadable_topics)
        if facts.unreadable_groups:
            skipped_sections["sink_groups"] = "committed offsets not read for groups " + ", ".join(
                facts.unreadable_groups
            )
    else:
        sink_rows = []
        skipped_sections["sinks"] = "offline: the consumer groups and log offsets were not read"
    # the driver's rows, projected: a local relation (kept, each question of it would run Spark jobs)
    sink_offsets = T.sink_offsets(local_frame(spark, sink_rows, SINK_PARTITIONS_SCHEMA))

    findings: dict[str, dict[str, Any]] = {}
    findings["orphaned_offsets"] = finding(
        T.orphaned_offsets(history, T.orphaned_sink_offsets(sink_offsets), connectors),
        limit,
        ["connector"],
    )
    findings["non_canonical_keys"] = finding(T.non_canonical_keys(history), limit, ["connector", "partition_json"])
    findings["offsets_went_backwards"] = finding(T.offsets_went_backwards(offsets), limit, ["at"])
    findings["sink_offsets_below_log_start"] = finding(
        sink_offsets.filter(F.col("status") == "below_log_start"), limit, ["connector", "topic", "partition"]
    )
    findings["sink_offsets_beyond_log_end"] = finding(
        sink_offsets.filter(F.col("status") == "beyond_log_end"), limit, ["connector", "topic", "partition"]
    )
    lagging = sink_offsets.filter(F.col("exists") & F.col("lag").isNotNull())
    findings["sink_lag"] = finding(
        lagging.select("connector", "group", "topic", "partition", "committed", "log_end", "lag"),
        limit,
        ["connector", "topic", "partition"],
    )
    total = lagging.agg(F.sum("lag")).first()  # a global aggregate: one row (a null sum when none lags)
    findings["sink_lag"]["total"] = int(total[0] or 0) if total is not None else 0

    unanswered = [error for name, error in (sidecar.answers if sidecar else []) if name == "*"]
    if unanswered:
        skipped_sections["sidecar_disagreements"] = (
            f"the sidecar at {target.sidecar_url} did not answer: {unanswered[0]}"
        )
    elif sidecar is not None:
        existing = [r["connector"] for r in connector_rows if r["exists"]]
        asked = {name for name, _ in sidecar.answers}
        answers = sidecar.answers + [(c, "not listed by the sidecar") for c in existing if c not in asked]
        history_now = T.history_view(T.offsets_now(summary), sink_offsets, connectors)
        running = T.running_connectors(connectors)
        not_compared = sorted(r["connector"] for r in running.collect() if r["connector"] in {c for c, _ in answers})
        compared = T.sidecar_disagreements(
            history_now,
            local_frame(spark, sidecar.offsets, SIDECAR_OFFSETS_SCHEMA),
            local_frame(spark, answers, SIDECAR_ANSWERS_SCHEMA),
            running,
        )
        findings["sidecar_disagreements"] = finding(compared.filter(~F.col("agrees")), limit, ["connector"])
        findings["sidecar_disagreements"]["compared"] = len(answers) - len(not_compared)
        findings["sidecar_disagreements"]["not_compared_running"] = not_compared
        findings["sidecar_disagreements"]["sidecar"] = target.sidecar_url
    else:
        skipped_sections["sidecar_disagreements"] = "no sidecar to ask (offline, or --no-sidecar)"

    plan_rows = keep(
        T.source_restore_plan(
            summary,
            T.first_missing_offsets(
                offsets.frame, local_frame(spark, inputs.partition_stats["offsets"], T.PARTITION_STATS_SCHEMA)
            ),
            connectors,
        ).unionByName(T.sink_restore_plan(sink_offsets.filter(~F.col("connector").isin(list(skipped_sinks))))),
        StorageLevel.MEMORY_AND_DISK,
    )
    # one action: the plan and two findings; ordered here (a few rows a partition; Spark's ordering would
    # sample and shuffle them in jobs of their own): by connector and partition_json, nulls first as Spark
    # orders them (UTF-8's byte order is the code points' order)
    plan_list = sorted(
        plan_rows.collect(), key=lambda r: [(r[c] is not None, r[c]) for c in ("connector", "partition_json")]
    )
    plan = _restore_plan(plan_list, connector_rows, as_of_ms, skipped_sinks)
    not_restored = [r for r in plan_list if r["action"] == "unknown"]
    findings["restore_history_not_retained"] = finding_of_rows(
        [_pick(r, "connector", "partition_json", "reason") for r in not_restored if r["based_on"] == BY_HISTORY],
        limit,
    )
    findings["restore_sink_not_planned"] = finding_of_rows(
        [
            _pick(r, "connector", "partition_json", "based_on", "reason")
            for r in not_restored
            if r["based_on"] != BY_HISTORY
        ],
        limit,
    )
    findings["restore_sinks_skipped"] = finding_of_rows(
        [{"connector": name, "reason": reason} for name, reason in sorted(skipped_sinks.items())], limit
    )
    if not inputs.online:
        plan["note"] = "offline: sink connectors are not in this plan"

    progress.step(f"writing {args.out}")
    tables = write_tables(
        args.out,
        {
            "source_offsets": history.withColumn("key_text", F.decode("key", "UTF-8")).drop("key"),
            "sink_offsets": sink_offsets,
            "connectors": connectors.drop("properties"),
            "restore_plan": plan_rows,
        },
    )
    write_json(args.out / "restore-plan.json", plan)
    existing_count = sum(1 for r in connector_rows if r["exists"])
    totals = history.agg(F.count("*").alias("total"), F.count_if(F.col("live")).alias("live")).first()
    partitions, live = (int(totals["total"]), int(totals["live"])) if totals is not None else (0, 0)
    report = {
        "job": JOB,
        "generated_at": iso(int(time.time() * 1000)),
        "source": inputs.source,
        "records": inputs.counts,
        "skipped_records": inputs.skipped,
        "summary": {
            "connectors": _connector_counts(existing_count, len(connector_rows)),
            "source_partitions": {"total": partitions, "live": live},
            "sink_partitions": len(sink_rows),
            "findings": {name: f["count"] for name, f in findings.items()},
        },
        "findings": findings,
        "restore_plan": {
            "as_of": plan["as_of"],
            "connectors": len(plan["connectors"]),
            "not_restored": len(not_restored),
            "sinks_skipped": len(skipped_sinks),
            "file": "restore-plan.json",
        },
        "skipped_sections": skipped_sections,
        "tables": tables,
        "elapsed_s": round(progress.elapsed_s, 1),
    }
    write_json(args.out / "offsets-report.json", report)
    return report


def _pick(row: Row, *names: str) -> dict[str, Any]:
    return {name: row[name] for name in names}


def _connector_counts(existing: int, total: int) -> dict[str, int]:
    """As a ``groupBy("exists").count()`` gives them: a kind with no connector is absent."""
    counts = {"existing": existing, "deleted": total - existing}
    return {kind: n for kind, n in counts.items() if n}


def _print_summary(report: dict[str, Any], args: argparse.Namespace) -> None:
    s, f = report["summary"], report["findings"]
    connectors = s["connectors"]
    lines = [
        f"{JOB}: {connectors.get('existing', 0)} connector(s), {connectors.get('deleted', 0)} deleted; "
        f"{s['source_partitions']['live']} live source partition(s) of {s['source_partitions']['total']}; "
        f"{s['sink_partitions']} sink partition(s)",
        f"  orphaned offsets              {f['orphaned_offsets']['count']} connector(s)",
        f"  non-canonical source keys     {f['non_canonical_keys']['count']}",
        f"  offsets that went backwards   {f['offsets_went_backwards']['count']}",
        f"  sink offsets below log start  {f['sink_offsets_below_log_start']['count']}",
        f"  sink offsets beyond log end   {f['sink_offsets_beyond_log_end']['count']}",
        f"  sink lag                      {f['sink_lag']['total']} record(s) "
        f"over {f['sink_lag']['count']} partition(s)",
    ]
    if "sidecar_disagreements" in f:
        d = f["sidecar_disagreements"]
        lines.append(
            f"  sidecar disagrees             {d['count']} of {d['compared']} connector(s) "
            f"({len(d['not_compared_running'])} running, not compared)"
        )
    for name, reason in report["skipped_sections"].items():
        lines.append(f"  {name}: skipped ({reason})")
    plan = report["restore_plan"]
    lines.append(
        f"  restore plan as of {plan['as_of']}: {plan['connectors']} connector(s) in {args.out / plan['file']}; "
        f"{plan['not_restored']} partition(s) left out (history not retained, or a sink entry that would skip "
        f"records), {plan['sinks_skipped']} sink(s) not planned"
    )
    lines.append(f"report: {args.out / 'offsets-report.json'}; tables: {args.out / 'tables'} ({report['elapsed_s']}s)")
    print("\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run(JOB, lambda: reconcile(args))


if __name__ == "__main__":
    sys.exit(main())
