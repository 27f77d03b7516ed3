"""Short runs of the Spark jobs on a small snapshot, where a warm engine should make them short: each job
cold (a fresh local process), then three runs in a row as clients of one Spark Connect server (the first
warms the server), and the second run in a process that keeps its local session. Prints the wall and CPU
seconds of each and the warm Spark Connect run against the cold one; checks every run's outputs against
the cold run's.

``--profile`` runs one more Spark Connect client in-process with its RPCs timed (``_ProfiledClient``):
how many plan executions, analyses, config calls and artifact uploads a run makes, from which line of
the jobs, and how long they took; and the Spark jobs the server ran for it (its UI's REST API).

``--before REF`` runs each side's cold run and each side's warm Spark Connect clients alternately, this
checkout's and the ref's, on the one server (after its first run warmed it). ``--server-conf KEY=VALUE``
sets one of the server's own settings (its codegen cache, say) for any of these.

    .venv/bin/python bench/spark_short.py                       # 30,000 offset records, 50 connectors
    .venv/bin/python bench/spark_short.py --profile --jobs topic-audit
    .venv/bin/python bench/spark_short.py --before main --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.request
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.common import code_of  # noqa: E402
from bench.process_tree import between, check, measure  # noqa: E402
from bench.spark_warm import connect_server, kept_session  # noqa: E402

JOBS = {"offsets-reconcile": "spark_jobs.offsets_reconcile", "topic-audit": "spark_jobs.topic_audit"}
PROFILE_MARK = "bench-profile "


def snapshot(args: argparse.Namespace) -> tuple[Path, Path]:
    """The small snapshot (written once per size) and a worker properties file naming its topics."""
    from spark_jobs.synthetic import TOPICS, generate, worker_properties

    args.out.mkdir(parents=True, exist_ok=True)
    status = args.status_records if args.status_records is not None else args.records // 10
    path = args.out / f"snapshot-{args.records}-{args.connectors}x{args.partitions}-{status}.parquet"
    if not path.exists():
        generate(path, args.records, args.connectors, args.partitions, status)
    return path, worker_properties(args.out / "bench-worker.properties", "127.0.0.1:9", TOPICS)


def timed(command: list[str], code: Path | None = None, servers: tuple[int, ...] = ()) -> dict[str, float]:
    run = measure(command, code or ROOT, servers=servers)  # -m imports its working dir's first
    check(run, command[2])
    return between(run, run.marks[0], run.marks[-1])


def differences(cold: Path, out: Path) -> str:
    from tests.support.spark_outputs import different_outputs

    found = different_outputs(cold, out)
    return "same" if not found else "DIFFERENT: " + ", ".join(found)


def short_runs(args: argparse.Namespace, job: str, extra: list[str], url: str, pid: int) -> dict[str, Any]:
    """One job: cold, the three Spark Connect runs, the kept session's second run."""
    module, out = JOBS[job], args.out / job
    local = ["--master", "local[2]", "--driver-memory", args.driver_memory]
    result: dict[str, Any] = {"load_before": os.getloadavg()[0]}
    result["cold"] = timed([sys.executable, "-m", module, *local, *extra, "--out", str(out / "cold")])
    for n in (1, 2, 3):
        target = out / f"connect-{n}"
        result[f"connect {n}"] = timed(
            [sys.executable, "-m", module, "--remote", url, *extra, "--out", str(target)], servers=(pid,)
        )
        result[f"connect {n}"]["outputs"] = differences(out / "cold", target)
    kept = out / "kept"
    records = args.records  # the kept session's JVM options: a short job's
    result["kept 2"] = kept_session(
        module, [*local, *extra, "--out", str(kept)], records, args.driver_memory, kept / "spark.log"
    )
    result["kept 2"]["outputs"] = differences(out / "cold", kept)
    result["load_after"] = os.getloadavg()[0]
    return result


def print_table(results: dict[str, dict[str, Any]]) -> None:
    runs = ("cold", "connect 1", "connect 2", "connect 3", "kept 2")
    print(f"\n{'job':18} " + " ".join(f"{r:>14}" for r in runs) + f" {'connect 3 / cold':>17}  load")
    for job, r in results.items():
        cells = " ".join(f"{r[k]['seconds']:6.1f}s {r[k]['cpu_seconds']:4.0f}cpu" for k in runs)
        ratio = r["connect 3"]["seconds"] / r["cold"]["seconds"]
        same = all(r[k].get("outputs", "same") == "same" for k in runs)
        print(f"{job:18} {cells} {ratio:17.2f}  {r['load_before']:.1f}->{r['load_after']:.1f}", end="")
        print("" if same else "  outputs: " + "; ".join(f"{k} {r[k]['outputs']}" for k in runs if "outputs" in r[k]))


def alternate(args: argparse.Namespace, job: str, extra: list[str], url: str, pid: int) -> None:
    """Pairs of cold runs and of warm Spark Connect runs, this checkout's and ``args.before``'s alternately."""
    module, before = JOBS[job], code_of(args.before, ("control_plane", "spark_jobs"))
    local = ["--master", "local[2]", "--driver-memory", args.driver_memory]
    sides: dict[str, dict[str, list[float]]] = {w: defaultdict(list) for w in ("before", "after")}
    warmup = args.out / job / "connect-warmup"
    timed([sys.executable, "-m", module, "--remote", url, *extra, "--out", str(warmup)], servers=(pid,))
    for round_ in range(args.rounds):
        for which in ["before", "after"][:: 1 if round_ % 2 == 0 else -1]:
            code = before if which == "before" else None
            out = args.out / job / which
            cold = timed([sys.executable, "-m", module, *local, *extra, "--out", str(out / "cold")], code)
            warm = timed(
                [sys.executable, "-m", module, "--remote", url, *extra, "--out", str(out / "connect")], code, (pid,)
            )
            same = differences(out / "cold", out / "connect")
            sides[which]["cold"].append(cold["seconds"])
            sides[which]["connect"].append(warm["seconds"])
            sides[which]["connect_cpu"].append(warm["cpu_seconds"])
            print(
                f"{job:18} {which:6} {round_ + 1}: cold {cold['seconds']:5.1f}s, warm Spark Connect "
                f"{warm['seconds']:5.1f}s ({warm['cpu_seconds']:.0f} CPU s, client and server), "
                f"{warm['seconds'] / cold['seconds']:.2f} of cold; outputs {same}; load {os.getloadavg()[0]:.1f}",
                flush=True,
            )
    for which, s in sides.items():
        print(
            f"{job:18} {which:6} cold {min(s['cold']):.1f} to {max(s['cold']):.1f}s, warm Spark Connect "
            f"{min(s['connect']):.1f} to {max(s['connect']):.1f}s ({min(s['connect_cpu']):.0f} to "
            f"{max(s['connect_cpu']):.0f} CPU s); warm / cold {sum(s['connect']) / sum(s['cold']):.2f}"
        )


def spark_jobs_of(ui: str) -> list[dict[str, Any]]:
    """The server's Spark jobs so far, from its UI's REST API (Spark's ``api/v1``)."""
    with urllib.request.urlopen(f"{ui}/api/v1/applications", timeout=10) as answer:
        app = json.load(answer)[0]["id"]
    with urllib.request.urlopen(f"{ui}/api/v1/applications/{app}/jobs", timeout=10) as answer:
        return list(json.load(answer))


def compiling(ui: str) -> tuple[int, float]:
    """The server's generated classes compiled so far, and the seconds it took (its metrics servlet's
    ``CodeGenerator.compilationTime``, a histogram of milliseconds)."""
    with urllib.request.urlopen(f"{ui}/metrics/json/", timeout=10) as answer:
        histograms = json.load(answer).get("histograms", {})
    found = next((h for name, h in histograms.items() if name.endswith("CodeGenerator.compilationTime")), None)
    return (int(found["count"]), found["count"] * found["mean"] / 1000) if found else (0, 0.0)


def job_seconds(job: dict[str, Any]) -> float:
    from datetime import datetime

    def at(text: str) -> float:
        return datetime.strptime(text.replace("GMT", "+0000"), "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()

    return at(job["completionTime"]) - at(job["submissionTime"]) if job.get("completionTime") else 0.0


def profile(args: argparse.Namespace, job: str, extra: list[str]) -> None:
    """A Spark Connect server with its UI on; two clients (the first warms it), the second profiled."""
    from tests.support.ports import free_port

    ui_port = free_port()
    conf = {**args.server_conf, "spark.ui.enabled": "true", "spark.ui.port": str(ui_port)}
    with connect_server(args.out / "spark-connect-profile.log", args.driver_memory, conf) as (url, pid):
        ui = f"http://127.0.0.1:{ui_port}"
        module = JOBS[job]
        timed(
            [sys.executable, "-m", module, "--remote", url, *extra, "--out", str(args.out / job / "p1")], servers=(pid,)
        )
        seen = {j["jobId"] for j in spark_jobs_of(ui)}
        compiled = compiling(ui)
        command = [sys.executable, __file__, "--profile-child", module, "--", "--remote", url, *extra]
        run = measure([*command, "--out", str(args.out / job / "p2")], ROOT, servers=(pid,))
        check(run, module)
        for _, line in run.lines:
            if line.startswith((PROFILE_MARK, job)):
                print("  " + line.removeprefix(PROFILE_MARK))
        figures = between(run, run.marks[0], run.marks[-1])
        spark_jobs = [j for j in spark_jobs_of(ui) if j["jobId"] not in seen]
        busy = sum(job_seconds(j) for j in spark_jobs)
        print(
            f"  {job}: {figures['seconds']:.1f}s wall, {figures['cpu_seconds']:.0f} CPU s; the server ran "
            f"{len(spark_jobs)} Spark jobs ({sum(len(j.get('stageIds', [])) for j in spark_jobs)} stages, "
            f"{sum(j.get('numTasks', 0) for j in spark_jobs)} tasks), {busy:.1f}s from submission to completion"
        )
        classes, seconds = (now - then for now, then in zip(compiling(ui), compiled, strict=True))
        print(f"  the server compiled {classes} generated classes in {seconds:.1f}s (Janino)")
        for j in sorted(spark_jobs, key=job_seconds, reverse=True)[:8]:
            print(f"    {job_seconds(j):5.2f}s {j.get('numTasks', 0):3} tasks  {' '.join(j['name'].split())[:100]}")


def _profile_child(argv: list[str]) -> int:
    """A job as a Spark Connect client with its client's RPCs timed and counted by kind and by the jobs'
    line that made them; printed after the run."""
    import importlib
    import traceback

    from pyspark.sql.connect.client.core import SparkConnectClient

    spent: dict[tuple[str, str], list[float]] = defaultdict(list)
    depth = [0]

    def where() -> str:
        frames = [f for f in traceback.extract_stack() if "/spark_jobs/" in f.filename]
        return f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else "-"

    def timing(name: str, kind: Any) -> None:
        original = getattr(SparkConnectClient, name)

        def wrapped(self: Any, *a: Any, **k: Any) -> Any:
            depth[0] += 1
            started = time.monotonic()
            try:
                return original(self, *a, **k)
            finally:
                depth[0] -= 1
                if depth[0] == 0:
                    spent[(kind(a, k), where())].append(time.monotonic() - started)

        setattr(SparkConnectClient, name, wrapped)

    def plan_kind(a: Any, k: Any) -> str:
        plan = a[0].plan
        if plan.HasField("command"):
            return "execute " + str(plan.command.WhichOneof("command_type"))
        return "execute " + str(plan.root.WhichOneof("rel_type"))

    timing("_execute_and_fetch", plan_kind)
    timing("_execute_and_fetch_as_iterator", plan_kind)
    timing("_analyze", lambda a, k: "analyze " + str(a[0] if a else k.get("method")))
    timing("config", lambda a, k: "config " + str(a[0].WhichOneof("op_type")))
    timing("add_artifacts", lambda a, k: "add_artifacts")
    module, args = argv[0], argv[argv.index("--") + 1 :]
    started = time.monotonic()
    code = importlib.import_module(module).main(args)
    wall = time.monotonic() - started
    total = sum(sum(v) for v in spent.values())
    by_kind: dict[str, list[float]] = defaultdict(list)
    for (kind, _), times in spent.items():
        by_kind[kind] += times
    print(f"{PROFILE_MARK}{wall:.1f}s in the job, {total:.1f}s waiting on {sum(map(len, spent.values()))} RPCs")
    for kind, times in sorted(by_kind.items(), key=lambda kv: -sum(kv[1])):
        print(f"{PROFILE_MARK}  {sum(times):6.2f}s {len(times):4}x  {kind}")
    for (kind, line), times in sorted(spent.items(), key=lambda kv: -sum(kv[1]))[:25]:
        print(f"{PROFILE_MARK}    {sum(times):6.2f}s {len(times):4}x  {kind:34} {line}")
    return int(code)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--records", type=int, default=30_000, help="offset records (default 30,000)")
    p.add_argument("--connectors", type=int, default=50)
    p.add_argument("--partitions", type=int, default=10, help="source partitions per connector")
    p.add_argument("--status-records", type=int, help="default: a tenth of --records")
    p.add_argument("--driver-memory", default="1g")
    p.add_argument("--jobs", default=",".join(JOBS), help=f"which of {', '.join(JOBS)} (default: both)")
    p.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "spark-short")
    p.add_argument("--profile", action="store_true", help="profile a warm Spark Connect run instead")
    p.add_argument("--before", help="a git ref whose runs alternate with this checkout's (--rounds pairs)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument(
        "--server-conf", action="append", default=[], metavar="KEY=VALUE", help="a setting of the Spark Connect server"
    )
    p.add_argument("--profile-child", help=argparse.SUPPRESS)
    if "--profile-child" in sys.argv:
        raise SystemExit(_profile_child(sys.argv[sys.argv.index("--profile-child") + 1 :]))
    args = p.parse_args()
    args.server_conf = dict(item.split("=", 1) for item in args.server_conf)
    jobs = [j.strip() for j in args.jobs.split(",") if j.strip()]
    path, props = snapshot(args)
    extra = ["--worker-properties", str(props), "--snapshot", str(path), "--offline", "--max-findings", "20"]
    if args.profile:
        for job in jobs:
            profile(args, job, extra)
        return
    with connect_server(args.out / "spark-connect.log", args.driver_memory, args.server_conf) as (url, pid):
        if args.before:
            for job in jobs:
                alternate(args, job, extra, url, pid)
            return
        results = {job: short_runs(args, job, extra, url, pid) for job in jobs}
    print_table(results)
    (args.out / "results.json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
