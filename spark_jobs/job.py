"""What both jobs share: the command line, resolving the cluster, the fail-fast checks, starting Spark,
reading and decoding the records, and turning every expected failure into a clear message and exit 2."""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark import StorageLevel
from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F

from control_plane.rules import times

from . import transforms as T
from .kafka_admin import KafkaUnreachable, check_reachable, internal_topic_ends
from .kept import keep
from .progress import Progress
from .read import InputError, check_snapshot, read_kafka, read_snapshot
from .session import (
    DEFAULT_DRIVER_MEMORY,
    DEFAULT_MASTER,
    SessionError,
    SessionOptions,
    build_session,
    describe,
    existing_session,
    is_connect,
    kafka_package,
    remote_url,
    submitted,
)
from .target import Target, TargetError, resolve_target

EXPECTED_ERRORS = (TargetError, KafkaUnreachable, InputError, SessionError)
# a record's own columns (read.RECORDS_SCHEMA without the role and the topic: the same on a topic's records)
RECORD_COLUMNS = ("partition", "offset", "timestamp", "key", "value")
RECORDS_PER_TASK = 250_000  # a small internal topic is read and decoded in few tasks
# offset records a kept partition holds at most: two partitions sorted at once fit a 1 GB local driver's
# execution memory without spilling (10 M records in the default 4 partitions spilled 600 MB)
RECORDS_PER_KEPT_PARTITION = 1_000_000


def parser(prog: str, description: str, default_out: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description=description)
    p.add_argument("--worker-properties", help="the Connect worker's properties file (default: the local stack's)")
    p.add_argument("--bootstrap", help="Kafka bootstrap servers (default: the worker's bootstrap.servers)")
    p.add_argument(
        "--snapshot", type=Path, help="read the records from this `control-plane export` file instead of Kafka"
    )
    p.add_argument("--offline", action="store_true", help="with --snapshot: ask neither Kafka nor the sidecar")
    p.add_argument("--out", type=Path, default=Path(default_out), help=f"output directory (default: {default_out})")
    p.add_argument(
        "--master", help=f"Spark master (default: spark-submit's --master, or {DEFAULT_MASTER} when run directly)"
    )
    p.add_argument(
        "--remote",
        help="a Spark Connect server, sc://host:port (default: $SPARK_REMOTE unless --master is given); "
        "the server's own settings stand for --driver-memory and the Kafka source (docs/spark-jobs/)",
    )
    p.add_argument("--driver-memory", default=DEFAULT_DRIVER_MEMORY, help="Spark driver memory")
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="a further Spark setting")
    p.add_argument("--kafka-timeout-s", type=float, default=10.0, help="how long Kafka may take to answer")
    p.add_argument("--max-findings", type=int, default=200, help="rows per finding in the JSON report")
    return p


def parse_time(text: str) -> int:
    """Milliseconds since the epoch, or an ISO-8601 time (UTC unless it says otherwise: ``rules.times``); an
    ``InputError`` (the job's error line) for anything else."""
    try:
        return times.parse_time(text)
    except ValueError:
        raise InputError(f"{text!r} is not a time: ISO-8601 or milliseconds since the epoch expected") from None


def parse_duration(text: str) -> int:
    """``90s``, ``15m``, ``12h``, ``7d`` or plain seconds, as milliseconds."""
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    unit = text[-1] if text[-1] in units else "s"
    number = text[:-1] if text[-1] in units else text
    return int(float(number) * units[unit] * 1000)


@dataclass
class Inputs:
    spark: SparkSession
    target: Target
    source: dict[str, object]  # what was read, for the report
    online: bool  # whether Kafka (and the sidecar) can be asked
    now_ms: int
    counts: dict[str, int]
    latest: dict[str, int]  # per role: the timestamp of its latest record (none read: absent)
    partition_stats: dict[str, list[tuple[int, int, int, int]]]  # per role: T.PARTITION_STATS_SCHEMA's rows
    config: DataFrame
    status: DataFrame | None  # None: the job did not read it (load's roles)
    offsets: T.OffsetParts | None  # the records' and the keys' columns apart, and joined (``frame``)
    skipped: dict[str, dict[str, int]]
    history: DataFrame | None = None  # the config history (None: not asked, or no sidecars' topic)


def resolve(args: argparse.Namespace, use_sidecar: bool = True) -> Target:
    return resolve_target(
        worker_properties=args.worker_properties,
        bootstrap=args.bootstrap,
        sidecar_url=getattr(args, "sidecar_url", None),
        use_sidecar=use_sidecar and not getattr(args, "no_sidecar", False) and not args.offline,
        kafka=not args.offline,
    )


def prepare(
    args: argparse.Namespace, target: Target, progress: Progress, history: bool = False
) -> tuple[bool, dict[str, dict[int, int]] | None]:
    """The fail-fast checks before Spark starts; returns (online, end offsets of the internal topics, and
    with ``history`` of the sidecars' topic where it exists)."""
    if args.offline and args.snapshot is None:
        raise InputError("--offline needs --snapshot (a file written by `control-plane export`)")
    if args.snapshot is not None:
        check_snapshot(args.snapshot)
        if args.offline:
            progress.step(f"snapshot {args.snapshot} (offline: no Kafka, no sidecar)")
            return False, None
        progress.step(f"snapshot {args.snapshot}; checking Kafka at {target.bootstrap} for the broker's facts")
        check_reachable(target.aiokafka_kwargs, args.kafka_timeout_s)
        return True, None
    progress.step(f"checking Kafka at {target.bootstrap}")
    optional = (target.history_topic,) if history and target.history_topic else ()
    ends = internal_topic_ends(target.aiokafka_kwargs, list(target.topics.values()), args.kafka_timeout_s, optional)
    records = sum(sum(parts.values()) for parts in ends.values())
    progress.note(f"reachable; internal topics end at {records:,} records in all")
    return True, ends


def expected_records(args: argparse.Namespace, ends: dict[str, dict[int, int]] | None) -> int | None:
    """How many records the job will read, known before Spark starts: the internal topics' end offsets
    (from Kafka), a Parquet snapshot's row count (its footer), else unknown."""
    if ends:
        return sum(sum(parts.values()) for parts in ends.values())
    if args.snapshot is not None and args.snapshot.is_file() and args.snapshot.suffix == ".parquet":
        try:
            return int(pq.ParquetFile(args.snapshot).metadata.num_rows)
        except (OSError, pa.ArrowException):
            return None
    return None


def start_spark(
    args: argparse.Namespace, name: str, progress: Progress, kafka: bool, records: int | None = None
) -> SparkSession:
    remote = remote_url(args.remote, args.master)
    master = remote or args.master or ("spark-submit's master" if submitted() else DEFAULT_MASTER)
    if remote is not None:
        progress.step(f"connecting to Spark Connect at {remote}")
    else:
        progress.step(f"starting Spark ({master})" + (" with the Kafka source" if kafka else ""))
    conf = dict(item.split("=", 1) for item in args.conf if "=" in item)
    options = SessionOptions(
        master=args.master,
        remote=remote,
        app_name=name,
        driver_memory=args.driver_memory,
        kafka=kafka,
        log_file=args.out / "spark.log",
        conf=conf,
        records=records,
    )
    reused = existing_session() is not None
    spark = build_session(options)
    if reused:
        where = "this process's session"
    else:
        where = "the server's log and settings" if is_connect(spark) else f"its log: {options.log_file}"
    progress.note(f"Spark {spark.version} up ({describe(spark, options)}); {where}")
    return spark


def load(
    args: argparse.Namespace,
    spark: SparkSession,
    target: Target,
    progress: Progress,
    ends: dict[str, dict[int, int]] | None,
    online: bool,
    roles: tuple[str, ...] = ("config", "status", "offsets"),
) -> Inputs:
    """Read, count and decode the records of the internal topics of ``roles`` (config always; status and
    offsets when asked, None otherwise: decoding runs Spark jobs at once), and with ``history`` the config
    history of the sidecars' topic (None when that topic does not exist)."""
    now_ms = int(time.time() * 1000)
    topics = target.topics_of(roles)
    if ends is not None and topics.get("history") not in (None, *ends):  # no sidecars' topic on the broker
        del topics["history"]
    if ends:
        ends = {name: parts for name, parts in ends.items() if name in topics.values()}
    if args.snapshot is not None:
        progress.step(f"reading and decoding the snapshot {args.snapshot} with the sidecar's codecs")
        snapshot = read_snapshot(spark, args.snapshot, topics)
        source: dict[str, object] = {"kind": "snapshot", "path": str(args.snapshot)}
    else:
        progress.step("reading and decoding the internal topics' history from Kafka with the sidecar's codecs")
        source = {"kind": "kafka", "bootstrap": target.bootstrap}
    source["topics"] = topics

    def of(role: str) -> DataFrame:
        """One topic's records: from the snapshot, or read from Kafka on its own."""
        topic = topics[role]
        if args.snapshot is not None:
            return snapshot.filter(F.col("topic") == topic)  # by topic: Parquet row groups can be skipped
        known = ends.get(topic) if ends is not None else None  # its partitions' end offsets
        frame = read_kafka(
            spark, {role: topic}, target.spark_kafka_options(), {topic: known} if known is not None else None
        )
        if known is not None:  # a small topic in few tasks: tiny tasks cost more than they do
            estimate = sum(known.values())
            frame = frame.coalesce(max(1, min(len(known), -(-estimate // RECORDS_PER_TASK))))
        return frame

    # decoded once, kept on local disk: a partition cached in memory is built whole, and millions of
    # offset commits do not fit a small driver (local mode: the executors live in the driver's heap)
    def kept(frame: DataFrame) -> DataFrame:
        return keep(frame, StorageLevel.DISK_ONLY)

    def offsets() -> T.OffsetParts:
        # the offset records' own columns kept clustered by key (each key's in offset order: the transforms
        # aggregate them without a shuffle or a sort), their keys' columns joined from the small keys frame;
        # each key's sorted offset later, once (transforms.with_normal)
        partitions = _kept_partitions(spark, expected_records(args, ends))
        records, own = of("offsets"), None
        if args.snapshot is None:  # read from Kafka once: the distinct keys' pass and the decoding read it
            # without the topic's name and the role, the same on every record of the one topic read: kept
            # narrower, and the role put back as a constant
            own = kept(records.select(*RECORD_COLUMNS))
            records = own.select(F.lit("offsets").alias("role"), F.lit(target.offsets_topic).alias("topic"), "*")
        parts = T.decode_offset_parts(
            records,
            _offsets_partitions(ends, target),
            normal=False,
            keep=lambda values: kept(T.clustered(values, partitions)),
        )
        if own is not None:  # the records are kept decoded now (decode_offset_parts read them all)
            own.unpersist()
        return parts

    decoders: dict[str, Callable[[], DataFrame]] = {
        "config": lambda: kept(T.decode_config_records(of("config"))),
        "status": lambda: T.decode_status_records(of("status"), keep=kept),
        "history": lambda: kept(T.decode_history_records(of("history"))),
    }
    offset_parts = offsets() if "offsets" in topics else None
    decoded = {
        role: offset_parts.frame if role == "offsets" and offset_parts is not None else decoders[role]()
        for role in topics
    }
    counts: dict[str, int] = {}
    skipped: dict[str, dict[str, int]] = {}
    latest: dict[str, int] = {}  # per role: its latest record's timestamp
    partition_stats: dict[str, list[tuple[int, int, int, int]]] = {}
    try:
        for role, frame in decoded.items():
            # the records per reason (malformed or not) and per Kafka partition: one pass a topic, or for the
            # offsets, where it could, the decoding's own pass over their keys
            known = offset_parts.counts if role == "offsets" and offset_parts is not None else None
            outcome = known if known is not None else T.record_counts(frame).collect()
            counts[role] = sum(r["n"] for r in outcome)
            skipped[role] = {}
            for r in outcome:
                if r["malformed"] is not None:
                    skipped[role][r["malformed"]] = skipped[role].get(r["malformed"], 0) + r["n"]
            times = [r["latest"] for r in outcome if r["latest"] is not None]
            if times:
                latest[role] = max(times)
            partition_stats[role] = _partition_stats(outcome)
            progress.note(
                f"{role}: {counts[role]:,} record(s), {sum(skipped[role].values()):,} skipped as malformed or unknown"
            )
    except Exception as err:  # noqa: BLE001 - Spark's reasons for unreadable input are many
        reason = spark_reason(err)
        if is_connect(spark) and "DATA_SOURCE_NOT_FOUND" in reason:  # a server started without it
            reason += f" (the Spark Connect server needs Spark's Kafka source: --packages {kafka_package()})"
        raise InputError(f"cannot read {source.get('path') or target.bootstrap}: {reason}") from None
    if args.snapshot is not None and not any(counts.values()):
        raise InputError(f"the snapshot {args.snapshot} holds no record of the topics {', '.join(topics.values())}")
    if args.snapshot is not None and args.offline and latest:
        now_ms = max(latest.values())  # offline, "now" is the snapshot's time
    config, status = decoded["config"], decoded.get("status")
    return Inputs(
        spark,
        target,
        source,
        online,
        now_ms,
        counts,
        latest,
        partition_stats,
        config,
        status,
        offset_parts,
        skipped,
        decoded.get("history"),
    )


def _partition_stats(outcome: list[Row]) -> list[tuple[int, int, int, int]]:
    """Per Kafka partition, over every reason: (partition, records, lowest offset, highest offset), in
    ``T.PARTITION_STATS_SCHEMA``'s order."""
    stats: dict[int, tuple[int, int, int]] = {}
    for r in outcome:
        n, low, high = stats.get(r["kafka_partition"], (0, r["low"], r["high"]))
        stats[r["kafka_partition"]] = (n + r["n"], min(low, r["low"]), max(high, r["high"]))
    return [(p, *stats[p]) for p in sorted(stats)]


def spark_reason(err: BaseException, limit: int = 400) -> str:
    """The root cause of a Spark failure in one line (a Py4J error's own text is only the call's name)."""
    java = getattr(err, "java_exception", None)
    if java is not None:
        cause = java
        while cause.getCause() is not None:
            cause = cause.getCause()
        text = str(cause.toString())
    else:
        text = str(err).strip() or repr(err)
    return text.splitlines()[0][:limit]


def session_shuffle_partitions(spark: SparkSession) -> int:
    """The running session's ``spark.sql.shuffle.partitions`` (:func:`.session.shuffle_partitions` gives a
    local master's default)."""
    return int(spark.conf.get("spark.sql.shuffle.partitions") or 1)


def _kept_partitions(spark: SparkSession, records: int | None) -> int | None:
    """The partitions of the kept offset records: the session's shuffle partitions (None), or more when
    that many records would put more than :data:`RECORDS_PER_KEPT_PARTITION` in each."""
    wanted = -(-records // RECORDS_PER_KEPT_PARTITION) if records else 0
    return wanted if wanted > session_shuffle_partitions(spark) else None


def _offsets_partitions(ends: dict[str, dict[int, int]] | None, target: Target) -> int | str:
    """The offsets topic's partition count: from its end offsets (Kafka), else its records' highest
    partition + 1 (a snapshot: found with the distinct keys, ``T.HIGHEST_PARTITION``)."""
    if ends and target.offsets_topic in ends:
        return len(ends[target.offsets_topic])
    return T.HIGHEST_PARTITION


def run(job: str, main: Callable[[], int]) -> int:
    """Run a job's main; expected failures print one clear line and exit 2."""
    logging.getLogger("aiokafka").setLevel(logging.CRITICAL)  # its own reasons end up in ours
    try:
        return main()
    except EXPECTED_ERRORS as err:
        print(f"{job}: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{job}: interrupted", file=sys.stderr)
        return 130
