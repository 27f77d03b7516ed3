"""Plan at 2,000 connectors: how long ``POST /_sidecar/plan`` takes, end to end (the request sent to the
whole answer read), p50 and slowest of 5 plans, for 2,000 connectors described in files (a)
all unchanged, the plan after an apply, where the files equal what the cluster runs (the target's figure:
a plan over 2,000 connectors in under 5 s); and (b) with 20 of them updates (each then costs the worker's
validation, a KIP-158 topic-creation preview and a KIP-891 plugin-version report; the others none). Beside
each plan, the requests it made to the worker (counted in the worker's request log, but for the sidecar's
probes of ``GET /``) and the sidecar's CPU.

Connect has no plan: the reference ("native") is what a client that compares files with a cluster has to
do without the sidecar, ``GET /connectors/{c}/config`` of each of the 2,000 connectors, straight to the
worker that holds them. Measured two ways: 8 at a time (the fairer one, the main row: the plan itself makes
its worker calls 8 at a time, and a careful client would too) and one at a time (what a shell loop or
``kcctl`` does). The samples are interleaved with the plans in the same run (the order turns round each
time), so that the machine's drift weighs on both alike.

The cluster is one of its own, made cheaply, nothing run by it: a config topic filled with the records a
worker writes for 2,000 FileStreamSource connectors that are STOPPED (KIP-875: each its config, an empty
task set, its target state), then a Connect 4.3.1 worker of its own on that topic (its own group), which
starts none of them and answers ``GET /connectors/{c}/config`` for every one, and ONE sidecar process of
this checkout in front of it, with a sidecars' topic of its own. The plan compares each file with the config
topic as the sidecar's view holds it (read to its end). At the end the plan with the updates is applied
(``POST /_sidecar/apply``, timed) and planned again: every connector must then be unchanged. The worker, the
sidecar and the cluster's topics (``bench-plan-<tag>*``) are removed at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import time
import uuid
from collections import Counter
from functools import partial
from pathlib import Path
from typing import Any

import aiohttp
import httpx
import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from aiokafka.admin import AIOKafkaAdminClient  # noqa: E402

from bench.common import WORK, cpu_s, pct, print_table, row, save, stack_env, start_sidecar  # noqa: E402
from bench.kip875 import FILE_SOURCE  # noqa: E402
from bench.view_scale import Records, fill  # noqa: E402
from control_plane.codecs import ConfigRecord, ConnectorConfig, TargetState, TaskCommit, encode_config  # noqa: E402
from tests.support.deploy_local import files_under, local_stack  # noqa: E402

TITLE = "12. plan over 2,000 connectors (POST /_sidecar/plan), versus GET /connectors/{c}/config of each on the worker"
CONCURRENCY = 8  # the reference's GETs at once (the plan's own worker calls: domain.plan.planner.CONCURRENT)
JSON = {"Content-Type": "application/json"}
# a line of the worker's request log (RestServer): method, path, status, bytes, referer, user agent, ms
REQUEST = re.compile(r'"([A-Z]+) (\S+) HTTP/[0-9.]+" (\d+) \S+ "[^"]*" "([^"]*)" (\d+) ')


def cluster_records(tag: str, connectors: int, lines: Path) -> tuple[Records, dict[str, dict[str, str]]]:
    """The config records a worker writes for ``connectors`` STOPPED FileStreamSource connectors, and each
    connector's config as a file describes it (without the ``name`` the worker adds)."""
    records: Records = []
    configs: dict[str, dict[str, str]] = {}
    for i in range(connectors):
        name = f"bench-plan-{tag}-{i:05d}"
        config = {"connector.class": FILE_SOURCE, "tasks.max": "1", "file": str(lines), "topic": f"{name}-t"}
        stored: list[ConfigRecord] = [
            ConnectorConfig(name, {**config, "name": name}),
            TaskCommit(name, 0),  # a stopped connector has no task configs (DistributedHerder.stopConnector)
            TargetState.of(name, "STOPPED"),
        ]
        records += [encode_config(r) for r in stored]
        configs[name] = config
    return records, configs


def plan_body(configs: dict[str, dict[str, str]]) -> bytes:
    """``POST /_sidecar/plan``'s body: one document per connector, as ``plan -f`` sends a folder of files."""
    documents = [
        {"source": f"connectors/{name}.json", "document": {"name": name, "config": config}}
        for name, config in configs.items()
    ]
    return orjson.dumps({"documents": documents, "prune": False})


def updated(configs: dict[str, dict[str, str]], count: int) -> tuple[dict[str, dict[str, str]], list[str]]:
    """``configs`` with ``count`` of them (spread evenly) writing to another topic."""
    names = list(configs)
    chosen = names[:: max(1, len(names) // count)][:count]
    return {n: {**c, "topic": f"{c['topic']}-v2"} if n in chosen else c for n, c in configs.items()}, chosen


def worker_log_size(log: Path) -> int:
    return log.stat().st_size if log.exists() else 0


def worker_requests(log: Path, since: int) -> list[tuple[str, str, int, int]]:
    """The requests the worker logged after byte ``since`` of its log: (method, path, status, ms); not the
    reference's own GETs (aiohttp's, a late line of which can land after their run), nor the sidecar's
    probes of ``GET /``, which go on whatever it does."""
    time.sleep(0.3)  # the request log is written as each answer completes
    with log.open("rb") as f:
        f.seek(since)
        text = f.read().decode(errors="replace")
    found = REQUEST.findall(text)
    return [(m, p, int(s), int(ms)) for m, p, s, agent, ms in found if "aiohttp" not in agent and p != "/"]


def kind_of(path: str, names: set[str]) -> str:
    """A path with its connector's name as ``{c}`` and its query left off, to group the requests."""
    parts = ["{c}" if part in names else part for part in path.split("?")[0].split("/")]
    return "/".join(parts)


async def gets(url: str, names: list[str], concurrency: int) -> float:
    """Seconds for ``GET /connectors/{c}/config`` of every name, ``concurrency`` at a time."""
    slots = asyncio.Semaphore(concurrency)
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(url, connector=connector) as session:

        async def one(name: str) -> None:
            async with slots, session.get(f"/connectors/{name}/config") as answer:
                body = await answer.read()
                if answer.status != 200:
                    raise SystemExit(f"GET /connectors/{name}/config: {answer.status} {body[:300]!r}")

        started = time.perf_counter()
        await asyncio.gather(*(one(n) for n in names))
        return time.perf_counter() - started


def post_plan(client: httpx.Client, body: bytes) -> tuple[float, dict[str, Any], int]:
    """Seconds a plan took end to end, the plan, and the bytes of its answer."""
    started = time.perf_counter()
    answer = client.post("/_sidecar/plan", content=body, headers=JSON)
    elapsed = time.perf_counter() - started
    if answer.status_code != 200:
        raise SystemExit(f"POST /_sidecar/plan: {answer.status_code} {answer.text[:300]}")
    plan: dict[str, Any] = answer.json()
    return elapsed, plan, len(answer.content)


def plan_problems(plan: dict[str, Any], connectors: int, updates: list[str]) -> list[str]:
    """What the plan shows that it should not: ``updates`` updated (no errors, a preview and a report each),
    every other connector unchanged."""
    expected = {"create": 0, "update": len(updates), "delete": 0, "unchanged": connectors - len(updates)}
    found = [] if plan["summary"] == expected else [f"summary {plan['summary']}, {expected} expected"]
    steps = {s["name"]: s for s in plan["connectors"]}
    for name in updates:
        step = steps.get(name, {})
        if step.get("action") != "update":
            found.append(f"{name}: {step.get('action')}, update expected")
        elif step.get("errors"):
            found.append(f"{name}: the worker's validation errors {step['errors']}")
        elif "topics" not in step or "plugins" not in step:
            found.append(f"{name}: no {'topics' if 'topics' not in step else 'plugins'} in its step")
    return found[:10]


def wait_listing(url: str, names: list[str], timeout_s: float = 600) -> None:
    """Until the worker lists every connector and answers the config of the last one."""
    deadline = time.monotonic() + timeout_s
    with httpx.Client(base_url=url, timeout=60) as worker:
        while True:
            listed = worker.get("/connectors")
            if (
                listed.status_code == 200
                and len(listed.json()) >= len(names)
                and worker.get(f"/connectors/{names[-1]}/config").status_code == 200
            ):
                return
            if time.monotonic() > deadline:
                raise SystemExit(f"{url} did not list {len(names)} connectors in {timeout_s:g} s")
            time.sleep(0.5)


async def delete_topics(bootstrap: str, prefix: str) -> list[str]:
    """The topics of the cluster made here (the worker's three, the sidecars')."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        mine = [t for t in await admin.list_topics() if t.startswith(prefix)]
        if mine:
            await admin.delete_topics(mine)
        return mine
    finally:
        await admin.close()


def run(env: dict[str, str], connectors: int, runs: int, updates: int = 20, warmup: int = 1) -> dict[str, Any]:
    """Section 12 of the suite."""
    WORK.mkdir(parents=True, exist_ok=True)
    bootstrap = env["KAFKA_BOOTSTRAP"]
    tag = uuid.uuid4().hex[:6]
    group = f"bench-plan-{tag}"
    lines = WORK / f"plan-{tag}.txt"
    lines.write_text("")
    records, configs = cluster_records(tag, connectors, lines)
    names = list(configs)
    named = set(names)
    changed, chosen = updated(configs, updates)
    bodies = {"plan": plan_body(configs), "plan.updates": plan_body(changed)}
    started = time.perf_counter()
    asyncio.run(fill(bootstrap, group, records, []))
    print(f"  {len(records):,} config records written to {group}-configs", file=sys.stderr, flush=True)
    worker: Any = None
    sidecar = None
    seen: dict[str, list[float]] = {"plan": [], "plan.updates": [], f"gets.c{CONCURRENCY}": [], "gets.c1": []}
    cpu: dict[str, list[float]] = {"plan": [], "plan.updates": []}
    requests: dict[str, list[int]] = {"plan": [], "plan.updates": []}
    calls: dict[str, Counter[str]] = {"plan": Counter(), "plan.updates": Counter()}
    calls_ms: dict[str, Counter[str]] = {"plan": Counter(), "plan.updates": Counter()}
    sizes: dict[str, int] = {}
    problems: list[str] = []
    try:
        with files_under(WORK):  # the worker's properties and log under bench/results/work
            worker = local_stack.start_connect(group, local_stack.NEW_VERSION, bootstrap)
        log = Path(worker.log)
        local_stack.wait_until(worker, lambda: local_stack.connect_ready(worker.url), "answer GET /connectors", 600)
        wait_listing(worker.url, names)
        ready_s = time.perf_counter() - started
        sidecar_env = {"CONTROL_PLANE_SIDECARS_TOPIC": f"{group}.control-plane"}
        sidecar = start_sidecar(f"sidecar-plan-{tag}", worker.extra["properties"], sidecar_env)
        print(f"  cluster of {connectors:,} ready in {ready_s:.0f} s; {runs} plans of each kind ...", file=sys.stderr)
        with httpx.Client(base_url=sidecar.url, timeout=600) as client:
            kinds = list(seen)
            last: dict[str, dict[str, Any]] = {}
            for i in range(warmup + runs):
                order = kinds[i % len(kinds) :] + kinds[: i % len(kinds)]
                for kind in order:
                    if kind.startswith("gets."):
                        concurrency = int(kind.removeprefix("gets.c"))
                        elapsed = asyncio.run(gets(worker.url, names, concurrency))
                    else:
                        since, cpu_before = worker_log_size(log), cpu_s(sidecar.pid)
                        elapsed, last[kind], sizes[kind] = post_plan(client, bodies[kind])
                        spent = cpu_s(sidecar.pid) - cpu_before
                        made = worker_requests(log, since)
                        problems += plan_problems(last[kind], connectors, chosen if kind == "plan.updates" else [])
                        if i >= warmup:
                            cpu[kind].append(spent)
                            requests[kind].append(len(made))
                            for method, path, _status, ms in made:
                                calls[kind][f"{method} {kind_of(path, named)}"] += 1
                                calls_ms[kind][f"{method} {kind_of(path, named)}"] += ms
                    if i >= warmup:
                        seen[kind].append(elapsed)
            print("  the apply of the updates, and a plan after it ...", file=sys.stderr, flush=True)
            t = time.perf_counter()
            applied = client.post("/_sidecar/apply", content=orjson.dumps(last["plan.updates"]), headers=JSON)
            apply_s = time.perf_counter() - t
            if applied.status_code != 200:
                raise SystemExit(f"POST /_sidecar/apply: {applied.status_code} {applied.text[:300]}")
            if len(applied.json().get("applied", [])) != updates:
                problems.append(f"the apply: {applied.text[:300]}")
            _, after, _ = post_plan(client, bodies["plan.updates"])
            problems += [f"after the apply: {p}" for p in plan_problems(after, connectors, [])]
    finally:
        if sidecar is not None:
            sidecar.stop()
        if worker is not None:
            local_stack.stop([worker])
        deleted = asyncio.run(delete_topics(bootstrap, group))
        lines.unlink(missing_ok=True)
    figures = {kind: {"p50_s": pct(s, 0.5) / 1000, "max_s": max(s)} for kind, s in seen.items()}
    native, one_by_one = figures[f"gets.c{CONCURRENCY}"], figures["gets.c1"]
    plan, plan_updates = figures["plan"], figures["plan.updates"]
    rows = [
        row(f"plan of {connectors:,} unchanged, p50", native["p50_s"], plan["p50_s"], "s", "< 5 s"),
        row(f"plan of {connectors:,} unchanged, slowest", native["max_s"], plan["max_s"], "s", "< 5 s"),
        row("the same p50, native one GET at a time", one_by_one["p50_s"], plan["p50_s"], "s"),
        row(f"plan, {updates} of them updates, p50", native["p50_s"], plan_updates["p50_s"], "s"),
        row(f"plan, {updates} of them updates, slowest", native["max_s"], plan_updates["max_s"], "s"),
        row("worker requests per plan, unchanged", connectors, max(requests["plan"]), "requests"),
        row(f"worker requests per plan, {updates} updates", connectors, max(requests["plan.updates"]), "requests"),
        row("sidecar CPU per plan, unchanged, p50", None, pct(cpu["plan"], 0.5) / 1000, "s"),
        row(f"sidecar CPU per plan, {updates} updates, p50", None, pct(cpu["plan.updates"], 0.5) / 1000, "s"),
        row(f"apply of the {updates} updates", None, apply_s, "s"),
    ]
    return {
        "connectors": connectors,
        "updates": updates,
        "runs": runs,
        "concurrency": CONCURRENCY,
        "cluster_ready_s": ready_s,
        "figures": figures,
        "samples_s": {kind: [round(s, 4) for s in v] for kind, v in seen.items()},
        "sidecar_cpu_s": {kind: [round(s, 4) for s in v] for kind, v in cpu.items()},
        "worker_requests": {kind: dict(c) for kind, c in calls.items()},  # over the measured plans
        "worker_requests_ms": {kind: dict(c) for kind, c in calls_ms.items()},  # the worker's own ms, summed
        "plan_bytes": sizes,
        "request_bytes": {kind: len(b) for kind, b in bodies.items()},
        "apply_s": apply_s,
        "problems": list(dict.fromkeys(problems)),  # each once, however many plans showed it
        "topics_deleted": deleted,
        "rows": rows,
    }


RETRIES_METRIC = "upstream_rebalance_retries_total"
APPLY_TITLE = (
    "14. an apply creating 300 connectors on three 4.x workers (POST /_sidecar/apply, 8 at a time), versus 300 "
    "sequential PUT /connectors/{c}/config straight to a worker"
)


def start_cluster(group: str, bootstrap: str, workers: int) -> list[Any]:
    """``workers`` Connect workers of the newest release in one group of their own, each answering."""
    started = []
    discovery = {"plugin.discovery": "service_load"}  # the reflective scan of the plugin path is most of a start
    with files_under(WORK):
        for i in range(workers):
            name = f"{group}-w{i}"
            started.append(local_stack.start_connect(name, local_stack.NEW_VERSION, bootstrap, group, discovery))
    for worker in started:
        local_stack.wait_until(worker, partial(local_stack.connect_ready, worker.url), "answer GET /connectors", 600)
    return started


def sequential_creates(url: str, configs: dict[str, dict[str, str]]) -> tuple[float, int]:
    """Seconds for one ``PUT /connectors/{c}/config`` after another, as a script does it, each rebalance
    answer (409, or the 500 of a rebalance expected) asked again after 200 ms; and how many were."""
    conflicts = 0
    started = time.perf_counter()
    with httpx.Client(base_url=url, timeout=120) as worker:
        for name, config in configs.items():
            while True:
                answer = worker.put(f"/connectors/{name}/config", json=config)
                if answer.status_code in (200, 201):
                    break
                if answer.status_code in (409, 500) and "rebalance" in answer.text + "momentarily":
                    conflicts += 1
                    time.sleep(0.2)
                    continue
                raise SystemExit(f"PUT /connectors/{name}/config: {answer.status_code} {answer.text[:300]}")
    return time.perf_counter() - started, conflicts


def upstream_retries(client: httpx.Client) -> float:
    """The sidecar's count of requests it sent again after a rebalance answer (its ``/metrics``)."""
    text = client.get("/metrics").text
    return sum(float(line.split()[-1]) for line in text.splitlines() if line.startswith(RETRIES_METRIC))


def prune_all(client: httpx.Client, prefix: str) -> None:
    """Every connector of ``prefix`` deleted, by an apply of a plan that prunes them."""
    body = {"documents": [], "prune": True, "prune_matching": f"{re.escape(prefix)}.*"}
    plan = client.post("/_sidecar/plan", json=body)
    if plan.status_code != 200:
        raise SystemExit(f"POST /_sidecar/plan: {plan.status_code} {plan.text[:300]}")
    done = client.post("/_sidecar/apply", json=plan.json())
    if done.status_code != 200:
        raise SystemExit(f"POST /_sidecar/apply (deletes): {done.status_code} {done.text[:300]}")


def run_apply(env: dict[str, str], connectors: int, rounds: int, workers: int = 3) -> dict[str, Any]:
    """Section 14: ``rounds`` of each, alternating (apply, creates, creates, apply, ...), each on an empty
    cluster (the previous round's connectors pruned by an apply, not timed). The creates rebalance the
    group of three all along: each new connector is a rebalance (Connect's incremental cooperative
    protocol), which both sides ride out."""
    WORK.mkdir(parents=True, exist_ok=True)
    bootstrap = env["KAFKA_BOOTSTRAP"]
    tag = uuid.uuid4().hex[:6]
    group = f"bench-apply-{tag}"
    lines = WORK / f"apply-{tag}.txt"
    lines.write_text("")
    started: list[Any] = []
    sidecar = None
    seen: dict[str, list[float]] = {"apply": [], "creates": []}
    failed: list[Any] = []
    retries: list[int] = []
    conflicts: list[int] = []
    upstream: list[float] = []  # the rebalance answers the sidecar's upstream sent again within each apply
    try:
        started = start_cluster(group, bootstrap, workers)
        sidecar = start_sidecar(
            f"sidecar-apply-{tag}", started[0].extra["properties"], {"CONTROL_PLANE_SIDECARS_TOPIC": f"{group}.cp"}
        )
        print(f"  {workers} workers and a sidecar ready; {rounds} round(s) of each ...", file=sys.stderr, flush=True)
        with httpx.Client(base_url=sidecar.url, timeout=1200) as client:
            for i in range(2 * rounds):
                kind = ("apply", "creates")[(i + i // 2) % 2]  # apply, creates, creates, apply, ...
                prefix = f"{group}-r{i}-"
                configs = {
                    f"{prefix}{n:04d}": {"connector.class": FILE_SOURCE, "file": str(lines), "topic": f"{group}-t"}
                    for n in range(connectors)
                }
                if kind == "creates":
                    elapsed, conflicted = sequential_creates(started[0].url, configs)
                    conflicts.append(conflicted)
                else:
                    body = {
                        "documents": [
                            {"source": "f", "document": [{"name": n, "config": c} for n, c in configs.items()]}
                        ]
                    }
                    plan = client.post("/_sidecar/plan", json=body)
                    if plan.status_code != 200:
                        raise SystemExit(f"POST /_sidecar/plan: {plan.status_code} {plan.text[:300]}")
                    before = upstream_retries(client)
                    t = time.perf_counter()
                    done = client.post("/_sidecar/apply", content=orjson.dumps(plan.json()), headers=JSON)
                    elapsed = time.perf_counter() - t
                    upstream.append(upstream_retries(client) - before)
                    answer = done.json()
                    failed += answer.get("failed", []) + answer.get("not_tried", [])
                    retries.append(answer.get("retries", 0))
                    if done.status_code != 200 or len(answer.get("applied", [])) != connectors:
                        failed.append(f"the apply answered {done.status_code}: {done.text[:300]}")
                seen[kind].append(elapsed)
                print(f"  {kind}: {connectors} in {elapsed:.1f} s", file=sys.stderr, flush=True)
                prune_all(client, prefix)
    finally:
        if sidecar is not None:
            sidecar.stop()
        local_stack.stop(started)
        deleted = asyncio.run(delete_topics(bootstrap, group))
        lines.unlink(missing_ok=True)
    apply_s, creates_s = pct(seen["apply"], 0.5) / 1000, pct(seen["creates"], 0.5) / 1000
    rows = [
        row(f"{connectors} connectors created, {workers} workers, p50", creates_s, apply_s, "s", "no step failed"),
        row("steps failed or not tried, all rounds", 0, len(failed), "steps", "0"),
        row("rebalance answers asked again: creates / apply's upstream", sum(conflicts), sum(upstream), "count"),
        row("the apply's own step retries (after the upstream's)", None, sum(retries), "count"),
    ]
    return {
        "connectors": connectors,
        "workers": workers,
        "version": local_stack.NEW_VERSION,
        "rounds": rounds,
        "samples_s": {kind: [round(s, 3) for s in v] for kind, v in seen.items()},
        "apply_retries": retries,
        "apply_upstream_rebalance_retries": upstream,
        "creates_conflicts": conflicts,
        "failed": failed[:20],
        "topics_deleted": deleted,
        "rows": rows,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--connectors", type=int, default=2000)
    parser.add_argument("--updates", type=int, default=20, help="connectors the second plan updates")
    parser.add_argument("--runs", type=int, default=5, help="measured plans of each kind")
    parser.add_argument("--apply-only", action="store_true", help="only section 14, the apply at scale")
    parser.add_argument("--apply-connectors", type=int, default=300, help="connectors section 14 creates")
    parser.add_argument("--apply-rounds", type=int, default=2, help="rounds of each in section 14")
    args = parser.parse_args()
    scale = run_apply(stack_env(), args.apply_connectors, args.apply_rounds)
    print_table(APPLY_TITLE, scale["rows"])
    print(f"results: {save(scale, 'plan-apply-scale')}")
    if args.apply_only:
        return 0
    results = run(stack_env(), args.connectors, args.runs, args.updates)
    print_table(TITLE, results["rows"])
    for kind, made in results["worker_requests"].items():
        spent = results["worker_requests_ms"][kind]
        shown = ", ".join(f"{call} x{n} ({spent[call]} ms)" for call, n in sorted(made.items()))
        print(f"worker requests of the {results['runs']} measured runs of {kind}: {shown or 'none'}")
    for problem in results["problems"]:
        print(f"problem: {problem}")
    print(f"results: {save(results, 'plan-apply')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
