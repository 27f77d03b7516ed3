"""What the benchmarks share: wrk as the load generator (its own process), the CPU time and memory of a
process (psutil), percentiles, a sidecar process of the code under test (``tests.support.sidecar_process``,
as the tests start one), and the results file.

Every figure is measured side by side with its reference in the same run and reported as a ratio too:
the machine is usually shared, so absolute figures vary from run to run more than ratios do.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from tests.support import sidecar_process
from tests.support.paths import ROOT
from tests.support.sidecar_process import SidecarNotAnswering, SidecarProcess

RESULTS = ROOT / "bench" / "results"
WORK = RESULTS / "work"  # logs and properties of what the benchmarks start (git-ignored)
CODE = ROOT / ".stack" / "code"  # the code of git refs for before/after runs (git-ignored, outside the sources)


def pct(samples: list[float], q: float) -> float:
    """The q-quantile of samples given in seconds, in milliseconds."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def cpu_s(pid: int) -> float:
    """User plus system CPU seconds a process used so far."""
    times = psutil.Process(pid).cpu_times()
    return float(times.user + times.system)


def rss_mib(pid: int) -> float:
    return float(psutil.Process(pid).memory_info().rss) / 2**20


def wrk_path() -> str:
    path = shutil.which("wrk")
    if path is None:
        raise SystemExit("wrk is missing: `make bench` installs it (bench/ensure-wrk.sh)")
    return path


_UNIT = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}


def _ms(text: str) -> float:
    match = re.fullmatch(r"([0-9.]+)(us|ms|s|m)", text)
    if not match:
        raise ValueError(f"not a wrk duration: {text!r}")
    return float(match.group(1)) * _UNIT[match.group(2)]


@dataclass(frozen=True)
class Load:
    """One wrk run: requests, req/s, latency percentiles (ms), and the CPU ms per request of each
    process watched during the run."""

    requests: int
    rps: float
    p50: float
    p99: float
    errors: int
    cpu_ms_per_request: dict[str, float]

    def as_dict(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "rps": round(self.rps, 1),
            "p50_ms": round(self.p50, 3),
            "p99_ms": round(self.p99, 3),
            "errors": self.errors,
            "cpu_ms_per_request": {k: round(v, 4) for k, v in self.cpu_ms_per_request.items()},
        }


def wrk(url: str, connections: int, seconds: float, watch: dict[str, int] | None = None) -> Load:
    """``wrk`` at ``connections`` for ``seconds`` (one thread: the machine has few cores), while the CPU
    time of the ``watch`` processes (name: pid) is read before and after."""
    watch = watch or {}
    before = {name: cpu_s(pid) for name, pid in watch.items()}
    out = subprocess.run(
        [wrk_path(), "-t1", f"-c{connections}", f"-d{max(1, round(seconds))}s", "--latency", "--timeout", "30s", url],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    after = {name: cpu_s(pid) for name, pid in watch.items()}
    latency = dict(re.findall(r"^\s+(50|99)%\s+(\S+)\s*$", out, re.M))
    if "50" not in latency or "99" not in latency:
        raise RuntimeError(f"wrk measured nothing on {url}:\n{out}")
    requests = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    rps = float(re.search(r"Requests/sec:\s+([0-9.]+)", out).group(1))  # type: ignore[union-attr]
    errors = sum(int(n) for n in re.findall(r"Non-2xx or 3xx responses: (\d+)", out))
    socket_errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    if socket_errors:
        errors += sum(int(n) for n in socket_errors.groups())
    cpu = {name: (after[name] - before[name]) * 1000 / max(requests, 1) for name in watch}
    return Load(requests, rps, _ms(latency["50"]), _ms(latency["99"]), errors, cpu)


def http_get(url: str, timeout_s: float = 3.0) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def code_of(ref: str, packages: tuple[str, ...] = ("control_plane",)) -> Path:
    """The code of ``packages`` as of a git ref of this repository (``git archive``), for a before/after run:
    a folder holding them (the sidecar's by default; the Spark jobs need ``spark_jobs`` too)."""
    sha = subprocess.run(["git", "rev-parse", ref], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    target = CODE / sha[:12]
    for package in packages:
        if not (target / package).exists():
            target.mkdir(parents=True, exist_ok=True)
            archive = subprocess.run(["git", "archive", sha, package], cwd=ROOT, capture_output=True, check=True)
            subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target


def start_sidecar(
    name: str, properties: str, env: dict[str, str] | None = None, timeout_s: float = 300, code: Path | None = None
) -> SidecarProcess:
    """``control-plane serve`` in front of the worker of ``properties``, its log under ``WORK``; waits for
    /readyz. ``code``: a folder with another version's ``control_plane`` to run instead of this checkout's."""
    sidecar = sidecar_process.serve(
        ["--worker-properties", properties], WORK / f"{name}.log", name=name, env=env, code=code
    )
    try:
        sidecar.wait_answering("/readyz", timeout_s)
    except SidecarNotAnswering as failed:
        sidecar.stop(20)
        raise SystemExit(str(failed)) from None
    return sidecar


def ratio(value: float, reference: float) -> float | None:
    return round(value / reference, 3) if reference else None


def row(
    what: str, native: float | None, sidecar: float, unit: str, target: str = "", before: float | None = None
) -> dict[str, Any]:
    """A line of the table: the sidecar's figure beside its reference, and their ratio; ``before``: the
    same figure of the sidecar's code before a change (``--before REF``), measured in the same run."""
    out = {
        "what": what,
        "native": None if native is None else round(native, 3),
        "sidecar": round(sidecar, 3),
        "unit": unit,
        "ratio": None if native is None else ratio(sidecar, native),
        "target": target,
    }
    if before is not None:
        out["before"] = round(before, 3)
        out["before_ratio"] = None if native is None else ratio(before, native)
    return out


def print_table(title: str, rows: list[dict[str, Any]]) -> None:
    def num(value: float | None) -> str:
        return "" if value is None else f"{value:,.2f}"

    with_before = any("before" in r for r in rows)
    print(f"\n{title}")
    head = f"{'':<50}{'native':>10}" + (f"{'before':>10}{'ratio':>7}" if with_before else "")
    print(f"{head}{'sidecar':>10}{'ratio':>7}  target")
    for r in rows:
        line = f"{r['what'] + ' (' + r['unit'] + ')':<50}{num(r['native']):>10}"
        if with_before:
            line += f"{num(r.get('before')):>10}{num(r.get('before_ratio')):>7}"
        print(f"{line}{num(r['sidecar']):>10}{num(r['ratio']):>7}  {r['target']}")


def save(results: dict[str, Any], name: str = "bench") -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S")
    results = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "cpus": os.cpu_count(),
        "loadavg": os.getloadavg(),
        **results,
    }
    path = RESULTS / f"{name}-{stamp}.json"
    path.write_text(json.dumps(results, indent=1))
    (RESULTS / f"{name}-latest.json").write_text(json.dumps(results, indent=1))
    return path


def stack_env() -> dict[str, str]:
    """The running stack's ``.stack/env`` (``make stack-up`` writes it); an exit saying so when there is none."""
    from tests.support.stack import ENV_FILE, read_env  # the benchmarks' child processes need not import it

    if not ENV_FILE.exists():
        raise SystemExit(f"no running stack ({ENV_FILE} missing): run make stack-up first")
    return read_env()
