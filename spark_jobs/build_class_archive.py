"""``python -m spark_jobs.build_class_archive`` (``make spark-archive``): build the local driver JVM's
class archive (:mod:`.class_archive`) of this machine's JDK and PySpark, unless it is there already
(``--force``: build it again). About a minute, once: a child process runs both jobs on a small synthetic
history (:mod:`.synthetic`) in a JVM that lists every class it loads, then ``java -Xshare:dump`` archives
them. The archive replaces one of another JDK or PySpark of the same installation. Exit status 2, with the
reason and the tail of the log, when it cannot be built; the jobs then run as they would without it. A
change of this module names a new archive (:func:`.class_archive.archive_file`): it is built again.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .class_archive import PREFIX, SUFFIX, archive_file, dump_command, installation, java_executable
from .synthetic import TOPICS, generate, worker_properties

# the training's history: every code path of both jobs, in a few seconds of Spark
TRAINING = {"records": 20_000, "connectors": 50, "partitions": 4, "status_records": 2_000}
NAME = "build-class-archive"


class ArchiveError(RuntimeError):
    """The archive was not built; the message says why."""


def _run(command: list[str], log: Path, what: str) -> None:
    with log.open("a") as out:
        done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, check=False)
    if done.returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-20:])
        raise ArchiveError(f"{what} failed (exit status {done.returncode}); the end of {log}:\n{tail}")


# the class list's lines of the method handles' holder classes that the dump generates anew: a JVM that
# mapped them crashed (SIGSEGV in KlassFactory::check_shared_class_file_load_hook, JDK 17.0.15) as soon as
# a JVMTI class file load hook was on (a flight recording, a Java agent) and a task's lambda loaded one;
# left out, the JVM generates them as it would without an archive (measured: the same wall time)
GENERATED = "@lambda-form-invoker"


def archived_classes(listed: Path, archived: Path) -> int:
    """``listed`` (the JVM's class list) without the :data:`GENERATED` lines, into ``archived``; returns the
    classes it names."""
    lines = [line for line in listed.read_text().splitlines() if not line.startswith(GENERATED)]
    archived.write_text("\n".join(lines) + "\n")
    return sum(1 for line in lines if line and not line.startswith(("#", "@")))


def build(force: bool = False) -> Path:
    """The archive of this JDK and PySpark, built unless it exists (``force``: built again)."""
    target, java = archive_file(), java_executable()
    if target is None or java is None:
        raise ArchiveError("no java: neither $JAVA_HOME/bin/java nor java on the PATH")
    if target.is_file() and not force:
        _remove_others(target)
        print(f"{NAME}: up to date: {target}")
        return target
    started = time.monotonic()
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="spark-jobs-classes-") as tmp:
        work = Path(tmp)
        log = target.with_suffix(".log")  # kept beside the archive: what the training and the dump said
        log.write_text("")
        print(f"{NAME}: both jobs on a small synthetic history, in a JVM that lists the classes it loads")
        _run([sys.executable, "-m", "spark_jobs.build_class_archive", "--train", str(work)], log, "the training run")
        facts = json.loads((work / "jvm.json").read_text())
        listed = archived_classes(work / "classes.txt", work / "archived.txt")
        print(f"{NAME}: archiving {listed:,} classes (java -Xshare:dump)")
        partial = target.with_name(f"{target.name}.{os.getpid()}")
        command = dump_command(java, work / "archived.txt", partial, facts["class_path"], facts["modules"])
        try:
            _run(command, log, "java -Xshare:dump")
            partial.replace(target)  # whole or not at all: a JVM never maps a half-written archive
        finally:
            partial.unlink(missing_ok=True)
    _remove_others(target)
    size = target.stat().st_size / 2**20
    print(f"{NAME}: {target} ({size:,.0f} MiB) in {time.monotonic() - started:.0f}s")
    return target


def _remove_others(target: Path) -> None:
    """An earlier JDK's, PySpark's or builder's archive of this installation (another checkout's stays: it
    is its own)."""
    for other in target.parent.glob(f"{PREFIX}{installation()}-*{SUFFIX}"):
        if other != target:
            other.unlink(missing_ok=True)
            other.with_suffix(".log").unlink(missing_ok=True)


def train(work: Path) -> None:
    """The training run (a child process of :func:`build`): both jobs in one session whose JVM lists
    the classes it loads in ``work/classes.txt``; its class path and modules in ``work/jvm.json``."""
    from . import offsets_reconcile, topic_audit
    from .session import SessionOptions, build_session, java_options

    snapshot = work / "history.parquet"
    generate(snapshot, **TRAINING)
    props = worker_properties(work / "worker.properties", "127.0.0.1:9", TOPICS)
    options = java_options(None, archive=False) + f" -XX:DumpLoadedClassList={work / 'classes.txt'}"
    conf = {"spark.driver.extraJavaOptions": options}
    spark = build_session(SessionOptions(app_name=NAME, log_file=work / "spark.log", conf=conf))
    for job in (offsets_reconcile, topic_audit):
        args = ["--snapshot", str(snapshot), "--offline", "--worker-properties", str(props)]
        if job.main([*args, "--out", str(work / job.JOB)]) != 0:
            raise ArchiveError(f"{job.JOB} failed on the training history")
    jvm = spark.sparkContext._jvm
    assert jvm is not None  # a running session's
    arguments = jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()
    facts = {
        "class_path": str(jvm.System.getProperty("java.class.path")),
        "modules": [str(a) for a in arguments if str(a).startswith("--add-modules")],
    }
    (work / "jvm.json").write_text(json.dumps(facts))
    process = spark.sparkContext._gateway.proc  # type: ignore[union-attr]  # launch_gateway's
    spark.stop()
    # the JVM ends when its standard input closes; its class list is whole once it has
    process.stdin.close()
    process.wait(timeout=120)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog=NAME, description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--force", action="store_true", help="build it again, even if it is there")
    p.add_argument("--train", type=Path, help=argparse.SUPPRESS)  # build's child process
    args = p.parse_args(argv)
    try:
        if args.train is not None:
            train(args.train)
        else:
            build(args.force)
    except ArchiveError as err:
        print(f"{NAME}: error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
