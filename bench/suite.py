"""``make bench``: the benchmark suite, each figure beside its reference measured in the same run, and
their ratio; a table on stdout and JSON under bench/results/ (``bench-<time>.json``, ``bench-latest.json``).

Sections (the targets and the latest figures: docs/benchmarks.md):
  1. the proxy hop (bench/proxy_hop.py) and 2-4. view reads, freshness, catch-up (bench/view_scale.py),
     on a Connect 4.3.1 worker of its own (``--connectors``, 200 by default; 2,000 with ``--full``) with a
     sidecar process of this checkout in front;
  4. (also) the catch-up at the target's size: 1 M records (bench/catchup.py; 2,000 connectors, 480 topic
     records each; ``--quick``: 100 each), this checkout beside ``--before``, records/s (wall and CPU), RSS;
  5. KIP-875 calls emulated on 3.4.1 versus native on 4.3.1 (bench/kip875.py), on the stack's workers;
  6. a topics reset of a connector with 10,000 active topics (bench/topics_reset.py), on the cluster of 1-4;
  8. writes of a connector through a sidecar that takes its fence from another sidecar each time, emulated
     on 3.4.1 versus native on 4.3.1 (bench/fence_handover.py), on the stack's workers;
  9. auto-restart: how late each restart is after its due time (bench/auto_restart.py), two sidecars in
     front of the stack's 3.4.1 worker;
  10. the sinks' lag refresh at 2,000 sinks: its time and its requests to the broker (bench/lag_refresh.py);
  11. the config history of a connector with 1,000 changes (``--quick``: 200): its history and a diff read
      through a sidecar in front of the stack's 3.4.1 worker, and the recording's delay (bench/config_history.py).
  12. a plan over 2,000 connectors (all unchanged; then 20 of them updates; ``--quick``: 3 plans of each, else
      5) through a sidecar in front of a 4.3.1 worker of its own holding them STOPPED, versus ``GET
      /connectors/{c}/config`` of each on that worker (bench/plan_apply.py).
  13. a bulk pause of 500 connectors through a sidecar (``POST /_sidecar/bulk``) beside 500 pauses sent one at
      a time straight to the worker, on a 3.4.1 and a 4.3.1 worker of their own (bench/bulk_pause.py;
      ``--quick``: 2 runs of each, else 3).
  14. an apply creating 300 connectors on a cluster of three workers of the newest release (started here),
      rebalancing as they come, versus 300 sequential creates straight to a worker, alternating
      (bench/plan_apply.py).
The others are their own targets: ``make bench-view`` (2,000 connectors), ``make bench-spark``.
Runs against the stack of ``make stack-up`` (``make bench`` starts one when none runs). Takes a few
minutes with the defaults; ``--quick`` shortens every run.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench import (  # noqa: E402
    auto_restart,
    bulk_pause,
    catchup,
    config_history,
    fence_handover,
    kip875,
    lag_refresh,
    plan_apply,
    proxy_hop,
    spark_jobs,
    topics_reset,
    view_scale,
)
from bench.common import code_of, print_table, save, stack_env  # noqa: E402

Tables = list[tuple[str, list[dict[str, Any]]]]


def run_section(
    results: dict[str, Any], tables: Tables, key: str, label: str, title: str, measure: Callable[[], dict[str, Any]]
) -> None:
    """One section's figures under ``results[key]`` and its table, or its error: the other sections' figures
    are still shown."""
    print(f"{label} ...", file=sys.stderr, flush=True)
    try:
        figures = measure()
    except (SystemExit, Exception) as err:  # noqa: BLE001 - any failure of one section
        results[key] = {"error": str(err)}
        print(f"{label} failed: {err}", file=sys.stderr, flush=True)
    else:
        results[key] = figures
        tables.append((title, figures["rows"]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="short runs (2 s each, fewer samples)")
    parser.add_argument("--full", action="store_true", help="the targets' sizes: 2,000 connectors")
    parser.add_argument("--connectors", type=int, help="connectors of the view sections (default 200)")
    parser.add_argument("--seconds", type=float, help="each wrk run (default 5, --quick 2)")
    parser.add_argument("--before", help="a git ref: also measure that code, side by side (sections 1, 2, 3, 4, 5)")
    parser.add_argument(
        "--sections",
        default="1,2,4,5,6,8,9,10,11,12,13,14",
        help="which sections: 1 proxy, 2 view (2-4), 3 freshness alone (200 samples), 4 catch-up at 1 M records,"
        " 5 KIP-875, 6 topics reset, 7 Spark jobs (minutes; only when asked), 8 writes taking another"
        " sidecar's fence, 9 auto-restart, 10 lag refresh, 11 config history, 12 plan over 2,000 connectors,"
        " 13 bulk pause of 500 connectors, 14 an apply creating 300 connectors",
    )
    parser.add_argument("--kip875-samples", type=int, help="calls of each kind in section 5 (default 20)")
    parser.add_argument("--fence-samples", type=int, help="measured calls of each kind in section 8 (default 20)")
    parser.add_argument("--freshness-samples", type=int, help="samples of section 3 alone (default 200)")
    args = parser.parse_args()
    env = stack_env()
    seconds = args.seconds or (2.0 if args.quick else 5.0)
    connectors = args.connectors or (2000 if args.full else 200)
    sections = set(args.sections.split(","))
    results: dict[str, Any] = {"quick": args.quick, "seconds": seconds}
    tables: Tables = []
    if sections & {"1", "2", "3", "6"}:
        before_code = code_of(args.before) if args.before else None
        results["before"] = args.before
        with view_scale.bench_cluster(env["KAFKA_BOOTSTRAP"], connectors, before_code=before_code) as cluster:
            if "1" in sections:
                print("1. proxy hop ...", file=sys.stderr, flush=True)
                path = "/connectors/bench-connector-00000"
                hop = proxy_hop.run(
                    cluster.worker.url, cluster.worker.pid, cluster.sidecar, path, seconds, cluster.before
                )
                results["proxy_hop"] = hop
                tables.append((f"1. proxy hop: GET {path} (proxied), wrk", hop["rows"]))
            if "2" in sections:
                print("2-4. view ...", file=sys.stderr, flush=True)
                view = view_scale.measure(env["KAFKA_BOOTSTRAP"], cluster, seconds, 20 if args.quick else 50)
                results["view"] = view
                tables.append((f"2-4. view versus the worker, {connectors:,} connectors", view["rows"]))
            elif "3" in sections:
                print("3. freshness ...", file=sys.stderr, flush=True)
                samples = args.freshness_samples or (20 if args.quick else 200)
                fresh = view_scale.measure_freshness(env["KAFKA_BOOTSTRAP"], cluster, samples)
                results["freshness"] = fresh
                tables.append((f"3. freshness, {connectors:,} connectors", fresh["rows"]))
            if "6" in sections:
                run_section(
                    results,
                    tables,
                    "topics_reset",
                    "6. topics reset",
                    "6. topics reset (KIP-558) through the sidecar versus the worker",
                    lambda: topics_reset.run(cluster, env["KAFKA_BOOTSTRAP"], before_code=before_code),
                )
    if "4" in sections:
        print("4. catch-up at 1 M records ...", file=sys.stderr, flush=True)
        group, total = catchup.fill_topics(env["KAFKA_BOOTSTRAP"], 2000, 5, 100 if args.quick else 480)
        try:
            caught = catchup.measure(env["KAFKA_BOOTSTRAP"], group, total, args.before, 1 if args.quick else 2)
        finally:
            catchup.delete_topics(env["KAFKA_BOOTSTRAP"], group)
        results["catchup"] = caught
        load = " ".join(caught["loadavg"])
        tables.append((f"4. catch-up of {total:,} records, in-process (load average {load})", caught["rows"]))
    if "5" in sections:
        run_section(
            results,
            tables,
            "kip875",
            "5. KIP-875",
            "5. KIP-875: native on 4.3.1 versus emulated by the sidecar on 3.4.1",
            lambda: kip875.run(
                env,
                args.kip875_samples or (8 if args.quick else 20),
                0.3 if args.quick else 0.7,
                code_of(args.before) if args.before else None,
            ),
        )
    if "8" in sections:
        samples = args.fence_samples or (8 if args.quick else 20)
        run_section(
            results,
            tables,
            "fence_handover",
            "8. writes taking another sidecar's fence",
            fence_handover.TITLE,
            lambda: fence_handover.run(env, samples, 0.2 if args.quick else 0.3),
        )
    if "9" in sections:
        run_section(
            results,
            tables,
            "auto_restart",
            "9. auto-restart",
            auto_restart.TITLE,
            lambda: auto_restart.run(env, 5 if args.quick else 10, 15 if args.quick else 25),
        )
    if "10" in sections:
        run_section(
            results,
            tables,
            "lag_refresh",
            "10. the sinks' lag refresh",
            lag_refresh.TITLE,
            lambda: lag_refresh.run(env, 2000, 3 if args.quick else 5),
        )
    if "11" in sections:
        run_section(
            results,
            tables,
            "config_history",
            "11. config history",
            config_history.TITLE,
            lambda: config_history.run(env, 200 if args.quick else 1000, 50 if args.quick else 200),
        )
    if "12" in sections:
        run_section(
            results,
            tables,
            "plan_apply",
            "12. plan over 2,000 connectors",
            plan_apply.TITLE,
            lambda: plan_apply.run(env, 2000, 3 if args.quick else 5),
        )
    if "13" in sections:
        run_section(
            results,
            tables,
            "bulk_pause",
            "13. bulk pause of 500 connectors",
            bulk_pause.TITLE,
            lambda: bulk_pause.run(env, 500, 2 if args.quick else 3),
        )
    if "14" in sections:
        run_section(
            results,
            tables,
            "plan_apply_scale",
            "14. an apply creating 300 connectors",
            plan_apply.APPLY_TITLE,
            lambda: plan_apply.run_apply(env, 300, 1 if args.quick else 2),
        )
    if "7" in sections:  # minutes: not in the default sections
        print("7. Spark jobs ...", file=sys.stderr, flush=True)
        results["spark_jobs"] = spark_jobs.suite(env.get("KAFKA_BOOTSTRAP"), 100_000 if args.quick else 1_000_000)
        tables.append(("7. Spark jobs (local[2]), from a snapshot and from Kafka", results["spark_jobs"]["rows"]))
    for title, rows in tables:
        print_table(title, rows)
    print("\n(ratio = sidecar / native; same run, same machine; see bench/results/ for every figure)")
    print(f"results: {save(results)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
