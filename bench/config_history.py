"""Config history: how fast the sidecar answers the history of a connector with 1,000 changes, p50 and p99
of ``GET /_sidecar/connectors/{c}/history`` (every version, newest first, each with its key-level diff) and
of ``GET .../history/diff?from=<its oldest version>`` (to the newest); and how long the recording lags: from
the answer to the last change's PUT to its version being listed. The target: the history of a connector
with 1,000 changes answered in under 50 ms p50.

Connect has no history: the reference ("native") is the cheapest read of the same connector, ``GET
/connectors/{c}/config`` answered straight by the worker, its samples interleaved with the sidecar's in the
same run (history, native, diff; the order turns round each time), so that the machine's drift weighs on
both alike.

One sidecar process of this checkout in front of the stack's 3.4.1 worker, with a sidecars' topic of its
own (so it is the one that records, from the config topic's start); one FileStreamSource connector created
through it STOPPED (KIP-980, emulated on 3.4.1; an empty file, a topic of its own), then changed ``changes``
times, one PUT of its config at a time (``bench.revision``: 1, 2, ...): ``changes`` + 1 versions. Stopped,
as a running connector's each change restarts it and its task, which takes the 3.4.1 worker about a second
(a stopped one's, a few tens of ms). Against the workers of ``make stack-up`` (``.stack/env``); the
connector is deleted at the end.
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.common import WORK, pct, print_table, row, save, stack_env, start_sidecar  # noqa: E402
from bench.kip875 import FILE_SOURCE, REBALANCE  # noqa: E402

TITLE = "11. config history: a connector's history and diff, versus GET /connectors/{c}/config on the worker"
REVISION = "bench.revision"


def put_config(client: httpx.Client, name: str, config: dict[str, str]) -> float:
    """Seconds the PUT took; a 409 of a rebalance of the shared cluster (another user's change) is sent
    again."""
    for _ in range(50):
        t = time.perf_counter()
        answer = client.put(f"/connectors/{name}/config", json=config)
        elapsed = time.perf_counter() - t
        if not (answer.status_code == 409 and answer.text.startswith(REBALANCE)):
            break
        time.sleep(0.2)
    if answer.status_code not in (200, 201):
        raise SystemExit(f"PUT /connectors/{name}/config: {answer.status_code} {answer.text[:300]}")
    return elapsed


def create_stopped(client: httpx.Client, name: str, config: dict[str, str]) -> None:
    answer = client.post("/connectors", json={"name": name, "config": config, "initial_state": "STOPPED"})
    if answer.status_code != 201:
        raise SystemExit(f"creating {name}: {answer.status_code} {answer.text[:300]}")


def timed_get(client: httpx.Client, path: str) -> tuple[float, int]:
    """Seconds a GET took and the bytes of its answer; a 409 of a rebalance or a config change of the shared
    cluster (another user's) is no sample: sent again."""
    for _ in range(50):
        t = time.perf_counter()
        answer = client.get(path)
        elapsed = time.perf_counter() - t
        if not (answer.status_code == 409 and answer.text.startswith(REBALANCE)):
            break
        time.sleep(0.2)
    if answer.status_code != 200:
        raise SystemExit(f"GET {path}: {answer.status_code} {answer.text[:300]}")
    return elapsed, len(answer.content)


def history_of(client: httpx.Client, name: str) -> dict[str, Any] | None:
    """The connector's history (None: none yet, a 404)."""
    answer = client.get(f"/_sidecar/connectors/{name}/history")
    if answer.status_code == 404:
        return None
    if answer.status_code != 200:
        raise SystemExit(f"GET /_sidecar/connectors/{name}/history: {answer.status_code} {answer.text[:300]}")
    body: dict[str, Any] = answer.json()
    return body


def wait_versions(client: httpx.Client, name: str, count: int, timeout_s: float) -> tuple[float, dict[str, Any]]:
    """Seconds until the history lists ``count`` versions (polled back to back), and that history."""
    started = time.perf_counter()
    deadline = started + timeout_s
    listed = 0
    while True:
        history = history_of(client, name)
        listed = len(history["versions"]) if history is not None else 0
        if history is not None and listed >= count:
            return time.perf_counter() - started, history
        if time.perf_counter() > deadline:
            shown = problems_of(history, count - 1)[:5] if history is not None else []
            raise SystemExit(f"{name}: {listed} versions listed after {timeout_s:g} s, {count} expected: {shown}")
        time.sleep(0.01)


def revisions(changes: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """A diff's changes as (key, op, before, after)."""
    return [(c["name"], c["op"], c.get("before"), c.get("after")) for c in changes]


def problems_of(history: dict[str, Any], changes: int) -> list[str]:
    """What the history shows that it should not: the versions of a creation with ``REVISION`` 0 and then
    one change of it each, to 1, 2, ..., ``changes``."""
    versions = history["versions"][::-1]  # oldest first
    found = []
    if len(versions) != changes + 1:
        found.append(f"{len(versions)} versions, {changes + 1} expected")
    ids = [v["version"] for v in versions]
    if ids != sorted(set(ids)):
        found.append("the versions are not distinct and newest first")
    for i, version in enumerate(versions):
        if i == 0:
            expected_kind, expected = "created", None
        else:
            expected_kind = "updated"
            expected = [(REVISION, "changed", str(i - 1), str(i))]
        if version["change"] != expected_kind or (expected is not None and revisions(version["changes"]) != expected):
            found.append(f"version {i} ({version['version']}): {version['change']} {version['changes']}")
            if len(found) > 10:
                break
    return found


def run(env: dict[str, str], changes: int, samples: int, warmup: int = 10, check_s: float = 0.25) -> dict[str, Any]:
    """Section 11 of the suite."""
    WORK.mkdir(parents=True, exist_ok=True)
    tag = uuid.uuid4().hex[:6]
    name = f"bench-history-{tag}"
    lines = WORK / f"history-{tag}.txt"
    lines.write_text("")
    sidecar_env = {
        "CONTROL_PLANE_SIDECARS_TOPIC": f"{name}.control-plane",
        "CONTROL_PLANE_HISTORY_CHECK_S": str(check_s),
    }
    config = {"connector.class": FILE_SOURCE, "tasks.max": "1", "file": str(lines), "topic": f"{name}-t"}
    sidecar = start_sidecar(f"sidecar-history-{tag}", env["CONNECT_PROPERTIES_OLD"], sidecar_env)
    seen: dict[str, list[float]] = {"history": [], "diff": [], "native": []}
    try:
        with (
            httpx.Client(base_url=sidecar.url, timeout=120) as client,
            httpx.Client(base_url=env["CONNECT_URL_OLD"], timeout=60) as worker,
        ):
            try:
                create_stopped(client, name, {**config, REVISION: "0"})
                print(f"  {changes} changes of {name} ...", file=sys.stderr, flush=True)
                started = time.perf_counter()
                puts = [put_config(client, name, {**config, REVISION: str(i)}) for i in range(1, changes + 1)]
                writing_s = time.perf_counter() - started
                recording_s, history = wait_versions(client, name, changes + 1, 300)
                problems = problems_of(history, changes)
                oldest = history["versions"][-1]["version"]
                paths = {
                    "history": (client, f"/_sidecar/connectors/{name}/history"),
                    "diff": (client, f"/_sidecar/connectors/{name}/history/diff?from={oldest}"),
                    "native": (worker, f"/connectors/{name}/config"),
                }
                sizes: dict[str, int] = {}
                print(f"  {samples} reads of each, interleaved ...", file=sys.stderr, flush=True)
                kinds = list(paths)
                for i in range(warmup + samples):
                    order = kinds[i % 3 :] + kinds[: i % 3]
                    for kind in order:
                        elapsed, sizes[kind] = timed_get(*paths[kind])
                        if i >= warmup:
                            seen[kind].append(elapsed)
                diffed = client.get(paths["diff"][1]).json()
                if revisions(diffed["changes"]) != [(REVISION, "changed", "0", str(changes))]:
                    problems.append(f"the diff from version {oldest}: {diffed['changes']}")
                listed = history_of(client, name) or {"versions": []}
                unattributed = [v["version"] for v in listed["versions"] if v["who"] is None]
                if len(listed["versions"]) != changes + 1:
                    problems.append(f"after the reads: {len(listed['versions'])} versions")
            finally:
                worker.delete(f"/connectors/{name}")
    finally:
        sidecar.stop()
        lines.unlink(missing_ok=True)
    figures = {kind: {"p50_ms": pct(s, 0.5), "p99_ms": pct(s, 0.99), "bytes": sizes[kind]} for kind, s in seen.items()}
    native = figures["native"]
    rows = [
        row(f"history of {changes:,} changes, p50", native["p50_ms"], figures["history"]["p50_ms"], "ms", "< 50 ms"),
        row(f"history of {changes:,} changes, p99", native["p99_ms"], figures["history"]["p99_ms"], "ms"),
        row("diff from the oldest version, p50", native["p50_ms"], figures["diff"]["p50_ms"], "ms"),
        row("diff from the oldest version, p99", native["p99_ms"], figures["diff"]["p99_ms"], "ms"),
        row("the last change's PUT answered to its version listed", None, recording_s * 1000, "ms"),
    ]
    return {
        "changes": changes,
        "samples": samples,
        "history_check_s": check_s,
        "reads": figures,
        "recording_ms": recording_s * 1000,
        "writes": {"seconds": writing_s, "put_p50_ms": pct(puts, 0.5), "put_p99_ms": pct(puts, 0.99)},
        "problems": problems,
        "unattributed": unattributed,  # versions written through the sidecar that name no principal
        "rows": rows,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--changes", type=int, default=1000, help="changes of the connector's config")
    parser.add_argument("--samples", type=int, default=200, help="measured reads of each kind")
    parser.add_argument("--check", type=float, default=0.25, help="the sidecar's HISTORY_CHECK_S")
    args = parser.parse_args()
    results = run(stack_env(), args.changes, args.samples, check_s=args.check)
    print_table(TITLE, results["rows"])
    w = results["writes"]
    print(f"{results['changes']} PUTs in {w['seconds']:.1f} s", end=" ")
    print(f"(p50 {w['put_p50_ms']:.1f} ms, p99 {w['put_p99_ms']:.1f} ms)")
    if results["unattributed"]:
        print(f"versions naming no principal (who: null): {results['unattributed']}")
    for problem in results["problems"]:
        print(f"problem: {problem}")
    print(f"results: {save(results, 'config-history')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
