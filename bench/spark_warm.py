"""The Spark jobs on a warm engine, for ``bench/spark_jobs.py --warm``: the second run of a job on a Spark that
is already up, measured apart from the start-up the first run paid.

- kept local session: one process builds the session as a job would (``spark_jobs.session``), then runs
  the job twice in it (the job keeps a session it did not start); the second run is measured from the
  marker printed before it to the one printed after it, not the session's stop and the process's exit
  that come after (some seconds, the same for a job and its floor: counted, they brought every ratio
  closer to 1).
- Spark Connect: a server from the installed PySpark (``spark_jobs.connect_server``), and the job twice as
  a thin client in a fresh process (``--remote``); the second client's run is measured with the server's
  process tree (its CPU during the run, its memory: the warm engine's).

Run as a script, it is the kept session's child: ``spark_warm.py MODULE RECORDS DRIVER_MEMORY LOG -- ARGS``.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.process_tree import Run, between, check, measure  # noqa: E402

READING = "reading and decoding"  # the job's step that reads its first record (spark_jobs.job.load)
RUN_MARK = "bench-run "  # what the kept session's child prints before each run of the job, and after the last


def _figures(run: Run, start_index: int, end_index: int = -1) -> dict[str, float]:
    """The part of ``run`` from its mark ``start_index`` to its mark ``end_index`` (by default its end),
    with its start-up: until its first record is read."""
    start = run.marks[start_index]
    figures = between(run, start, run.marks[end_index])
    reading = run.first(READING, after_s=start.at_s)
    return {**figures, "startup_s": (reading - start.at_s) if reading is not None else 0.0}


def kept_session(module: str, args: list[str], records: int, driver_memory: str, log: Path) -> dict[str, float]:
    """The second of two runs of ``module`` in one process that keeps its local session."""
    command = [sys.executable, __file__, module, str(records), driver_memory, str(log), "--", *args]
    run = measure(command, ROOT, marker=RUN_MARK)
    check(run, module)
    return _figures(run, -3, -2)  # from the marker before the second run to the one after it


def on_connect(module: str, args: list[str], url: str, server_pid: int) -> dict[str, float]:
    """The second of two runs of ``module`` as a Spark Connect client of the server at ``url``."""
    runs = [measure([sys.executable, "-m", module, "--remote", url, *args], ROOT, servers=(server_pid,))]
    check(runs[0], module)
    runs.append(measure([sys.executable, "-m", module, "--remote", url, *args], ROOT, servers=(server_pid,)))
    check(runs[1], module)
    return _figures(runs[1], 0)


@contextmanager
def connect_server(log: Path, driver_memory: str, conf: dict[str, str] | None = None) -> Iterator[tuple[str, int]]:
    """A Spark Connect server on a free loopback port (``conf``: further settings of its own): (its URL, its
    pid), stopped afterwards."""
    from spark_jobs import connect_server as server
    from tests.support.ports import free_port

    port = free_port()
    proc = server.start(log, port=port, driver_memory=driver_memory, conf=conf)
    try:
        deadline = time.monotonic() + 180
        while not server.accepts(port):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the Spark Connect server did not start; its log: {log}")
            time.sleep(0.25)
        yield f"sc://127.0.0.1:{port}", proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _child(argv: list[str]) -> int:
    """The kept session's process: the session a job of ``records`` records starts, then the job twice."""
    module, records, driver_memory, log = argv[:4]
    args = argv[argv.index("--") + 1 :]
    from spark_jobs.session import SessionOptions, build_session

    options = SessionOptions(
        app_name=module.rsplit(".", 1)[1], driver_memory=driver_memory, log_file=Path(log), records=int(records)
    )
    spark = build_session(options)
    main = importlib.import_module(module).main
    for n in (1, 2):
        print(f"{RUN_MARK}{n}", flush=True)
        code = main(args)
        if code != 0:
            return int(code)
    print(f"{RUN_MARK}done", flush=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(_child(sys.argv[1:]))
