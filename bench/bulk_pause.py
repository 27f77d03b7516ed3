"""A bulk pause of 500 connectors: ``POST /_sidecar/bulk`` (``{"action": "pause", "selector": {"pattern":
...}}``) through a sidecar, beside the same 500 ``PUT /connectors/{c}/pause`` sent one at a time straight to
the worker (what a shell loop or a dashboard's "pause all" does without the sidecar), on the old worker
(3.4.1) and the newest (4.3.1), alternating (the order turns round each run) so that the machine's drift
weighs on both alike; p50 and slowest of the runs, and their ratio. Each connector's pause through the
sidecar is its single request's: fenced, forwarded, read back into the view before it counts as done,
``CONTROL_PLANE_BULK_CONCURRENCY`` (8) at a time.

Each version's cluster is one of its own, made cheaply (as bench/plan_apply.py makes its own): a config
topic filled with the records a worker writes for 500 FileStreamSource connectors that are PAUSED with no
task (each its config, an empty task set, its target state), a worker of that version on it (its own
group; it starts none of them), and one sidecar process of this checkout in front of it. A pause writes
the target state again: the worker's own work per pause is the same on both sides. Every run checks that
each connector's pause was done (the sidecar's per-connector results; the worker's 202s). The workers,
sidecars and the clusters' topics (``bench-bulk-<tag>*``) are removed at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import aiohttp
import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.common import WORK, pct, print_table, row, save, stack_env, start_sidecar  # noqa: E402
from bench.kip875 import FILE_SOURCE  # noqa: E402
from bench.plan_apply import delete_topics, wait_listing  # noqa: E402
from bench.view_scale import Records, fill  # noqa: E402
from control_plane.codecs import ConfigRecord, ConnectorConfig, TargetState, TaskCommit, encode_config  # noqa: E402
from tests.support.deploy_local import files_under, local_stack  # noqa: E402

JSON = {"Content-Type": "application/json"}  # aiohttp's default for a PUT is octet-stream: Jersey's 415
TITLE = "13. bulk pause of 500 connectors (POST /_sidecar/bulk), versus 500 PUT .../pause one at a time on the worker"


def cluster_records(prefix: str, connectors: int, lines: Path) -> tuple[Records, list[str]]:
    records: Records = []
    names = []
    for i in range(connectors):
        name = f"{prefix}-{i:05d}"
        config = {
            "connector.class": FILE_SOURCE,
            "tasks.max": "1",
            "file": str(lines),
            "topic": f"{name}-t",
            "name": name,
        }
        stored: list[ConfigRecord] = [
            ConnectorConfig(name, config),
            TaskCommit(name, 0),
            TargetState.of(name, "PAUSED"),
        ]
        records += [encode_config(r) for r in stored]
        names.append(name)
    return records, names


async def one_by_one(url: str, names: list[str]) -> float:
    """Seconds for ``PUT /connectors/{c}/pause`` of every name, one at a time, straight to the worker."""
    async with aiohttp.ClientSession(url, connector=aiohttp.TCPConnector(limit=1)) as session:
        started = time.perf_counter()
        for name in names:
            async with session.put(f"/connectors/{name}/pause", headers=JSON) as answer:
                body = await answer.read()
                if answer.status != 202:
                    raise SystemExit(f"PUT /connectors/{name}/pause: {answer.status} {body[:300]!r}")
        return time.perf_counter() - started


def bulk(client: httpx.Client, prefix: str, connectors: int) -> float:
    """Seconds for the bulk pause through the sidecar, end to end; every connector must be done."""
    started = time.perf_counter()
    answer = client.post("/_sidecar/bulk", json={"action": "pause", "selector": {"pattern": f"{prefix}-.*"}})
    elapsed = time.perf_counter() - started
    if answer.status_code != 200:
        raise SystemExit(f"POST /_sidecar/bulk: {answer.status_code} {answer.text[:300]}")
    counts = answer.json()["counts"]
    if counts != {"selected": connectors, "done": connectors, "refused": 0, "failed": 0}:
        failed = [i for i in answer.json()["connectors"] if i["result"] != "done"][:3]
        raise SystemExit(f"POST /_sidecar/bulk: {counts}, e.g. {failed}")
    return elapsed


def measure(version: str, bootstrap: str, connectors: int, runs: int) -> dict[str, list[float]]:
    tag = uuid.uuid4().hex[:6]
    group = f"bench-bulk-{tag}"
    lines = WORK / f"bulk-{tag}.txt"
    lines.write_text("")
    records, names = cluster_records(group, connectors, lines)
    asyncio.run(fill(bootstrap, group, records, []))
    worker: Any = None
    sidecar = None
    seen: dict[str, list[float]] = {"bulk": [], "one_by_one": []}
    try:
        with files_under(WORK):
            worker = local_stack.start_connect(group, version, bootstrap)
        local_stack.wait_until(worker, lambda: local_stack.connect_ready(worker.url), "answer GET /connectors", 600)
        wait_listing(worker.url, names)
        sidecar = start_sidecar(
            f"sidecar-bulk-{tag}",
            worker.extra["properties"],
            {"CONTROL_PLANE_SIDECARS_TOPIC": f"{group}.control-plane"},
        )
        print(f"  {version}: {connectors} connectors ready; {runs} runs of each ...", file=sys.stderr, flush=True)
        with httpx.Client(base_url=sidecar.url, timeout=600) as client:
            bulk(client, group, connectors)  # warm-up: the sidecar's fences and connections
            for i in range(runs):
                for kind in ("bulk", "one_by_one") if i % 2 == 0 else ("one_by_one", "bulk"):
                    if kind == "bulk":
                        seen[kind].append(bulk(client, group, connectors))
                    else:
                        seen[kind].append(asyncio.run(one_by_one(worker.url, names)))
    finally:
        if sidecar is not None:
            sidecar.stop()
        if worker is not None:
            local_stack.stop([worker])
        asyncio.run(delete_topics(bootstrap, group))
        lines.unlink(missing_ok=True)
    return seen


def run(env: dict[str, str], connectors: int = 500, runs: int = 3) -> dict[str, Any]:
    """Section 13 of the suite."""
    WORK.mkdir(parents=True, exist_ok=True)
    bootstrap = env["KAFKA_BOOTSTRAP"]
    samples = {v: measure(v, bootstrap, connectors, runs) for v in (local_stack.OLD_VERSION, local_stack.NEW_VERSION)}
    rows = []
    for version, seen in samples.items():
        native, sidecar = seen["one_by_one"], seen["bulk"]
        rows.append(
            row(f"{version}: pause of {connectors}, p50", pct(native, 0.5) / 1000, pct(sidecar, 0.5) / 1000, "s")
        )
        rows.append(row(f"{version}: pause of {connectors}, slowest", max(native), max(sidecar), "s"))
    return {
        "connectors": connectors,
        "runs": runs,
        "samples_s": {v: {k: [round(s, 4) for s in s_] for k, s_ in seen.items()} for v, seen in samples.items()},
        "rows": rows,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--connectors", type=int, default=500)
    parser.add_argument("--runs", type=int, default=3, help="runs of each kind, alternating")
    args = parser.parse_args()
    results = run(stack_env(), args.connectors, args.runs)
    print_table(TITLE, results["rows"])
    print(f"results: {save(results, 'bulk_pause')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
