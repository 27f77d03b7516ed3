"""Writes of one connector through a sidecar that must first take its fence from another sidecar, versus
the same writes native on the new worker (4.3.1): p50 and p99 of an emulated stop (of a stopped
connector), offsets alter and PATCH of its config (emulated: 3.4.1 has no PATCH).

Two sidecar processes of this checkout, A and B, stand in front of the old worker (3.4.1). Each measured
call through B follows a call of the same kind through A, so B claims a fence A held last, every time
(``domain.cluster.fence``: a claim appended and read back, the write, a release appended). The native calls go
straight to the new worker, interleaved with them in the same run. Against the workers of ``make
stack-up`` (``.stack/env``, or ``STACK_DIR``); it creates a STOPPED FileStreamSource connector on each
worker and deletes them at the end.
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
from bench.kip875 import FILE_SOURCE, REBALANCE, wait_for  # noqa: E402

KINDS = ("stop", "alter", "PATCH config")
TITLE = "8. writes through a sidecar taking the fence from another: emulated on 3.4.1 versus native on 4.3.1"
Call = tuple[str, str, Any, tuple[int, ...]]  # method, path, body, the statuses expected


def plan(kind: str, name: str, lines: Path, n: int) -> Call:
    """The ``n``-th call of ``kind``: each alter and PATCH writes a value of its own."""
    if kind == "stop":
        return "PUT", f"/connectors/{name}/stop", None, (204,)
    if kind == "alter":
        body = {"offsets": [{"partition": {"filename": str(lines)}, "offset": {"position": n}}]}
        return "PATCH", f"/connectors/{name}/offsets", body, (200,)
    return "PATCH", f"/connectors/{name}/config", {"bench.call": str(n)}, (200,)


def timed(client: httpx.Client, call: Call, gap_s: float) -> float:
    """Seconds the call took; a 409 of a rebalance of the shared cluster (another user's change) is not a
    sample: sent again."""
    method, path, body, expected = call
    for _ in range(20):
        time.sleep(gap_s)  # calls come one at a time, not back to back
        t = time.perf_counter()
        answer = client.request(method, path, json=body)
        elapsed = time.perf_counter() - t
        if not (answer.status_code == 409 and answer.text.startswith(REBALANCE)):
            break
    if answer.status_code not in expected:
        raise SystemExit(f"{client.base_url} {method} {path}: {answer.status_code} {answer.text[:300]}")
    return elapsed


def create_stopped(client: httpx.Client, name: str, lines: Path) -> None:
    """A connector created STOPPED (KIP-980; emulated on 3.4.1): no task ever runs, so no alter waits for one."""
    config = {"connector.class": FILE_SOURCE, "tasks.max": "1", "file": str(lines), "topic": f"{name}-t"}
    answer = client.post("/connectors", json={"name": name, "config": config, "initial_state": "STOPPED"})
    if answer.status_code != 201:
        raise SystemExit(f"creating {name}: {answer.status_code} {answer.text[:300]}")


def stopped(client: httpx.Client, name: str) -> bool:
    answer = client.get(f"/connectors/{name}/status")
    return answer.status_code == 200 and answer.json()["connector"]["state"] == "STOPPED"


def run(env: dict[str, str], samples: int, gap_s: float = 0.3) -> dict[str, Any]:
    """Section 8 of the suite."""
    WORK.mkdir(parents=True, exist_ok=True)
    tag = uuid.uuid4().hex[:6]
    lines = WORK / f"fence-{tag}.txt"
    lines.write_text("".join(f"line {i}\n" for i in range(10)))
    old, new = f"bench-fence-old-{tag}", f"bench-fence-new-{tag}"
    first = start_sidecar(f"sidecar-fence-a-{tag}", env["CONNECT_PROPERTIES_OLD"])
    second = None
    seen: dict[str, dict[str, list[float]]] = {side: {kind: [] for kind in KINDS} for side in ("sidecar", "native")}
    try:
        second = start_sidecar(f"sidecar-fence-b-{tag}", env["CONNECT_PROPERTIES_OLD"])
        with (
            httpx.Client(base_url=first.url, timeout=120) as a,
            httpx.Client(base_url=second.url, timeout=120) as b,
            httpx.Client(base_url=env["CONNECT_URL"], timeout=120) as native,
            httpx.Client(base_url=env["CONNECT_URL_OLD"], timeout=60) as old_worker,
        ):
            try:
                create_stopped(a, old, lines)
                create_stopped(native, new, lines)
                wait_for(lambda: stopped(b, old), f"{old} STOPPED through the second sidecar")
                wait_for(lambda: stopped(native, new), f"{new} STOPPED")
                print(f"  fenced writes, {samples} rounds ...", file=sys.stderr, flush=True)
                clients, names = {"a": a, "b": b, "native": native}, {"a": old, "b": old, "native": new}
                for i in range(samples + 1):  # the first round warms up
                    # A right before B, so B takes the fence A held last; the native call first or last in turn
                    order = ("a", "b", "native") if i % 2 == 0 else ("native", "a", "b")
                    for kind in KINDS:
                        took = {
                            who: timed(clients[who], plan(kind, names[who], lines, 3 * i + j), gap_s)
                            for j, who in enumerate(order)
                        }
                        if i:
                            seen["sidecar"][kind].append(took["b"])
                            seen["native"][kind].append(took["native"])
            finally:
                old_worker.delete(f"/connectors/{old}")
                native.delete(f"/connectors/{new}")
    finally:
        first.stop()
        if second is not None:
            second.stop()
    calls = {
        side: {kind: {"p50_ms": pct(s, 0.5), "p99_ms": pct(s, 0.99)} for kind, s in kinds.items()}
        for side, kinds in seen.items()
    }
    rows = []
    for kind in KINDS:
        native_p, fenced = calls["native"][kind], calls["sidecar"][kind]
        rows.append(row(f"{kind}, p50", native_p["p50_ms"], fenced["p50_ms"], "ms", "<= 2 x native"))
        rows.append(row(f"{kind}, p99", native_p["p99_ms"], fenced["p99_ms"], "ms"))
    return {"samples": samples, "calls": calls, "rows": rows}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=20, help="measured calls of each kind")
    parser.add_argument("--gap", type=float, default=0.3, help="seconds before each call")
    args = parser.parse_args()
    results = run(stack_env(), args.samples, args.gap)
    print_table(TITLE, results["rows"])
    print(f"results: {save(results, 'fence')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
