"""Auto-restart: how late each restart is after it was due, p50 and p99. The first restart of a run of
failures is due when the task's FAILED status record was written (its timestamp in the status topic); each
later one at the ``next_ms`` of the restart before it. When it was sent is the ``last_ms`` of its record in
the sidecars' topic (``codecs.auto_restart``). Connect has no auto-restart of its own: no native figure; the
target is under 1 s after the due time.

Two sidecar processes of this checkout in front of the stack's 3.4.1 worker, auto-restart on with a unit of
1 s (restarts due at once, then 2, 6, 12 s after the one before), a sidecars' topic of their own; the
connectors are the versioned test plugin's (``fail.until.file`` never there: each task fails after its
first poll, every time). Against the workers of ``make stack-up`` (``.stack/env``).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.common import WORK, pct, print_table, row, save, stack_env, start_sidecar  # noqa: E402
from control_plane.codecs import decode_status  # noqa: E402
from control_plane.codecs.auto_restart import RestartState, decode_state  # noqa: E402
from control_plane.codecs.status import TaskStatus  # noqa: E402
from tests.support.kafka_topics import TopicRecord, read_to_end  # noqa: E402

CONNECTOR = "org.example.versioned.VersionedSourceConnector"  # deploy/local/test-plugins/versioned
TITLE = "9. auto-restart: from the due time (a task's FAILED record, or the next restart's time) to the restart"


def lateness(
    names: list[str], status: list[TopicRecord], sidecars: list[TopicRecord]
) -> tuple[list[float], list[float]]:
    """Seconds late: of each first restart (after the first FAILED record of the connector's task), and of
    each later one (after the ``next_ms`` of the restart before)."""
    failed_at: dict[str, int] = {}
    for record in sorted(status, key=lambda r: r.timestamp):
        decoded = decode_status(record.key, record.value)
        if isinstance(decoded, TaskStatus) and decoded.connector in names and decoded.state == "FAILED":
            failed_at.setdefault(decoded.connector, record.timestamp)
    first, later = [], []
    previous: dict[str, RestartState] = {}
    for record in sidecars:  # one partition: in the order written
        state = decode_state(record.key, record.value)
        if not isinstance(state, RestartState) or state.connector not in names:
            continue
        before = previous.get(state.connector)
        if before is None and state.count == 1 and state.connector in failed_at:
            first.append((state.last_ms - failed_at[state.connector]) / 1000)
        elif before is not None and before.next_ms is not None and state.count == before.count + 1:
            later.append((state.last_ms - before.next_ms) / 1000)
        previous[state.connector] = state
    return first, later


def run(env: dict[str, str], connectors: int, seconds: float) -> dict[str, Any]:
    WORK.mkdir(parents=True, exist_ok=True)
    tag = uuid.uuid4().hex[:6]
    prefix = f"bench-ar-{tag}"
    topic = f"{prefix}.control-plane"
    sidecar_env = {
        "CONTROL_PLANE_AUTO_RESTART": "true",
        "CONTROL_PLANE_AUTO_RESTART_CONNECTORS": f"{prefix}-.*",
        "CONTROL_PLANE_AUTO_RESTART_BACKOFF_UNIT_S": "1",
        "CONTROL_PLANE_SIDECARS_TOPIC": topic,
    }
    names = [f"{prefix}-{i}" for i in range(connectors)]
    one = start_sidecar(f"sidecar-ar-a-{tag}", env["CONNECT_PROPERTIES_OLD"], sidecar_env)
    two = None
    try:
        two = start_sidecar(f"sidecar-ar-b-{tag}", env["CONNECT_PROPERTIES_OLD"], sidecar_env)
        with httpx.Client(base_url=one.url, timeout=60) as client:
            try:
                for name in names:
                    config = {"connector.class": CONNECTOR, "tasks.max": "1", "fail.until.file": str(WORK / "never")}
                    answer = client.put(f"/connectors/{name}/config", json=config)
                    if answer.status_code not in (200, 201):
                        raise SystemExit(f"creating {name}: {answer.status_code} {answer.text[:300]}")
                print(f"  {connectors} failing connectors, {seconds:g} s of restarts ...", file=sys.stderr, flush=True)
                time.sleep(seconds)
            finally:
                for name in names:
                    client.delete(f"/connectors/{name}")
        status_topic = _worker_property(env["CONNECT_PROPERTIES_OLD"], "status.storage.topic")
        status = asyncio.run(read_to_end(env["KAFKA_BOOTSTRAP"], status_topic)).records
        restarts = asyncio.run(read_to_end(env["KAFKA_BOOTSTRAP"], topic)).records
    finally:
        one.stop()
        if two is not None:
            two.stop()
    first, later = lateness(names, status, restarts)
    if not first or not later:
        raise SystemExit(f"too few restarts seen: {len(first)} first, {len(later)} later")
    figures = {
        "first_p50_ms": pct(first, 0.5),
        "first_p99_ms": pct(first, 0.99),
        "later_p50_ms": pct(later, 0.5),
        "later_p99_ms": pct(later, 0.99),
        "restarts": len(first) + len(later),
    }
    rows = [
        row("first restart after the FAILED record, p50", None, figures["first_p50_ms"], "ms", "< 1,000 ms"),
        row("first restart after the FAILED record, p99", None, figures["first_p99_ms"], "ms", "< 1,000 ms"),
        row("later restarts after their due time, p50", None, figures["later_p50_ms"], "ms", "< 1,000 ms"),
        row("later restarts after their due time, p99", None, figures["later_p99_ms"], "ms", "< 1,000 ms"),
    ]
    return {"connectors": connectors, "seconds": seconds, **figures, "rows": rows}


def _worker_property(path: str, key: str) -> str:
    for line in Path(path).read_text().splitlines():
        if line.startswith(f"{key}="):
            return line.split("=", 1)[1].strip()
    raise SystemExit(f"{path} has no {key}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--connectors", type=int, default=10, help="failing connectors")
    parser.add_argument("--seconds", type=float, default=25, help="how long they fail")
    args = parser.parse_args()
    results = run(stack_env(), args.connectors, args.seconds)
    print_table(TITLE, results["rows"])
    print(f"results: {save(results, 'auto-restart')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
