"""A Spark Connect server from the installed PySpark (its ``spark-connect`` jar ships in the pip package),
for the jobs' ``--remote``: a warm Spark that keeps its JVM, its compiled code and the Kafka source between
runs. ``spark-submit --class org.apache.spark.sql.connect.service.SparkConnectServer``, as Spark's own
``sbin/start-connect-server.sh`` runs it (that script is not in the pip package), in the foreground:

    .venv/bin/python -m spark_jobs.connect_server                  # sc://127.0.0.1:15002, local[2]
    .venv/bin/python -m spark_jobs.offsets_reconcile --remote sc://127.0.0.1:15002 ...

The server is the Spark application: its master, its driver's memory and JVM options (a long-running
JVM's: :data:`~.session.LOCAL_JAVA_OPTIONS`), its log, and the Kafka source (resolved by Ivy once, as
for a local job) are its own settings, given here; a job adds only its SQL settings and its code.
Where a Spark service already runs, its operators start the server with the same two things the jobs
need: ``--packages org.apache.spark:spark-sql-kafka-0-10_<scala>:<spark>`` and a Python of the jobs' version
(3.11 to 3.13) with pyarrow for the Python workers.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
from pathlib import Path

from .session import (
    DEFAULT_DRIVER_MEMORY,
    DEFAULT_MASTER,
    SHORT_JOB_RECORDS,
    SessionOptions,
    spark_conf,
)
from .submit import spark_submit

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
DEFAULT_PORT = 15002  # Spark Connect's own default


def command(
    port: int = DEFAULT_PORT,
    host: str = "127.0.0.1",
    master: str = DEFAULT_MASTER,
    driver_memory: str = DEFAULT_DRIVER_MEMORY,
    conf: dict[str, str] | None = None,
) -> list[str]:
    """The ``spark-submit`` command line of a server on ``host:port``: a local job's settings for a long
    job (:func:`.session.spark_conf`), with the Kafka source, then ``conf``."""
    options = SessionOptions(
        master=master,
        app_name="Spark Connect server",
        driver_memory=driver_memory,
        kafka=True,
        records=SHORT_JOB_RECORDS,  # a long-running JVM: the options of a long job, C2 included
        conf={
            "spark.connect.grpc.binding.address": host,
            "spark.connect.grpc.binding.port": str(port),
            **(conf or {}),
        },
    )
    settings = spark_conf(options)
    cmd = [spark_submit(), "--class", SERVER_CLASS, "--name", "Spark Connect server"]
    for key, value in sorted(settings.getAll()):
        cmd += ["--conf", f"{key}={value}"]
    return cmd


def environment(host: str = "127.0.0.1") -> dict[str, str]:
    """The server's environment: its Python workers run this interpreter (pyarrow, the codecs), on loopback."""
    return {
        **os.environ,
        "PYSPARK_PYTHON": sys.executable,
        "SPARK_LOCAL_IP": host if host != "0.0.0.0" else os.environ.get("SPARK_LOCAL_IP", "127.0.0.1"),
    }


def start(
    log: Path,
    port: int = DEFAULT_PORT,
    host: str = "127.0.0.1",
    master: str = DEFAULT_MASTER,
    driver_memory: str = DEFAULT_DRIVER_MEMORY,
    conf: dict[str, str] | None = None,
) -> subprocess.Popen[bytes]:
    """The server in a child process, its output appended to ``log``; ready once ``host:port`` accepts. It
    runs in ``log``'s folder: the server keeps its sessions' artifacts under ``artifacts/`` there."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:  # the child keeps its own descriptor
        return subprocess.Popen(
            command(port, host, master, driver_memory, conf),
            cwd=log.parent,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=environment(host),
        )


def accepts(port: int, host: str = "127.0.0.1") -> bool:
    """Whether the server's gRPC port takes a connection (it listens once its SparkContext is up)."""
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="spark_jobs.connect_server", description=__doc__.split("\n\n")[0])
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"gRPC port (default: {DEFAULT_PORT})")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    p.add_argument("--master", default=DEFAULT_MASTER, help=f"the server's Spark master (default: {DEFAULT_MASTER})")
    p.add_argument("--driver-memory", default=DEFAULT_DRIVER_MEMORY, help="the server's driver memory")
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="a further Spark setting")
    p.add_argument("--print", action="store_true", help="print the spark-submit command line, do not run it")
    args = p.parse_args(argv)
    conf = dict(item.split("=", 1) for item in args.conf if "=" in item)
    cmd = command(args.port, args.host, args.master, args.driver_memory, conf)
    if args.print:
        print(" ".join(cmd))
        return 0
    print(f"Spark Connect server on sc://{args.host}:{args.port} ({args.master}); Ctrl-C stops it", flush=True)
    try:
        return subprocess.call(cmd, env=environment(args.host))
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
