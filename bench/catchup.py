"""Section 4: the view's catch-up, records per second and memory while it reads a config and status
history from the beginning (as the sidecar does at start), the code of this checkout beside the code of
a git ref (``--before REF``) in the same run.

It fills a fresh config and status topic on the running stack's broker (bench/view_scale.py's records:
by default 2,000 connectors, 5 tasks and 480 topic-tracking records each, 986,000 records), then runs
the catch-up in a child process per code version, alternately (``--rounds``), each reading the whole
history with a fresh ``MaterializedView``; a child reports its wall time, its CPU time
(``resource.getrusage``), its RSS after it (``VmRSS``) and its peak (``VmHWM``). The RSS includes the
interpreter and the imports (about 60 MiB). ``--profile FILE``: cProfile of one run of this checkout.
``--reuse GROUP``: the topics of an earlier run (its ``bench-xxxxxx`` prefix) instead of new ones.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT))  # after PYTHONPATH: a child runs the code it is given (--before)
from bench.common import code_of, print_table, row, save, stack_env  # noqa: E402


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return -1


async def _catch_up(bootstrap: str, group: str, total: int) -> dict[str, Any]:
    import resource

    from control_plane.view import MaterializedView

    view = MaterializedView(
        {"bootstrap_servers": bootstrap},
        config_topic=f"{group}-configs",
        status_topic=f"{group}-status",
        offsets_topic=None,
    )
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    rss0 = _status_kib("VmRSS")
    started = time.perf_counter()
    await view.start()
    try:
        await asyncio.gather(*(tail.caught_up.wait() for tail in view.tails.values()))
        wall = time.perf_counter() - started
        cpu1 = resource.getrusage(resource.RUSAGE_SELF)
        applied = sum(view.applied.values())
        counts = view.state.counts()
    finally:
        await view.stop()
    import gc

    gc.collect()
    return {
        "wall_s": wall,
        "cpu_s": (cpu1.ru_utime + cpu1.ru_stime) - (cpu0.ru_utime + cpu0.ru_stime),
        "applied": applied,
        "expected": total,
        "counts": counts,
        "rss_start_mib": rss0 / 1024,
        "rss_after_mib": _status_kib("VmRSS") / 1024,
        "rss_peak_mib": _status_kib("VmHWM") / 1024,
        "view": view,  # kept alive until the RSS is read; dropped before printing
    }


def child(bootstrap: str, group: str, total: int, profile: str | None) -> None:
    """One catch-up in this process (the code on sys.path: this checkout's or another version's)."""
    if profile:
        import cProfile

        profiler = cProfile.Profile()
        result = profiler.runcall(asyncio.run, _catch_up(bootstrap, group, total))
        profiler.dump_stats(profile)
    else:
        result = asyncio.run(_catch_up(bootstrap, group, total))
    result.pop("view")
    print(json.dumps(result))


def run_child(code: Path | None, bootstrap: str, group: str, total: int, profile: str | None = None) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(code or ROOT)}
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", bootstrap, group, str(total)]
    if profile:
        cmd += ["--profile", profile]
    out = subprocess.run(cmd, env=env, cwd=code or ROOT, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"the catch-up child failed:\n{out.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def fill_topics(bootstrap: str, connectors: int, tasks: int, topics: int) -> tuple[str, int]:
    from bench.view_scale import fill, generate

    group = f"bench-{uuid.uuid4().hex[:6]}"
    t = time.perf_counter()
    config, status = generate(connectors, tasks, topics)
    total = len(config) + len(status)
    asyncio.run(fill(bootstrap, group, config, status))
    print(f"  {total:,} records produced to {group}-* in {time.perf_counter() - t:.1f}s", file=sys.stderr, flush=True)
    return group, total


def delete_topics(bootstrap: str, group: str) -> None:
    """The topics ``fill_topics`` made (a million records are better not left on the stack's broker)."""
    from aiokafka.admin import AIOKafkaAdminClient

    async def delete() -> None:
        admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
        await admin.start()
        try:
            await admin.delete_topics([f"{group}-configs", f"{group}-status", f"{group}-offsets"])
        finally:
            await admin.close()

    asyncio.run(delete())


def measure(
    bootstrap: str, group: str, total: int, before: str | None, rounds: int, profile: str | None = None
) -> dict[str, Any]:
    before_code = code_of(before) if before else None
    runs: dict[str, list[dict[str, Any]]] = {"after": [], "before": []}
    for i in range(rounds):
        if before_code is not None:
            print(f"  catch-up round {i + 1}: before ({before}) ...", file=sys.stderr, flush=True)
            runs["before"].append(run_child(before_code, bootstrap, group, total))
        print(f"  catch-up round {i + 1}: this checkout ...", file=sys.stderr, flush=True)
        runs["after"].append(run_child(None, bootstrap, group, total))
        with open("/proc/loadavg") as f:
            print(f"    load average {f.read().split()[0]}", file=sys.stderr, flush=True)
    if profile:
        run_child(None, bootstrap, group, total, profile)
        print(f"  profile: {profile}", file=sys.stderr, flush=True)

    def best(side: str, key: str, pick: Any = min) -> float | None:
        values = [r[key] for r in runs[side]]
        return float(pick(values)) if values else None

    def rate(side: str, key: str) -> float | None:
        seconds = best(side, key)
        return None if seconds is None else total / seconds

    after_wall, after_cpu = rate("after", "wall_s"), rate("after", "cpu_s")
    assert after_wall is not None and after_cpu is not None
    rows = [
        row(
            f"catch-up of {total:,} records, wall",
            None,
            after_wall,
            "records/s",
            ">= 150,000",
            rate("before", "wall_s"),
        ),
        row("catch-up, per CPU second", None, after_cpu, "records/s", "", rate("before", "cpu_s")),
        row(
            "RSS after the catch-up",
            None,
            best("after", "rss_after_mib", max) or 0.0,
            "MiB",
            "< 300 MiB",
            best("before", "rss_after_mib", max),
        ),
        row(
            "peak RSS during the catch-up",
            None,
            best("after", "rss_peak_mib", max) or 0.0,
            "MiB",
            "",
            best("before", "rss_peak_mib", max),
        ),
    ]
    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    return {"records": total, "group": group, "before": before, "runs": runs, "rows": rows, "loadavg": load}


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        profile = sys.argv[6] if len(sys.argv) > 6 and sys.argv[5] == "--profile" else None
        child(sys.argv[2], sys.argv[3], int(sys.argv[4]), profile)
        return 0

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--connectors", type=int, default=2000)
    parser.add_argument("--tasks-per-connector", type=int, default=5)
    parser.add_argument("--topics-per-connector", type=int, default=480)
    parser.add_argument("--before", help="a git ref whose code is measured beside this checkout's")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--reuse", help="GROUP,RECORDS: the topics of an earlier run")
    parser.add_argument("--profile", help="write a cProfile of one more run of this checkout here")
    parser.add_argument("--keep", action="store_true", help="keep the topics (for --reuse)")
    args = parser.parse_args()
    bootstrap = stack_env()["KAFKA_BOOTSTRAP"]
    if args.reuse:
        group, records = args.reuse.split(",")
        total = int(records)
    else:
        group, total = fill_topics(bootstrap, args.connectors, args.tasks_per_connector, args.topics_per_connector)
    try:
        results = measure(bootstrap, group, total, args.before, args.rounds, args.profile)
    finally:
        if not (args.keep or args.reuse):
            delete_topics(bootstrap, group)
    print_table(f"4. catch-up of {total:,} records (load average {' '.join(results['loadavg'])})", results["rows"])
    print(f"results: {save(results, 'catchup')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
