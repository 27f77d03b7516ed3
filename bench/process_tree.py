"""A command's run measured from outside: wall time, the CPU seconds and the peak resident memory of its
process tree (and of the trees of processes it talks to, such as a Spark Connect server), and when each
line of its output came, so that a run can be cut into parts at lines it prints (the start of a job's
reading, a marker between two runs in one process).

Memory is sampled every 0.2 s, split by kind: the root's own Python, the JVM (a launcher's JVM comes
before it: the larger counts), the Python workers. A child the JVM forks (``rm -rf`` of its block
manager's directory at exit) shows the JVM's memory until it execs, so neither it nor a shell counts.
CPU is each process's user + system time when last seen (a process that ends loses its last 0.2 s).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

KINDS = ("driver_python", "driver_jvm", "python_workers")


@dataclass
class Mark:
    """A moment of the run: its time since the start, the trees' CPU seconds then; the peaks from the
    previous mark to this one."""

    at_s: float
    cpu_seconds: float
    peaks: dict[str, float]  # MiB: KINDS and "tree"


@dataclass
class Run:
    returncode: int
    lines: list[tuple[float, str]]  # (seconds since the start, line)
    marks: list[Mark] = field(default_factory=list)  # the start, each marked line, the end

    def first(self, text: str, after_s: float = 0.0) -> float | None:
        """When the first line holding ``text`` came (at or after ``after_s``), in seconds since the start."""
        return next((at for at, line in self.lines if text in line and at >= after_s), None)

    @property
    def output(self) -> str:
        return "\n".join(line for _, line in self.lines)


class _Sampler:
    def __init__(self, roots: list[int]) -> None:
        self.roots = roots
        self.cpu: dict[int, float] = {}
        self.peaks = dict.fromkeys((*KINDS, "tree"), 0)
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self.done.is_set():
            self.sample()
            self.done.wait(0.2)

    def sample(self) -> None:
        rss = dict.fromkeys(KINDS, 0)
        for root_pid in self.roots:
            try:
                root = psutil.Process(root_pid)
                procs = [root, *root.children(recursive=True)]
            except psutil.Error:
                continue
            jvm = 0  # of this tree: its one JVM (a launcher's JVM comes before it)
            for p in procs:
                try:
                    mem, name, times = p.memory_info().rss, p.name(), p.cpu_times()
                except psutil.Error:
                    continue
                with self.lock:
                    self.cpu[p.pid] = times.user + times.system
                if name == "java":
                    jvm = max(jvm, mem)
                elif p.pid == root_pid:
                    rss["driver_python"] += mem
                elif name.startswith("python"):
                    rss["python_workers"] += mem
            rss["driver_jvm"] += jvm
        with self.lock:
            for key, value in rss.items():
                self.peaks[key] = max(self.peaks[key], value)
            self.peaks["tree"] = max(self.peaks["tree"], sum(rss.values()))

    def mark(self, at_s: float) -> Mark:
        self.sample()
        with self.lock:
            mark = Mark(at_s, sum(self.cpu.values()), {k: v / 2**20 for k, v in self.peaks.items()})
            self.peaks = dict.fromkeys(self.peaks, 0)
        return mark


def measure(command: list[str], cwd: Path, marker: str | None = None, servers: tuple[int, ...] = ()) -> Run:
    """Run ``command``; its output line by line with times; marks at the start, at each line that begins
    with ``marker``, and at the end; ``servers``: processes whose trees count too (their CPU as it grows
    during the run; between two marks subtract)."""
    started = time.monotonic()
    proc = subprocess.Popen(
        command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1, env=os.environ
    )
    sampler = _Sampler([proc.pid, *servers])
    run = Run(0, [], [sampler.mark(0.0)])
    sampler.thread.start()
    assert proc.stdout is not None
    for line in proc.stdout:
        at = time.monotonic() - started
        run.lines.append((at, line.rstrip("\n")))
        if marker is not None and line.startswith(marker):
            run.marks.append(sampler.mark(at))
    # the tree's CPU just before the root is reaped (its children are gone by then; the root's own counts)
    run.marks.append(sampler.mark(time.monotonic() - started))
    run.returncode = proc.wait()
    run.marks[-1].at_s = time.monotonic() - started
    sampler.done.set()
    sampler.thread.join()
    return run


def check(run: Run, what: str) -> None:
    """Exit with the tail of ``run``'s output when it failed."""
    if run.returncode != 0:
        print(run.output[-6000:], file=sys.stderr)
        raise SystemExit(f"{what} failed with exit status {run.returncode}")


def between(run: Run, start: Mark, end: Mark) -> dict[str, float]:
    """The figures of the part of ``run`` from ``start`` to ``end``: seconds, CPU seconds, peaks (MiB)."""
    peaks = {k: max(m.peaks[k] for m in run.marks if start.at_s < m.at_s <= end.at_s) for k in start.peaks}
    return {"seconds": end.at_s - start.at_s, "cpu_seconds": end.cpu_seconds - start.cpu_seconds, **peaks}
