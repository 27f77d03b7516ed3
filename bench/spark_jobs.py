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

With ``--before REF`` each job also runs from the code of a git ref (``bench.common.code_of``), alternately
with this checkout's, ``--rounds`` times each (in the order before, after, then after, before, and so on):
on a shared machine whose speed drifts, only runs side by side compare. It prints each pair, the means,
the ratio after / before, and whether both wrote the same outputs (the reports with their times aside,
``restore-plan.json`` with its as-of aside, and the Parquet tables row for row). ``--before-python`` runs
the ref's side with another interpreter: a virtualenv with another PySpark, for an upgrade of Spark.

Without ``--before``, each job on the snapshot also runs beside its floor (``--floor``, on by default;
``bench/spark_floor.py``: the least any Spark implementation must do for the job's main tables, written
plainly), cold and in a kept session, ``--rounds`` pairs alternately (the job, its floor; then its floor,
the job); it prints the job's wall time, CPU seconds and peak memory over the floor's, and whether the
floor's tables agree with the job's row for row.

    .venv/bin/python bench/spark_jobs.py --records 2000000      # a quick run
    .venv/bin/python bench/spark_jobs.py --reuse --sources snapshot --jobs offsets-reconcile --before main --rounds 5
    .venv/bin/python bench/spark_jobs.py --records 1000000 --before main --before-python .venv-spark400/bin/python
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
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.common import code_of  # noqa: E402
from bench.process_tree import Run, between, check, measure  # noqa: E402
from bench.spark_floor import TABLES, different_rows  # noqa: E402
from bench.spark_warm import READING, connect_server, kept_session, on_connect  # noqa: E402
from spark_jobs.synthetic import HISTORY_TOPIC, PARTITIONS, TOPICS, generate, worker_properties  # noqa: E402
from tests.support.spark_outputs import different_outputs  # noqa: E402

JOBS = {"offsets-reconcile": "spark_jobs.offsets_reconcile", "topic-audit": "spark_jobs.topic_audit"}


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
    ours = frame.filter(F.col("topic").isin(list(names)))  # the internal topics' (not the config history's)
    out = ours.select(topic.alias("topic"), "partition", "offset", "key", "value").repartition("topic", "partition")
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


def run_job(module: str, args: list[str], code: Path | None = None, python: str = sys.executable) -> dict[str, float]:
    """One job in a process of its own, from this checkout or from ``code`` (a folder of another version's
    packages, :func:`bench.common.code_of`), run by ``python``: its wall and CPU time, peak memory, the load
    around it, and its start-up (``startup_s``: until it begins to read the records)."""
    load_before = os.getloadavg()[0]
    run = measure([python, "-m", module, *args], code or ROOT)  # -m imports its working dir's first
    check(run, module)
    _print_steps(run, module)
    figures = between(run, run.marks[0], run.marks[-1])
    # 1-minute load: a shared machine; CPU seconds of the job's processes: on a loaded machine the wall
    # time mostly measures the other processes, the CPU time is what the job itself costs
    return {**figures, "startup_s": run.first(READING) or 0.0, "load_before": load_before, **_load_after()}


def _print_steps(run: Run, module: str) -> None:
    for _, line in run.lines:  # the job's own step timings
        if line.startswith(module.rsplit(".", 1)[1].replace("_", "-")) and ("(" in line):
            print("    " + line)


def _load_after() -> dict[str, float]:
    return {"load_after": os.getloadavg()[0]}


def _line(job: str, source: str, label: str, records: int, f: dict[str, float]) -> str:
    return (
        f"{job:18} {source:8} {label}{records:>12,} records decoded in {f['seconds']:6.1f}s = "
        f"{records / f['seconds']:>9,.0f} records/s; "
        f"peak RSS: driver Python {f['driver_python']:.0f} MiB, driver JVM {f['driver_jvm']:.0f} MiB, "
        f"Python workers {f['python_workers']:.0f} MiB, all {f['tree']:.0f} MiB; "
        f"start-up {f['startup_s']:.1f}s; "
        f"load average {f['load_before']:.1f} -> {f['load_after']:.1f} on {os.cpu_count()} CPUs; "
        f"{f['cpu_seconds']:.0f} CPU s = {records / max(f['cpu_seconds'], 1e-9):,.0f} records per CPU second"
    )


def run_both(args: argparse.Namespace, source: str, extra: list[str], decoded: dict[str, int]) -> dict[str, Any]:
    """Each job of ``args.jobs`` on ``source``: once, or ``args.rounds`` pairs of runs alternately with the
    ref's code (``--before``) or with its floor (``--floor``, on the snapshot): :func:`alternately`."""
    common = ["--master", args.master, "--driver-memory", args.driver_memory, "--max-findings", "20", *extra]
    before = code_of(args.before, ("control_plane", "spark_jobs")) if args.before else None
    other = "before" if before is not None else "floor" if args.floor and source == "snapshot" else None
    results: dict[str, Any] = {}
    for job in args.jobs:
        own = ["--no-sidecar"] if job == "offsets-reconcile" and source == "kafka" else []
        out = {w: args.out / f"{job}-{source}{'' if w == 'after' else '-' + w}" for w in ("after", "before", "floor")}

        def one(which: str, job: str = job, own: list[str] = own, out: dict[str, Path] = out) -> dict[str, float]:
            code, python = (before, args.before_python) if which == "before" else (None, sys.executable)
            module, first = (FLOOR, [job]) if which == "floor" else (JOBS[job], [])
            return run_job(module, [*first, *common, *own, "--out", str(out[which])], code, python)

        ref = args.before if args.before_python == sys.executable else f"{args.before} on {args.before_python}"
        results[job] = alternately(args, job, source, "", other, one, decoded[job], out, ref)
    return results


FLOOR = "bench.spark_floor"


def alternately(
    args: argparse.Namespace,
    job: str,
    source: str,
    engine: str,
    other: str | None,
    one: Callable[[str], dict[str, float]],
    records: int,
    out: dict[str, Path],
    ref: str | None = None,
) -> dict[str, Any]:
    """``job``'s runs (``one(which)``: this checkout's, after; the ref's, before; or its floor's), each
    printed: once, or ``args.rounds`` pairs beside ``other`` in :func:`order`, with the outputs (``out``:
    each side's folder) compared after each pair; the last run's figures, and :func:`compared`'s."""
    runs: dict[str, list[dict[str, float]]] = {"after": [], "before": [], "floor": []}
    differences: list[str] = []
    for round_ in range(args.rounds if other else 1):
        for which in order(other, round_):
            figures = {**one(which), "records": records}
            runs[which].append(figures)
            name = "job" if other == "floor" and which == "after" else which
            label = f"{engine} " if other is None else f"{engine + ' ' if engine else ''}{name} {round_ + 1}"
            print(_line(job, source, f"{label:9} " if label.strip() else "", records, figures), flush=True)
        if other is not None:
            differences += [f"round {round_ + 1}: {d}" for d in _differences(job, other, out["after"], out[other])]
    if other is None:
        return runs["after"][-1]
    figures = {**runs["after"][-1], **compared(runs, differences, ref, other)}
    print(f"{job:18} {source:8} {engine + ' ' if engine else ''}{figures['summary']}", flush=True)
    return figures


def order(other: str | None, round_: int) -> list[str]:
    """A round's runs: this checkout's alone, or beside the ref's (before, after; then after, before) or
    the floor's (the job, its floor; then its floor, the job)."""
    if other is None:
        return ["after"]
    pair = ["before", "after"] if other == "before" else ["after", other]
    return pair[:: 1 if round_ % 2 == 0 else -1]


def _differences(job: str, other: str, after: Path, theirs: Path) -> list[str]:
    """What differs between this checkout's outputs and the ref's (all of them), or the floor's (the job's
    main tables, on the columns both have: :func:`bench.spark_floor.different_rows`)."""
    if other == "before":
        return different_outputs(theirs, after)
    differences = []
    for table in TABLES[job]:
        rows, floor_rows, only = different_rows(table, after, theirs)
        if only:
            differences.append(f"tables/{table}: {rows:,} rows against the floor's {floor_rows:,}; " + "; ".join(only))
    return differences


def compared(
    runs: dict[str, list[dict[str, float]]], differences: list[str], ref: str | None, other: str = "before"
) -> dict[str, Any]:
    """This checkout's figures against the other side's over pairs of runs (``runs``: each side's, in the
    same order), the ref's (``other`` before) or the floor's (floor): the ratios of the means of wall time,
    CPU seconds and peak memory, the pairs this checkout's run was faster in, whether the outputs agree."""
    n = len(runs["after"])

    def mean(which: str, key: str) -> float:
        return sum(f[key] for f in runs[which]) / n

    ratio, cpu, memory = (mean("after", k) / mean(other, k) for k in ("seconds", "cpu_seconds", "tree"))
    faster = sum(a["seconds"] < b["seconds"] for a, b in zip(runs["after"], runs[other], strict=True))
    wall = {w: ", ".join(f"{f['seconds']:.1f}" for f in runs[w]) for w in ("after", other)}
    ours, theirs, what = ("after", "before", "outputs") if other == "before" else ("job", "floor", "answers")
    summary = (
        f"{ours} {mean('after', 'seconds'):.1f} s ({wall['after']}) against {theirs}"
        + (f" ({ref})" if other == "before" else "")
        + f" {mean(other, 'seconds'):.1f} s ({wall[other]}): {ours} / {theirs} {ratio:.2f}, CPU {cpu:.2f}, "
        f"peak memory {memory:.2f}; {ours} faster in {faster} of {n} pairs; {what} "
        + ("the same in every round" if not differences else f"DIFFERENT: {'; '.join(differences[:5])}")
    )
    return {
        other: {"ref": ref, "runs": runs[other]} if other == "before" else {"runs": runs[other]},
        "rounds": runs["after"],
        "ratio": ratio,
        "cpu_ratio": cpu,
        "memory_ratio": memory,
        "after_faster": faster,
        "same_outputs": not differences,
        "summary": summary,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--records", default="1000000,10000000", help="offset records, one size or several (default 1 M and 10 M)"
    )
    p.add_argument("--connectors", type=int, default=1000)
    p.add_argument("--partitions", type=int, default=10, help="source partitions per connector")
    p.add_argument("--status-records", type=int, help="state changes and topic records (default: a tenth of --records)")
    p.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "spark")
    p.add_argument("--master", default="local[2]")
    p.add_argument("--driver-memory", default="1g")
    p.add_argument("--reuse", action="store_true", help="keep an existing snapshot of the same size")
    p.add_argument("--sources", default="snapshot,kafka", help="snapshot, kafka or both (kafka needs a broker)")
    p.add_argument("--kafka-bootstrap", default=os.environ.get("KAFKA_BOOTSTRAP"), help="default: $KAFKA_BOOTSTRAP")
    p.add_argument("--jobs", default=",".join(JOBS), help=f"which of {', '.join(JOBS)} (default: both)")
    p.add_argument(
        "--warm",
        default=",".join(ENGINES),
        help=f"warm engines the snapshot's jobs run on too: {', '.join(ENGINES)}, or none (default: both)",
    )
    p.add_argument("--before", help="a git ref whose jobs run beside this checkout's, alternately (--rounds pairs)")
    p.add_argument("--rounds", type=int, default=3, help="with --before: pairs of runs of each job (default 3)")
    p.add_argument(
        "--before-python",
        default=sys.executable,
        help="with --before: the interpreter of the ref's side, e.g. another virtualenv's with another PySpark",
    )
    p.add_argument(
        "--floor",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="on the snapshot, cold and kept warm: each job's floor (bench/spark_floor.py) beside it, --rounds "
        "pairs alternately, its answer checked against the job's (default: on; not with --before)",
    )
    p.add_argument("--write-kafka", nargs=2, metavar=("SNAPSHOT", "NAMES_JSON"), help=argparse.SUPPRESS)
    args = p.parse_args()
    args.jobs = [j.strip() for j in args.jobs.split(",") if j.strip()]
    if os.sep in args.before_python:  # the ref's side runs in its code's folder; a venv's link is not resolved
        args.before_python = os.path.abspath(args.before_python)
    args.warm = [e.strip() for e in args.warm.split(",") if e.strip() and e.strip() != "none"]
    unknown = [j for j in args.jobs if j not in JOBS] + [e for e in args.warm if e not in ENGINES]
    sizes = [int(n) for n in args.records.replace("_", "").split(",") if n.strip()]
    if unknown or not args.jobs or args.rounds < 1 or not sizes:
        p.error(
            f"--jobs takes {', '.join(JOBS)}, --warm {', '.join(ENGINES)}; --records a size; --rounds at least 1"
            + (f" (not {', '.join(unknown)})" if unknown else "")
        )
    if args.write_kafka:  # the child process that fills the topics
        write_kafka(Path(args.write_kafka[0]), args.kafka_bootstrap, json.loads(args.write_kafka[1]))
        return
    args.out.mkdir(parents=True, exist_ok=True)
    runs = [run_size(args, records) for records in sizes]
    print_table(runs)
    (args.out / "results.json").write_text(json.dumps({"runs": runs}, indent=2))


ENGINES = ("kept", "connect")  # a kept local session, a Spark Connect server (bench.spark_warm)


def run_size(args: argparse.Namespace, records: int) -> dict[str, Any]:
    """Both sources' cold runs, and the warm engines' on the snapshot, at ``records`` offset records."""
    status_records = args.status_records if args.status_records is not None else records // 10
    snapshot = args.out / f"snapshot-{records}-{args.connectors}x{args.partitions}-{status_records}.parquet"
    if not (args.reuse and snapshot.exists()):
        started = time.monotonic()
        counts = generate(snapshot, records, args.connectors, args.partitions, status_records)
        took = time.monotonic() - started
        print(
            f"generated {counts['total']:,} records ({counts['offsets']:,} offset commits, {counts['status']:,} status "
            f"records) in {took:.0f}s: {snapshot} "
            f"({snapshot.stat().st_size / 2**20:.0f} MiB)"
        )
    table = pq.read_table(snapshot, columns=["topic"])
    topics = [*TOPICS.values(), HISTORY_TOPIC]
    per_topic = {t: table.filter(pa.compute.equal(table["topic"], pa.scalar(t))).num_rows for t in topics}
    decoded = {  # the records each job reads and decodes (offsets-reconcile reads neither status nor history)
        "offsets-reconcile": per_topic[TOPICS["config"]] + per_topic[TOPICS["offsets"]],
        "topic-audit": per_topic[TOPICS["config"]] + per_topic[TOPICS["status"]] + per_topic[HISTORY_TOPIC],
    }
    sources = [s.strip() for s in args.sources.split(",") if s.strip()]
    results: dict[str, Any] = {}
    warm: dict[str, Any] = {}
    if "snapshot" in sources:
        props = worker_properties(args.out / "bench-worker.properties", "127.0.0.1:9", TOPICS)
        extra = ["--worker-properties", str(props), "--snapshot", str(snapshot), "--offline"]
        results["snapshot"] = run_both(args, "snapshot", extra, decoded)
        if args.warm and not args.before:
            warm = run_warm(args, extra, decoded, table.num_rows)
    if "kafka" in sources and not args.kafka_bootstrap:
        print("kafka: skipped (no broker: --kafka-bootstrap or $KAFKA_BOOTSTRAP)")
    elif "kafka" in sources:
        results["kafka"] = from_kafka(args, snapshot, decoded)
    total = table.num_rows
    return {
        "records": total,
        "offset_records": records,
        "master": args.master,
        "driver_memory": args.driver_memory,
        "jobs": results,
        "warm": warm,
    }


def run_warm(args: argparse.Namespace, extra: list[str], decoded: dict[str, int], snapshot_rows: int) -> dict[str, Any]:
    """Each job's second run on a kept local session and on a Spark Connect server (its first run warms it).
    The kept session is built for ``snapshot_rows`` records, as a job's own start on the snapshot builds it
    (``spark_jobs.job.expected_records``: the snapshot's row count, which picks the JVM's compilers), not for
    the records the job decodes: topic-audit decodes a tenth of a large snapshot, and its kept session had
    a short job's JVM (the client compiler only) where its cold runs had the full compilers."""
    results: dict[str, Any] = {job: {} for job in args.jobs}
    for job in args.jobs:
        if "kept" in args.warm:
            common = ["--master", args.master, "--driver-memory", args.driver_memory, "--max-findings", "20", *extra]
            out = {w: args.out / f"{job}-snapshot-kept{'' if w == 'after' else '-' + w}" for w in ("after", "floor")}

            def one(
                which: str, job: str = job, common: list[str] = common, out: dict[str, Path] = out
            ) -> dict[str, float]:
                module, first = (FLOOR, [job]) if which == "floor" else (JOBS[job], [])
                args_ = [*first, *common, "--out", str(out[which])]
                load = os.getloadavg()[0]
                f = kept_session(module, args_, snapshot_rows, args.driver_memory, out[which] / "spark.log")
                return {**f, "load_before": load, **_load_after()}

            other = "floor" if args.floor else None
            results[job]["kept"] = alternately(args, job, "snapshot", "kept", other, one, decoded[job], out)
    if "connect" in args.warm:
        with connect_server(args.out / "spark-connect.log", args.driver_memory) as (url, pid):
            for job in args.jobs:
                load = os.getloadavg()[0]
                out = args.out / f"{job}-snapshot-connect"
                common = ["--max-findings", "20", *extra, "--out", str(out)]
                f = on_connect(JOBS[job], common, url, pid)
                figures = {**f, "load_before": load, "load_after": os.getloadavg()[0], "records": decoded[job]}
                results[job]["connect"] = figures
                print(_line(job, "snapshot", "connect   ", decoded[job], figures), flush=True)
                differences = different_outputs(args.out / f"{job}-snapshot", out)
                print(
                    f"{job:18} snapshot connect    outputs "
                    + (
                        "the same as cold local mode's"
                        if not differences
                        else f"DIFFERENT from cold local mode's: {', '.join(differences)}"
                    ),
                    flush=True,
                )
                figures["same_outputs"] = not differences
    return results


def print_table(runs: list[dict[str, Any]]) -> None:
    """Per size and job: cold (a fresh process), kept local session and Spark Connect (second runs); with
    ``--floor``, the job's wall time, CPU seconds and peak memory over its floor's."""
    head = f"{'job':18} {'offset records':>14} {'engine':8} {'records/s':>10} {'CPU s':>6} {'peak MiB':>8}"
    print(f"\n{head} {'start-up s':>10} {'job / floor: time':>17} {'CPU':>5} {'peak':>5} {'answers':>8}")
    for run in runs:
        for job in run["jobs"].get("snapshot", {}):
            engines = {"cold": run["jobs"]["snapshot"][job], **run["warm"].get(job, {})}
            for engine, f in engines.items():
                rate = f["records"] / f["seconds"]
                floor = (
                    f" {f['ratio']:>17.2f} {f['cpu_ratio']:>5.2f} {f['memory_ratio']:>5.2f} "
                    f"{'agree' if f['same_outputs'] else 'DIFFER':>8}"
                    if "floor" in f
                    else ""
                )
                print(
                    f"{job:18} {run['offset_records']:>14,} {engine:8} {rate:>10,.0f} {f['cpu_seconds']:>6.1f} "
                    f"{f['tree']:>8,.0f} {f['startup_s']:>10.1f}{floor}"
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
    command += ["--warm", "none", "--no-floor"]  # the cold runs only: make bench-spark measures the rest
    subprocess.run([*command, "--kafka-bootstrap", kafka_bootstrap or ""], cwd=ROOT, check=True)
    results = json.loads((out / "results.json").read_text())["runs"][0]
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
