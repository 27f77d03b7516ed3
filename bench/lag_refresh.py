"""The sinks' lag refresh at 2,000 sink connectors: its time and its cost to the broker (requests per
refresh). The refresh is ``domain.lag.SinkLags.refresh`` of this checkout, against the stack's broker: 2,000
consumer groups (``connect-<name>``) with offsets committed on a topic of 8 partitions, and a view holding
2,000 sink connectors' configs (no connector runs: the refresh reads the groups and the topic, not the
workers). Connect has no lag of its own: no native figure. Against ``make stack-up`` (``.stack/env``).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from aiokafka.admin import AIOKafkaAdminClient, NewTopic  # noqa: E402

from bench.common import pct, print_table, row, save, stack_env  # noqa: E402
from control_plane.codecs import ConnectorConfig  # noqa: E402
from control_plane.domain.lag import SinkLags  # noqa: E402
from control_plane.domain.offsets import WorkerKafka, sink_group_of  # noqa: E402
from control_plane.storage.consumer_groups import ConsumerGroups  # noqa: E402
from control_plane.storage.end_offsets import EndOffsets  # noqa: E402
from control_plane.view import ClusterView  # noqa: E402

TITLE = "10. the sinks' lag refresh (OffsetFetch per group, one ListOffsets), 2,000 sinks"
SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"
PARTITIONS = 8


async def measure(bootstrap: str, sinks: int, refreshes: int) -> dict[str, Any]:
    tag = uuid.uuid4().hex[:6]
    topic = f"bench-lag-{tag}"
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, PARTITIONS, 1)])
    finally:
        await admin.close()
    kafka = {"bootstrap_servers": bootstrap}
    groups = ConsumerGroups(kafka, 10_000)
    names = [f"bench-lag-{tag}-{i}" for i in range(sinks)]
    print(f"  committing the offsets of {sinks} groups ...", file=sys.stderr, flush=True)
    slots = asyncio.Semaphore(16)

    async def commit(name: str) -> None:
        async with slots:
            await groups.commit(f"connect-{name}", {(topic, p): 0 for p in range(PARTITIONS)})

    await asyncio.gather(*(commit(n) for n in names))
    state = ClusterView()
    for name in names:
        state.apply_config(ConnectorConfig(name, {"name": name, "connector.class": SINK, "topics": topic}))
    ends = EndOffsets(kafka, 10_000)
    lags = SinkLags(lambda: state, sink_group_of(WorkerKafka(bootstrap, None)), groups, ends, interval_s=30)
    took: list[float] = []
    requests = 0
    try:
        for _ in range(refreshes + 1):  # the first warms the end-offsets consumer up
            snapshot = await lags.refresh()
            if snapshot.error or len(snapshot.sinks) != sinks:
                raise SystemExit(f"the refresh failed: {snapshot.error}")
            took.append(snapshot.took_s)
            requests = snapshot.requests
    finally:
        await ends.stop()
    took = took[1:]
    return {
        "sinks": sinks,
        "refreshes": refreshes,
        "p50_s": pct(took, 0.5) / 1000,
        "max_s": max(took),
        "requests": requests,
    }


def run(env: dict[str, str], sinks: int, refreshes: int) -> dict[str, Any]:
    started = time.monotonic()
    figures = asyncio.run(measure(env["KAFKA_BOOTSTRAP"], sinks, refreshes))
    rows = [
        row(f"a refresh of {sinks} sinks, p50", None, figures["p50_s"] * 1000, "ms", "(interval: 30 s)"),
        row(f"a refresh of {sinks} sinks, slowest", None, figures["max_s"] * 1000, "ms"),
        row("requests to the broker per refresh", None, figures["requests"], "requests"),
    ]
    return {**figures, "wall_s": time.monotonic() - started, "rows": rows}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sinks", type=int, default=2000)
    parser.add_argument("--refreshes", type=int, default=5)
    args = parser.parse_args()
    results = run(stack_env(), args.sinks, args.refreshes)
    print_table(TITLE, results["rows"])
    print(f"results: {save(results, 'lag-refresh')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
