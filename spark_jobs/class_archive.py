"""The local driver JVM's classes parsed and verified ahead of time: a class data sharing archive
(HotSpot's AppCDS, JDK 17's static archive) that a local job's JVM maps at its start, instead of loading
some 16,000 classes from Spark's jars and verifying their bytecode each run (3 to 4 s of a job's wall time
on two cores, at 1 M and at 10 M records alike; docs/spark-jobs/index.md).

:mod:`.build_class_archive` (``make spark-archive``) writes it, once per machine: a JVM lists the classes
the jobs load (``-XX:DumpLoadedClassList``), then ``java -Xshare:dump`` (:func:`dump_command`) archives
those classes for that JVM's class path. It lives in the cache directory, named by what it was built
from (:func:`archive_file`: the PySpark installation, the JDK, PySpark's jars), so another checkout, JDK
or PySpark finds none. A local
session's JVM gets :func:`archive_option` when the archive exists; the JVM checks it against its own
class path and jars, and where they differ it starts as it would without the option (no sharing; a
file that is not an archive is ignored the same way).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

CACHE_ENV = "SPARK_JOBS_CACHE_DIR"  # where the archive lives (default: ~/.cache/spark-jobs)
PREFIX = "classes-"
SUFFIX = ".jsa"


def cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "spark-jobs")


def java_executable() -> Path | None:
    """The java that starts a local job's JVM, chosen as Spark's launcher does (``bin/spark-class``):
    ``$JAVA_HOME/bin/java``, else ``java`` on the PATH; None when there is none."""
    home = os.environ.get("JAVA_HOME")
    found = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not found or not Path(found).is_file():
        return None
    return Path(found).resolve()


def spark_jars() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent / "jars"


def _digest(text: str, length: int) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:length]


def installation() -> str:
    """The part of the archive's name that says which PySpark installation it is for (its jars' directory:
    the JVM's class path names them there, and an archive fits that class path only)."""
    return _digest(str(spark_jars().resolve()), 8)


def builder_code() -> str:
    """The code that builds the archive (:mod:`.build_class_archive`), as a digest."""
    return _digest(Path(__file__).with_name("build_class_archive.py").read_text(), 16)


def archive_file() -> Path | None:
    """Where the archive of this JDK and this PySpark is (whether or not it was built); None without java.
    Named by :func:`installation`, then by the java binary (its path, size and time), PySpark's jars
    (their names, sizes and times) and the builder's code (an archive of an earlier builder is built again)."""
    java = java_executable()
    if java is None:
        return None
    stat = java.stat()
    # the JVM maps an archive only for jars of the sizes and modification times it was built from: a PySpark
    # installed again (a new virtualenv at the same path) needs an archive of its own
    jars = sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in spark_jars().glob("*.jar"))
    identity = json.dumps([str(java), stat.st_size, stat.st_mtime_ns, jars, builder_code()])
    return cache_dir() / f"{PREFIX}{installation()}-{_digest(identity, 16)}{SUFFIX}"


def archive_option() -> str:
    """`` -XX:SharedArchiveFile=<archive>`` for a local driver JVM's options, or "" when no archive of
    this JDK and PySpark was built (or its path holds white space, which Spark's option splitting would cut)."""
    path = archive_file()
    if path is None or not path.is_file() or any(c.isspace() for c in str(path)):
        return ""
    return f" -XX:SharedArchiveFile={path}"


def dump_command(java: Path, class_list: Path, archive: Path, class_path: str, modules: list[str]) -> list[str]:
    """``java -Xshare:dump`` of the classes of ``class_list`` for a JVM of ``class_path`` (as that JVM saw
    it, wildcards expanded) and ``modules`` (its ``--add-modules`` options)."""
    return [
        str(java),
        "-Xshare:dump",
        f"-XX:SharedClassListFile={class_list}",
        f"-XX:SharedArchiveFile={archive}",
        *modules,
        "-cp",
        class_path,
    ]
