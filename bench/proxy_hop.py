"""What the proxy hop costs: latency and throughput through the sidecar versus the worker itself.

Runs against the stack of ``make stack-up`` (found through ``.stack/env``); ``make bench`` starts one
if none runs. For each target (Connect directly, the stack's sidecar on the aiohttp pool, and a
second sidecar on httpx's own pool for comparison) it measures:
  - latency: N sequential ``GET /connectors`` (p50, p99), then
  - throughput: requests per second at concurrency C for D seconds (with p50/p99 under load).
Prints a table; not a timed test.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.integration.stack import ENV_FILE, read_env  # noqa: E402


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def sequential(session: aiohttp.ClientSession, url: str, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        async with session.get(url) as r:
            await r.read()
            assert r.status == 200, r.status
        out.append(time.perf_counter() - t)
    return out


async def loaded(
    session: aiohttp.ClientSession, url: str, concurrency: int, seconds: float
) -> tuple[float, list[float]]:
    samples: list[float] = []
    stop_at = time.perf_counter() + seconds

    async def one() -> None:
        while time.perf_counter() < stop_at:
            t = time.perf_counter()
            async with session.get(url) as r:
                await r.read()
                assert r.status == 200, r.status
            samples.append(time.perf_counter() - t)

    started = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(concurrency)))
    return len(samples) / (time.perf_counter() - started), samples


async def measure(url: str, n: int, concurrency: int, seconds: float) -> dict[str, float]:
    connector = aiohttp.TCPConnector(limit=concurrency * 2)
    async with aiohttp.ClientSession(connector=connector) as session:
        await sequential(session, url, 200)  # warm up the JIT, pools and caches
        seq = await sequential(session, url, n)
        rps, under_load = await loaded(session, url, concurrency, seconds)
    return {
        "p50": pct(seq, 0.50),
        "p99": pct(seq, 0.99),
        "rps": rps,
        "load_p50": pct(under_load, 0.50),
        "load_p99": pct(under_load, 0.99),
    }


def start_httpx_sidecar(properties: str) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "CONTROL_PLANE_UPSTREAM_TRANSPORT": "httpx", "CONTROL_PLANE_LOG_LEVEL": "warning"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "control_plane", "serve", "--port", str(port), "--worker-properties", properties],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(100):
        try:
            with urllib.request.urlopen(url + "/readyz", timeout=1) as r:
                if r.status == 200:
                    return proc, url
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("the httpx sidecar did not become ready")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=1000, help="sequential requests for p50/p99")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--path", default="/connectors")
    args = parser.parse_args()
    if not ENV_FILE.exists():
        raise SystemExit(f"no running stack ({ENV_FILE} missing): run make stack-up first")
    env = read_env()
    httpx_proc, httpx_url = start_httpx_sidecar(env["CONNECT_PROPERTIES"])
    targets = [
        ("Connect 4.3.1 direct", env["CONNECT_URL"]),
        ("sidecar (aiohttp pool)", env["SIDECAR_URL"]),
        ("sidecar (httpx pool)", httpx_url),
    ]
    results = {}
    try:
        for name, base in targets:
            print(f"measuring {name} ...", file=sys.stderr, flush=True)
            results[name] = asyncio.run(measure(base + args.path, args.requests, args.concurrency, args.seconds))
    finally:
        httpx_proc.terminate()
        httpx_proc.wait(10)
    direct = results[targets[0][0]]
    print(
        f"\nGET {args.path}: {args.requests} sequential requests, "
        f"then {args.concurrency} concurrent for {args.seconds:.0f}s"
    )
    print(
        f"{'target':<26}{'p50 ms':>9}{'p99 ms':>9}{'added p50':>11}{'added p99':>11}"
        f"{'req/s':>9}{'load p50':>10}{'load p99':>10}"
    )
    for name, r in results.items():
        print(
            f"{name:<26}{r['p50']:>9.2f}{r['p99']:>9.2f}"
            f"{r['p50'] - direct['p50']:>11.2f}{r['p99'] - direct['p99']:>11.2f}"
            f"{r['rps']:>9.0f}{r['load_p50']:>10.2f}{r['load_p99']:>10.2f}"
        )
    print(f"(2 cores shared by the load generator, the sidecar and the JVMs; cpu count {os.cpu_count()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
