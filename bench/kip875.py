"""KIP-875 calls emulated by the sidecar on the old worker (3.4.1) versus the same calls native on the new
worker (4.3.1): p50 and p99 of stop (on a stopped connector: no task to wait for), offsets read, alter,
reset, and of a 404 (an unknown connector), and the sidecar's CPU per call.

Runs against the workers of ``make stack-up`` (``.stack/env``, or ``STACK_DIR``), with a sidecar process of
this checkout in front of the old worker; it creates a FileStreamSource connector on each worker and
deletes them at the end.
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
from bench.common import WORK, code_of, cpu_s, pct, print_table, row, save, stack_env, start_sidecar  # noqa: E402

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
# Connect's 409 while its cluster rebalances (HerderRequestHandler): the call did not run
REBALANCE = (
    '{"error_code":409,"message":"Cannot complete request momentarily',
    '{"error_code":409,"message":"Request cannot',
)


def wait_for(check: Any, what: str, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.2)


def calls(client: httpx.Client, name: str, lines: Path, samples: int, pid: int | None, gap_s: float) -> dict[str, Any]:
    """Each call ``samples`` times (after one to warm up): its latencies and the CPU ms per call of ``pid``."""
    partition = {"filename": str(lines)}
    plan: list[tuple[str, str, str, Any, tuple[int, ...]]] = [
        ("stop", "PUT", f"/connectors/{name}/stop", None, (204,)),
        ("offsets read", "GET", f"/connectors/{name}/offsets", None, (200,)),
        (
            "alter",
            "PATCH",
            f"/connectors/{name}/offsets",
            {"offsets": [{"partition": partition, "offset": {"position": 0}}]},
            (200,),
        ),
        ("reset", "DELETE", f"/connectors/{name}/offsets", None, (200,)),
        ("404", "GET", f"/connectors/{name}-missing/offsets", None, (404,)),
    ]
    out: dict[str, Any] = {}
    for what, method, path, body, expected in plan:
        seen: list[float] = []
        cpu = 0.0  # the sidecar's CPU seconds during the calls only (not in the gaps between them)
        for i in range(samples + 1):
            for _ in range(20):
                time.sleep(gap_s)  # calls come one at a time, not back to back
                before = cpu_s(pid) if pid else 0.0
                t = time.perf_counter()
                answer = client.request(method, path, json=body)
                elapsed = time.perf_counter() - t
                cpu += (cpu_s(pid) - before) if pid and i else 0.0
                if not (answer.status_code == 409 and answer.text.startswith(REBALANCE)):
                    break  # a rebalance of the shared cluster (another user's change): not a sample, again
            if answer.status_code not in expected:
                raise SystemExit(f"{method} {path}: {answer.status_code} {answer.text[:300]}")
            if i:
                seen.append(elapsed)
        out[what] = {
            "p50_ms": pct(seen, 0.5),
            "p99_ms": pct(seen, 0.99),
            "cpu_ms_per_call": cpu * 1000 / samples if pid else None,
        }
    return out


def run(env: dict[str, str], samples: int, gap_s: float = 0.7, before_code: Path | None = None) -> dict[str, Any]:
    """Section 5 of the suite. ``before_code``: a sidecar of the code before a change, measured the same way."""
    WORK.mkdir(parents=True, exist_ok=True)
    tag = uuid.uuid4().hex[:6]
    lines = WORK / f"kip875-{tag}.txt"
    lines.write_text("".join(f"line {i}\n" for i in range(10)))
    sidecar = start_sidecar(f"sidecar-kip875-{tag}", env["CONNECT_PROPERTIES_OLD"])
    before = None
    if before_code is not None:
        before = start_sidecar(f"sidecar-kip875-before-{tag}", env["CONNECT_PROPERTIES_OLD"], code=before_code)
    sides = {
        "native": (env["CONNECT_URL"], env["CONNECT_URL"], None),
        "sidecar": (sidecar.url, env["CONNECT_URL_OLD"], sidecar.pid),
    }
    if before is not None:
        sides["before"] = (before.url, env["CONNECT_URL_OLD"], before.pid)
    results: dict[str, Any] = {}
    try:
        for side, (base, worker, pid) in sides.items():
            name = f"bench-kip875-{side}-{tag}"
            config = {"connector.class": FILE_SOURCE, "tasks.max": "1", "file": str(lines), "topic": f"{name}-t"}
            with httpx.Client(base_url=base, timeout=120) as client, httpx.Client(base_url=worker, timeout=60) as w:
                try:
                    answer = client.put(f"/connectors/{name}/config", json=config)
                    assert answer.status_code == 201, answer.text
                    wait_for(lambda n=name: client.get(f"/connectors/{n}/status").json().get("tasks"), f"{name}'s task")
                    t = time.perf_counter()
                    answer = client.put(f"/connectors/{name}/stop")
                    assert answer.status_code in (202, 204), answer.text
                    wait_for(
                        lambda n=name: client.get(f"/connectors/{n}/status").json()["connector"]["state"] == "STOPPED",
                        f"{name} stopped",
                    )
                    first_stop = time.perf_counter() - t
                    print(f"  KIP-875 calls, {side} ...", file=sys.stderr, flush=True)
                    results[side] = calls(client, name, lines, samples, pid, gap_s)
                    results[side]["first stop"] = {"p50_ms": first_stop * 1000}
                finally:
                    w.delete(f"/connectors/{name}")
    finally:
        sidecar.stop()
        if before is not None:
            before.stop()
    rows = []
    for what in ("stop", "offsets read", "alter", "reset", "404"):
        native, emulated = results["native"][what], results["sidecar"][what]
        old = results.get("before", {}).get(what, {})
        rows.append(row(f"{what}, p50", native["p50_ms"], emulated["p50_ms"], "ms", "<= 50 ms", old.get("p50_ms")))
        rows.append(row(f"{what}, p99", native["p99_ms"], emulated["p99_ms"], "ms", "", old.get("p99_ms")))
    cpus = [r["cpu_ms_per_call"] for k, r in results["sidecar"].items() if k != "first stop"]
    rows.append(row("sidecar CPU per emulated call (mean, 10 ms ticks)", None, sum(cpus) / len(cpus), "ms"))
    rows.append(
        row(
            "first stop, until STOPPED",
            results["native"]["first stop"]["p50_ms"],
            results["sidecar"]["first stop"]["p50_ms"],
            "ms",
        )
    )
    return {"samples": samples, "calls": results, "rows": rows}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=20, help="calls of each kind")
    parser.add_argument("--gap", type=float, default=0.7, help="seconds between two calls")
    parser.add_argument("--before", help="a git ref: also measure a sidecar of that code (before/after)")
    args = parser.parse_args()
    results = run(stack_env(), args.samples, args.gap, code_of(args.before) if args.before else None)
    print_table("KIP-875: native on 4.3.1 versus emulated by the sidecar on 3.4.1", results["rows"])
    print(f"results: {save(results, 'kip875')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
