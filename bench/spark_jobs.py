"""Both Spark jobs at scale, in local mode: synthetic history into a snapshot file, then each job on it
(``--snapshot --offline``) and, with a broker (``--kafka-bootstrap``, default ``$KAFKA_BOOTSTRAP``), on
the same records written to fresh topics of that broker (Spark's Kafka source), each job in its own
process; prints records per second and peak memory. The topics are deleted afterwards.

The history is written with the sidecar's encoders, as a worker would write it: per connector a config,
a target state, task configs and status records, KIP-558 topic records; and ``--records`` offset commits
spread over ``--connectors`` x ``--partitions`` source partitions (keys placed by murmur2 like the
producer), with a reset now and then, a few offsets that go backwards, a tenth of the connectors deleted.
Memory is the resident set size of the job's process tree, sampled every 0.2 s: the driver's Python, the
driver JVM (local mode: the executors too) and the Python workers. Not a timed test.

    .venv/bin/python bench/spark_jobs.py --records 2000000      # a quick run
    .venv/bin/python bench/spark_jobs.py                        # 10 million offset records, 1,000 connectors
    source /work/stack-shared/env; .venv/bin/python bench/spark_jobs.py --records 1000000 --sources kafka
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import psutil
import pyarrow as pa
import pyarrow.compute
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from spark_jobs.synthetic import PARTITIONS, TOPICS, generate, worker_properties  # noqa: E402


def write_kafka(snapshot: Path, bootstrap: str, names: dict[str, str]) -> None:
    """The snapshot's records into the fresh topics ``names`` (bench topic -> fresh topic), each Kafka
    partition in offset order, with Spark's Kafka sink (run in a child process: ``--write-kafka``)."""
    from pyspark.sql import functions as F

    from spark_jobs.session import SessionOptions, build_session

    spark = build_session(SessionOptions(app_name="bench-kafka-writer", kafka=True, log_file=Path("/dev/null")))
    frame = spark.read.parquet(str(snapshot))
    topic = F.lit(None).cast("string")
    for old, new in names.items():
        topic = F.when(F.col("topic") == old, F.lit(new)).otherwise(topic)
    out = frame.select(topic.alias("topic"), "partition", "offset", "key", "value").repartition("topic", "partition")
    (
        out.sortWithinPartitions("offset")
        .drop("offset")
        .write.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("kafka.linger.ms", "20")
        .option("kafka.batch.size", "1048576")
        .option("kafka.compression.type", "lz4")
        .save()
    )
    spark.stop()


async def _topics(bootstrap: str, create: dict[str, int] | None, delete: list[str] | None) -> None:
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        if create:
            configs = {"retention.ms": "-1", "cleanup.policy": "delete"}  # the records' old timestamps stay
            await admin.create_topics([NewTopic(t, n, 1, topic_configs=configs) for t, n in create.items()])
        if delete:
            await admin.delete_topics(delete)
    finally:
        await admin.close()


def run_job(module: str, args: list[str]) -> dict[str, float]:
    started = time.monotonic()
    load_before = os.getloadavg()[0]
    proc = subprocess.Popen(
        [sys.executable, "-m", module, *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    peaks = {"driver_python": 0, "driver_jvm": 0, "python_workers": 0, "tree": 0}
    cpu: dict[int, float] = {}  # per process: its CPU seconds (user + system) when last seen
    done = threading.Event()

    def sample() -> None:
        root = psutil.Process(proc.pid)
        while not done.is_set():
            try:
                procs = [root, *root.children(recursive=True)]
                rss = {"driver_python": 0, "driver_jvm": 0, "python_workers": 0}
                for p in procs:
                    try:
                        mem = p.memory_info().rss
                        name = p.name()
                        times = p.cpu_times()
                        cpu[p.pid] = times.user + times.system
                    except psutil.Error:
                        continue
                    # the one JVM (its launcher's JVM comes before it), and the Python workers; a child the
                    # JVM forks (`rm -rf` of its block manager's directory at its exit) shows the JVM's own
                    # memory until it execs, so neither it nor a shell counts
                    if p.pid == root.pid:
                        rss["driver_python"] += mem
                    elif name == "java":
                        rss["driver_jvm"] = max(rss["driver_jvm"], mem)
                    elif name.startswith("python"):
                        rss["python_workers"] += mem
                for key, value in rss.items():
                    peaks[key] = max(peaks[key], value)
                peaks["tree"] = max(peaks["tree"], sum(rss.values()))
            except psutil.Error:
                pass
            done.wait(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    output, _ = proc.communicate()
    done.set()
    sampler.join()
    if proc.returncode != 0:
        print(output, file=sys.stderr)
        raise SystemExit(f"{module} failed with exit status {proc.returncode}")
    for line in output.splitlines():  # the job's own step timings
        if line.startswith(module.rsplit(".", 1)[1].replace("_", "-")) and ("(" in line):
            print("    " + line)
    load = {"load_before": load_before, "load_after": os.getloadavg()[0]}  # 1-minute load: a shared machine
    # CPU seconds of the job's processes (the last 0.2 s of each aside): on a loaded machine the wall time
    # mostly measures the other processes; the CPU time is what the job itself costs
    load["cpu_seconds"] = sum(cpu.values())
    return {"seconds": time.monotonic() - started, **load, **{k: v / 2**20 for k, v in peaks.items()}}


def run_both(args: argparse.Namespace, source: str, extra: list[str], decoded: dict[str, int]) -> dict[str, Any]:
    common = ["--master", args.master, "--driver-memory", args.driver_memory, "--max-findings", "20", *extra]
    results: dict[str, Any] = {}
    for job, module in (
        ("offsets-reconcile", "spark_jobs.offsets_reconcile"),
        ("topic-audit", "spark_jobs.topic_audit"),
    ):
        own = ["--no-sidecar"] if job == "offsets-reconcile" and source == "kafka" else []
        figures = run_job(module, [*common, *own, "--out", str(args.out / f"{job}-{source}")])
        results[job] = figures
        figures["records"] = decoded[job]
        print(
            f"{job:18} {source:8} {decoded[job]:>12,} records decoded in {figures['seconds']:6.1f}s = "
            f"{decoded[job] / figures['seconds']:>9,.0f} records/s; "
            f"peak RSS: driver Python {figures['driver_python']:.0f} MiB, driver JVM {figures['driver_jvm']:.0f} MiB, "
            f"Python workers {figures['python_workers']:.0f} MiB, all {figures['tree']:.0f} MiB; "
            f"load average {figures['load_before']:.1f} -> {figures['load_after']:.1f} on {os.cpu_count()} CPUs; "
            f"{figures['cpu_seconds']:.0f} CPU s = {decoded[job] / max(figures['cpu_seconds'], 1e-9):,.0f} records "
            "per CPU second",
            flush=True,
        )
    return results


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--records", type=int, default=10_000_000, help="offset records (default 10 million)")
    p.add_argument("--connectors", type=int, default=1000)
    p.add_argument("--partitions", type=int, default=10, help="source partitions per connector")
    p.add_argument("--status-records", type=int, default=1_000_000, help="state changes and topic records")
    p.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "spark")
    p.add_argument("--master", default="local[2]")
    p.add_argument("--driver-memory", default="1g")
    p.add_argument("--reuse", action="store_true", help="keep an existing snapshot of the same size")
    p.add_argument("--sources", default="snapshot,kafka", help="snapshot, kafka or both (kafka needs a broker)")
    p.add_argument("--kafka-bootstrap", default=os.environ.get("KAFKA_BOOTSTRAP"), help="default: $KAFKA_BOOTSTRAP")
    p.add_argument("--write-kafka", nargs=2, metavar=("SNAPSHOT", "NAMES_JSON"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.write_kafka:  # the child process that fills the topics
        write_kafka(Path(args.write_kafka[0]), args.kafka_bootstrap, json.loads(args.write_kafka[1]))
        return
    args.out.mkdir(parents=True, exist_ok=True)
    snapshot = args.out / f"snapshot-{args.records}-{args.connectors}x{args.partitions}-{args.status_records}.parquet"
    if not (args.reuse and snapshot.exists()):
        started = time.monotonic()
        counts = generate(snapshot, args.records, args.connectors, args.partitions, args.status_records)
        took = time.monotonic() - started
        print(
            f"generated {counts['total']:,} records ({counts['offsets']:,} offset commits, {counts['status']:,} status "
            f"records) in {took:.0f}s: {snapshot} "
            f"({snapshot.stat().st_size / 2**20:.0f} MiB)"
        )
    table = pq.read_table(snapshot, columns=["topic"])
    per_topic = {t: table.filter(pa.compute.equal(table["topic"], pa.scalar(t))).num_rows for t in TOPICS.values()}
    total = table.num_rows
    decoded = {  # the records each job reads and decodes (offsets-reconcile does not read the status topic)
        "offsets-reconcile": per_topic[TOPICS["config"]] + per_topic[TOPICS["offsets"]],
        "topic-audit": per_topic[TOPICS["config"]] + per_topic[TOPICS["status"]],
    }
    sources = [s.strip() for s in args.sources.split(",") if s.strip()]
    results: dict[str, Any] = {}
    if "snapshot" in sources:
        props = worker_properties(args.out / "bench-worker.properties", "127.0.0.1:9", TOPICS)
        extra = ["--worker-properties", str(props), "--snapshot", str(snapshot), "--offline"]
        results["snapshot"] = run_both(args, "snapshot", extra, decoded)
    if "kafka" in sources and not args.kafka_bootstrap:
        print("kafka: skipped (no broker: --kafka-bootstrap or $KAFKA_BOOTSTRAP)")
    elif "kafka" in sources:
        results["kafka"] = from_kafka(args, snapshot, decoded)
    (args.out / "results.json").write_text(
        json.dumps(
            {"records": total, "master": args.master, "driver_memory": args.driver_memory, "jobs": results}, indent=2
        )
    )


def from_kafka(args: argparse.Namespace, snapshot: Path, decoded: dict[str, int]) -> dict[str, Any]:
    """The snapshot's records written to fresh topics of the broker, both jobs on them, the topics deleted."""
    run = uuid.uuid4().hex[:8]
    names = {role: f"bench-spark-{run}-{role}" for role in TOPICS}
    fresh = {TOPICS[role]: name for role, name in names.items()}
    asyncio.run(_topics(args.kafka_bootstrap, {fresh[t]: n for t, n in PARTITIONS.items()}, None))
    try:
        started = time.monotonic()
        child = [sys.executable, __file__, "--kafka-bootstrap", args.kafka_bootstrap]
        subprocess.run([*child, "--write-kafka", str(snapshot), json.dumps(fresh)], cwd=ROOT, check=True)
        print(f"wrote the snapshot's records to {', '.join(names.values())} in {time.monotonic() - started:.0f}s")
        props = worker_properties(args.out / "bench-kafka.properties", args.kafka_bootstrap, names)
        return run_both(args, "kafka", ["--worker-properties", str(props)], decoded)
    finally:
        asyncio.run(_topics(args.kafka_bootstrap, None, list(names.values())))


def suite(kafka_bootstrap: str | None, records: int = 1_000_000) -> dict[str, Any]:
    """Section 7 of ``make bench`` (``--sections 7``): this benchmark at ``records`` offset records (and a
    tenth as many status records), from the snapshot and, with a broker, from Kafka; the suite's rows."""
    out = ROOT / "bench" / "results" / "spark"
    command = [sys.executable, __file__, "--records", str(records), "--status-records", str(records // 10)]
    command += ["--reuse", "--out", str(out), "--sources", "snapshot,kafka" if kafka_bootstrap else "snapshot"]
    subprocess.run([*command, "--kafka-bootstrap", kafka_bootstrap or ""], cwd=ROOT, check=True)
    results = json.loads((out / "results.json").read_text())
    rows = []
    for source, jobs in results["jobs"].items():
        for job, f in jobs.items():
            rate = f["records"] / f["seconds"]
            what = f"{job} from {source}, {f['records']:,} records"
            empty = {"native": None, "ratio": None}
            rows.append({"what": what, "unit": "records/s", "sidecar": rate, "target": ">= 300,000", **empty})
            rows.append({"what": "  its peak RSS", "unit": "MiB", "sidecar": f["tree"], "target": "< 2,048", **empty})
    return {"results": results, "rows": rows}


if __name__ == "__main__":
    main()
