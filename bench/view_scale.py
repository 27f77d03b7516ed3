"""The materialized view at scale: catch-up rate, memory, and GET /connectors?expand=status from the
view versus a native Connect worker holding the same cluster state.

Runs against the stack of ``make stack-up`` (``.stack/env``). It fills a fresh config and status topic
(by default 2,000 connectors, 10,000 tasks, 50,000 topic-tracking records) with the records a worker
writes, encoded by the project's codecs, then:
  1. catch-up: an in-process view reads the topics from the beginning; records per second applied;
  2. a third Connect 4.3.1 worker (its own group) on the same topics: the native side of the
     comparison (connector and task classes that do not exist, so it starts nothing heavy: it marks
     them FAILED and keeps serving their statuses);
  3. a sidecar process in front of it (from the worker's properties file): time to ready, RSS;
  4. GET /connectors?expand=status: sequential p50/p99, then req/s at a small concurrency, for the
     view and for the worker, in the same run.
Prints the figures; not a timed test. Stops what it started.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
import uuid
from pathlib import Path

import aiohttp
from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from control_plane.codecs import (  # noqa: E402
    ConfigRecord,
    ConnectorConfig,
    ConnectorStatus,
    StatusRecord,
    TaskCommit,
    TaskConfig,
    TaskStatus,
    TopicStatus,
    encode_config,
    encode_status,
)
from control_plane.view import MaterializedView  # noqa: E402
from tests.integration.broker import local_stack  # noqa: E402
from tests.integration.stack import ENV_FILE, read_env  # noqa: E402


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


Records = list[tuple[bytes, bytes | None]]  # (key, value) as a worker writes them


def generate(connectors: int, tasks_per: int, topics_per: int) -> tuple[Records, Records]:
    config: Records = []
    status: Records = []
    now = int(time.time() * 1000)
    for c in range(connectors):
        name = f"bench-connector-{c:05d}"
        props = {"connector.class": "bench.NoSuchSourceConnector", "tasks.max": str(tasks_per), "name": name}
        records: list[ConfigRecord] = [ConnectorConfig(name, props)]
        records += [TaskConfig(name, t, {"task.class": "bench.NoSuchTask", "n": str(t)}) for t in range(tasks_per)]
        records.append(TaskCommit(name, tasks_per))
        config += [encode_config(r) for r in records]
        states: list[StatusRecord] = [ConnectorStatus(name, "RUNNING", None, "bench-worker:8083", 1)]
        states += [TaskStatus(name, t, "RUNNING", None, "bench-worker:8083", 1) for t in range(tasks_per)]
        states += [TopicStatus(f"bench-topic-{c:05d}-{k}", name, k % tasks_per, now) for k in range(topics_per)]
        status += [encode_status(s) for s in states]
    return config, status


async def fill(bootstrap: str, group: str, config: Records, status: Records) -> dict[str, str]:
    topics = {"config": f"{group}-configs", "status": f"{group}-status", "offsets": f"{group}-offsets"}
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        compact = {"cleanup.policy": "compact"}
        await admin.create_topics(
            [
                NewTopic(topics["config"], 1, 1, topic_configs=compact),
                NewTopic(topics["status"], 5, 1, topic_configs=compact),
                NewTopic(topics["offsets"], 25, 1, topic_configs=compact),
            ]
        )
    finally:
        await admin.close()
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=20, max_batch_size=1 << 20, acks="all")
    await producer.start()
    try:
        for topic, records in ((topics["config"], config), (topics["status"], status)):
            futures = [await producer.send(topic, key=k, value=v) for k, v in records]
            await asyncio.gather(*futures)
    finally:
        await producer.stop()
    return topics


async def catch_up(bootstrap: str, topics: dict[str, str], total: int) -> tuple[float, dict[str, int]]:
    view = MaterializedView(
        {"bootstrap_servers": bootstrap},
        config_topic=topics["config"],
        status_topic=topics["status"],
        offsets_topic=None,
    )
    started = time.perf_counter()
    await view.start()
    try:
        await asyncio.gather(*(tail.caught_up.wait() for tail in view.tails.values()))  # view.ready
        elapsed = time.perf_counter() - started
        counts = view.state.counts()
        assert sum(view.applied.values()) >= total, (view.applied, total)
    finally:
        await view.stop()
    return elapsed, counts


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def load(url: str, sequential: int, concurrency: int, seconds: float) -> dict[str, float]:
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency * 2)) as session:

        async def one() -> tuple[float, int]:
            t = time.perf_counter()
            async with session.get(url) as r:
                body = await r.read()
                assert r.status == 200, (r.status, body[:200])
            return time.perf_counter() - t, len(body)

        for _ in range(5):
            await one()
        seq = [await one() for _ in range(sequential)]
        done: list[float] = []
        stop_at = time.perf_counter() + seconds

        async def worker() -> None:
            while time.perf_counter() < stop_at:
                done.append((await one())[0])

        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        rps = len(done) / (time.perf_counter() - t0)
    return {
        "p50": pct([s for s, _ in seq], 0.5),
        "p99": pct([s for s, _ in seq], 0.99),
        "rps": rps,
        "bytes": seq[-1][1],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--connectors", type=int, default=2000)
    parser.add_argument("--tasks-per-connector", type=int, default=5)
    parser.add_argument("--topics-per-connector", type=int, default=25)
    parser.add_argument("--requests", type=int, default=100, help="sequential requests for p50/p99")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    if not ENV_FILE.exists():
        raise SystemExit(f"no running stack ({ENV_FILE} missing): run make stack-up first")
    env = read_env()
    bootstrap = env["KAFKA_BOOTSTRAP"]
    stack = local_stack()
    group = f"bench-{uuid.uuid4().hex[:6]}"

    t = time.perf_counter()
    config, status = generate(args.connectors, args.tasks_per_connector, args.topics_per_connector)
    total = len(config) + len(status)
    print(
        f"generated {len(config):,} config and {len(status):,} status records in {time.perf_counter() - t:.1f}s",
        flush=True,
    )
    t = time.perf_counter()
    topics = asyncio.run(fill(bootstrap, group, config, status))
    print(f"produced them to {topics['config']} and {topics['status']} in {time.perf_counter() - t:.1f}s", flush=True)

    elapsed, counts = asyncio.run(catch_up(bootstrap, topics, total))
    print(
        f"in-process view caught up on {total:,} records in {elapsed:.2f}s: {total / elapsed:,.0f} records/s; {counts}",
        flush=True,
    )

    procs = []
    try:
        t = time.perf_counter()
        worker = stack.start_connect(group, stack.NEW_VERSION, bootstrap)
        procs.append(worker)
        stack.wait_until(worker, lambda: stack.connect_ready(worker.url), "answer GET /connectors", 600)
        worker_ready = time.perf_counter() - t
        print(f"native worker {stack.NEW_VERSION} ready in {worker_ready:.1f}s", flush=True)
        t = time.perf_counter()
        sidecar = stack.start_sidecar(f"sidecar-{group}", worker.extra["properties"])
        procs.append(sidecar)
        stack.wait_until(sidecar, lambda: stack.sidecar_ready(sidecar.url), "become ready", 300)
        sidecar_ready = time.perf_counter() - t
        print(
            f"sidecar process ready (view caught up) in {sidecar_ready:.1f}s, RSS {rss_mib(sidecar.pid):.0f} MiB",
            flush=True,
        )

        path = "/connectors?expand=status"
        results = {}
        for name, base in (("native worker", worker.url), ("sidecar view", sidecar.url)):
            print(f"measuring {path} on the {name} ...", flush=True)
            results[name] = asyncio.run(load(base + path, args.requests, args.concurrency, args.seconds))
        rss_after = rss_mib(sidecar.pid)
    finally:
        stack.stop(procs)

    print(
        f"\n{args.connectors:,} connectors, {args.connectors * args.tasks_per_connector:,} tasks, "
        f"{args.connectors * args.topics_per_connector:,} topic records ({total:,} records)"
    )
    print(f"catch-up (in-process view):  {total / elapsed:,.0f} records/s ({elapsed:.2f}s)")
    print(f"sidecar process to ready:    {sidecar_ready:.1f}s; RSS after load {rss_after:.0f} MiB")
    print(f"native worker to ready:      {worker_ready:.1f}s")
    print(f"\nGET {path} ({results['native worker']['bytes'] / 1024:.0f} KiB answer)")
    print(
        f"{'':<16}{'p50 ms':>9}{'p99 ms':>9}{'req/s':>9}   "
        f"(sequential x{args.requests}; then {args.concurrency} concurrent for {args.seconds:.0f}s)"
    )
    for name, r in results.items():
        print(f"{name:<16}{r['p50']:>9.1f}{r['p99']:>9.1f}{r['rps']:>9.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
