"""The sidecar of this checkout against the sidecar of a git ref, alternately: the proxied hop and the view's
reads of the suite's sections 1 and 2, each measured on both sidecars in every round, the first side taking
turns from round to round; the medians, their ratio (after / before) and each side's range.

    .venv/bin/python bench/alternate.py --before REF [--rounds 4] [--connectors 200]

One pass of the suite (``make bench ARGS="--before REF"``) measures each side once, one after the other: on
a machine whose speed drifts within minutes, the side measured second is measured on another machine. Here
both sidecars stand in front of the same Connect 4.3.1 worker of their own (``view_scale.bench_cluster``),
on the stack of ``make stack-up``; a table goes to stdout and every run to bench/results/alternate-*.json.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench import view_scale  # noqa: E402
from bench.common import code_of, save, stack_env, wrk  # noqa: E402

# (what, path, concurrency, seconds of each run)
CASES = (
    ("proxied GET, c=1", "/connectors/bench-connector-00000", 1, 3.0),
    ("proxied GET, c=32", "/connectors/bench-connector-00000", 32, 4.0),
    ("one status, c=1", "/connectors/bench-connector-00001/status", 1, 3.0),
    ("one status, c=32", "/connectors/bench-connector-00001/status", 32, 4.0),
    ("expand=status, c=8", "/connectors?expand=status", 8, 4.0),
)
FIGURES = (("rps", "req/s"), ("p50_ms", "ms"), ("cpu", "CPU ms per request"))


def measure(bootstrap: str, before: str, rounds: int, connectors: int) -> dict[str, list[dict[str, Any]]]:
    """Every wrk run, by ``<case>|<side>`` (side: ``before`` or ``after``), in the order they ran."""
    runs: dict[str, list[dict[str, Any]]] = {}
    with view_scale.bench_cluster(bootstrap, connectors, before_code=code_of(before)) as cluster:
        assert cluster.before is not None
        asyncio.run(view_scale.wait_ready_listing([cluster.before.url, cluster.sidecar.url], connectors))
        sides = [("before", cluster.before), ("after", cluster.sidecar)]
        for round_ in range(rounds):
            print(f"round {round_ + 1} of {rounds} ...", file=sys.stderr, flush=True)
            for side, sidecar in sides if round_ % 2 == 0 else reversed(sides):
                for what, path, concurrency, seconds in CASES:
                    load = wrk(sidecar.url + path, concurrency, seconds, {side: sidecar.pid}).as_dict()
                    load["cpu"] = load["cpu_ms_per_request"][side]
                    runs.setdefault(f"{what}|{side}", []).append(load)
    return runs


def table(runs: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    rows = []
    for what, _, _, _ in CASES:
        for key, unit in FIGURES:
            before = [load[key] for load in runs[f"{what}|before"]]
            after = [load[key] for load in runs[f"{what}|after"]]
            rows.append(
                {
                    "what": f"{what}, {unit}",
                    "before": statistics.median(before),
                    "after": statistics.median(after),
                    "ratio": round(statistics.median(after) / statistics.median(before), 3),
                    "before_range": [min(before), max(before)],
                    "after_range": [min(after), max(after)],
                }
            )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", required=True, help="the git ref whose sidecar is the reference")
    parser.add_argument("--rounds", type=int, default=4, help="rounds; each measures both sidecars (default 4)")
    parser.add_argument("--connectors", type=int, default=200, help="connectors of the worker (default 200)")
    args = parser.parse_args()
    runs = measure(stack_env()["KAFKA_BOOTSTRAP"], args.before, args.rounds, args.connectors)
    rows = table(runs)
    print(f"\n{args.rounds} rounds, medians (ratio = after / before; ranges over the rounds)")
    for r in rows:
        low_b, high_b = r["before_range"]
        low_a, high_a = r["after_range"]
        print(
            f"{r['what']:<42}{r['before']:>10,.2f}{r['after']:>10,.2f}{r['ratio']:>7.3f}"
            f"   before {low_b:,.2f}-{high_b:,.2f}, after {low_a:,.2f}-{high_a:,.2f}"
        )
    path = save({"before": args.before, "rounds": args.rounds, "rows": rows, "runs": runs}, "alternate")
    print(f"results: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
