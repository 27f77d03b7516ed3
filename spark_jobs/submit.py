"""``python -m spark_jobs.submit``: run the jobs on a Spark cluster with ``spark-submit``.

- ``package --out DIR``: ``DIR/control_plane_jobs.zip`` (the two packages the driver and the Python
  workers import; pure Python) and ``DIR/main.py`` (the file spark-submit runs). What the cluster's
  Python needs besides: the driver's Python version (3.11 to 3.13) with ``pyarrow`` (the jobs decode in
  ``mapInArrow``), as PySpark does.
- ``command --master URL JOB [job options]``: package, then print the ``spark-submit`` command line, with
  Spark's Kafka source as ``--packages`` when the job reads Kafka (no ``--snapshot``).
- ``run --master URL JOB [job options]``: the same, then run it (the installed PySpark's spark-submit).

The jobs take spark-submit's ``--master`` when they are given none themselves.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from .session import ROOT, ivy_dir, kafka_package, package_code

JOBS = ("offsets-reconcile", "topic-audit")
ZIP = "control_plane_jobs.zip"
DEFAULT_OUT = Path("dist/spark")


def run_job(argv: list[str]) -> int:
    """The entry point spark-submit runs (``deploy/spark/main.py``): a job's name, then its options."""
    if not argv or argv[0] not in JOBS:
        print(f"usage: main.py {{{','.join(JOBS)}}} [job options]", file=sys.stderr)
        return 2
    mains: dict[str, Callable[[list[str]], int]]
    from . import offsets_reconcile, topic_audit

    mains = {"offsets-reconcile": offsets_reconcile.main, "topic-audit": topic_audit.main}
    return mains[argv[0]](argv[1:])


def package(out: Path) -> tuple[Path, Path]:
    archive = package_code(out / ZIP)
    main = out / "main.py"
    shutil.copyfile(ROOT / "deploy" / "spark" / "main.py", main)
    return archive, main


def spark_submit() -> str:
    """The installed PySpark's spark-submit (next to this interpreter), else the one on PATH."""
    here = Path(sys.executable).parent / "spark-submit"
    return str(here) if here.exists() else "spark-submit"


def command(master: str, job: str, job_args: list[str], out: Path, conf: list[str] | None = None) -> list[str]:
    archive, main = package(out)
    cmd = [spark_submit(), "--master", master, "--py-files", str(archive)]
    if "--snapshot" not in job_args:  # Spark's Kafka source, from the Ivy cache the jobs use themselves
        cmd += ["--packages", kafka_package(), "--conf", f"spark.jars.ivy={ivy_dir()}"]
    for item in conf or []:
        cmd += ["--conf", item]
    return [*cmd, str(main), job, *job_args]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m spark_jobs.submit", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="action", required=True)
    pack = sub.add_parser("package", help="build the zip and main.py")
    pack.add_argument("--out", type=Path, default=DEFAULT_OUT)
    for name in ("command", "run"):
        s = sub.add_parser(name, help=f"{name} the spark-submit command line")
        s.add_argument("--master", required=True, help="spark://host:7077, yarn, k8s://...")
        s.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where the zip and main.py go")
        s.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="a spark-submit --conf")
        s.add_argument("job", choices=JOBS)
        s.add_argument("job_args", nargs=argparse.REMAINDER, help="the job's own options")
    args = p.parse_args(argv)
    if args.action == "package":
        archive, entry = package(args.out)
        print(f"{archive}\n{entry}")
        return 0
    cmd = command(args.master, args.job, args.job_args, args.out, args.conf)
    if args.action == "command":
        print(shlex.join(cmd))
        return 0
    env = dict(os.environ)
    env.setdefault("PYSPARK_PYTHON", sys.executable)  # the driver's and the executors' Python
    env.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    return subprocess.call(cmd, env=env)


if __name__ == "__main__":
    sys.exit(main())
