"""What the proxy hop costs: a proxied ``GET`` (one the view does not answer) through a sidecar of this
checkout versus the worker itself, with wrk as the load generator (its own process):
  - p50 and p99 at concurrency 1, then req/s and p99 at concurrency 32;
  - the CPU time per request of the sidecar process (and of the worker's JVM), from ``/proc``.

Standalone it runs against the worker of ``make stack-up`` (``.stack/env``, or ``STACK_DIR``) with a
sidecar process of its own; ``make bench`` runs it on its own worker (bench/suite.py).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.common import code_of, http_get, print_table, row, save, stack_env, start_sidecar, wrk  # noqa: E402
from tests.support.sidecar_process import SidecarProcess  # noqa: E402
from tests.support.stack import STACK_DIR  # noqa: E402


def run(
    worker_url: str,
    worker_pid: int | None,
    sidecar: SidecarProcess,
    path: str,
    seconds: float,
    before: SidecarProcess | None = None,
) -> dict[str, Any]:
    """Section 1 of the suite. Each wrk run watches the CPU of the process it loads. ``before``: a sidecar
    of the code before a change, measured the same way in the same run."""
    sides: list[tuple[str, str, int | None]] = [
        ("native", worker_url, worker_pid),
        ("sidecar", sidecar.url, sidecar.pid),
    ]
    if before is not None:
        sides.insert(1, ("before", before.url, before.pid))
    loads: dict[str, Any] = {}
    for concurrency in (1, 32):
        for name, base, pid in sides:
            print(f"  GET {path} on the {name}, c={concurrency} ...", file=sys.stderr, flush=True)
            watch = {name: pid} if pid else {}
            if name != "native" and worker_pid:
                watch["worker behind the sidecar"] = worker_pid
            loads[f"{name}.c{concurrency}"] = wrk(base + path, concurrency, seconds, watch).as_dict()

    def fig(side: str, concurrency: int, key: str) -> float | None:
        load = loads.get(f"{side}.c{concurrency}")
        if load is None:
            return None
        return load["cpu_ms_per_request"].get(side) if key == "cpu" else load[key]  # type: ignore[no-any-return]

    def line(what: str, concurrency: int, key: str, unit: str, target: str = "") -> dict[str, Any]:
        sidecar_figure = fig("sidecar", concurrency, key)
        assert sidecar_figure is not None
        return row(what, fig("native", concurrency, key), sidecar_figure, unit, target, fig("before", concurrency, key))

    rows = [
        line("proxied GET, c=1, p50", 1, "p50_ms", "ms", "<= native + 0.3 ms"),
        line("proxied GET, c=1, p99", 1, "p99_ms", "ms"),
        line("proxied GET, c=32", 32, "rps", "req/s", ">= 0.7x native"),
        line("proxied GET, c=32, p99", 32, "p99_ms", "ms"),
        line("CPU per request, c=32 (native: the JVM)", 32, "cpu", "ms", "sidecar <= 0.25 ms"),
        line("CPU per request, c=1 (native: the JVM)", 1, "cpu", "ms"),
    ]
    return {"path": path, "seconds": seconds, "loads": loads, "rows": rows}


def stack_pid(name: str) -> int | None:
    pids = STACK_DIR / "pids.json"
    if not pids.exists():
        return None
    return next((int(p["pid"]) for p in json.loads(pids.read_text()) if p["name"] == name), None)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=5.0, help="each wrk run")
    parser.add_argument("--before", help="a git ref: also measure a sidecar of that code (before/after)")
    parser.add_argument("--path", help="default: GET /connectors/{the first connector}, else /connector-plugins")
    args = parser.parse_args()
    env = stack_env()
    path = args.path
    if path is None:
        names = json.loads(http_get(env["CONNECT_URL"] + "/connectors")[1])
        path = f"/connectors/{names[0]}" if names else "/connector-plugins"
    sidecar = start_sidecar("sidecar-proxy-hop", env["CONNECT_PROPERTIES"])
    before = None
    try:
        if args.before:
            before = start_sidecar("sidecar-before", env["CONNECT_PROPERTIES"], code=code_of(args.before))
        results = run(env["CONNECT_URL"], stack_pid("connect-new"), sidecar, path, args.seconds, before)
    finally:
        sidecar.stop()
        if before is not None:
            before.stop()
    print_table(f"proxy hop: GET {path}", results["rows"])
    print(f"results: {save(results, 'proxy-hop')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
