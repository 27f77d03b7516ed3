"""The local driver JVM's class archive (spark_jobs/class_archive.py): named by the JDK and PySpark it was
built from, put on a local JVM's options once it exists; and, for real, built by
``python -m spark_jobs.build_class_archive`` and mapped by a fresh session's JVM."""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from pyspark import SparkContext

from spark_jobs import class_archive
from spark_jobs.class_archive import (
    CACHE_ENV,
    archive_file,
    archive_option,
    dump_command,
    installation,
    java_executable,
    spark_jars,
)
from spark_jobs.session import (
    HEAP_OPTIONS,
    LOCAL_JAVA_OPTIONS,
    SHORT_JAVA_OPTIONS,
    SHORT_JOB_RECORDS,
    SessionOptions,
    compiler_directives,
    java_options,
    spark_conf,
)
from tests.support.paths import ROOT
from tests.support.spark_fixtures import PYSPARK_SOCKETS

CHECKOUT_CACHE = os.environ.get(CACHE_ENV)  # where make spark-archive builds (the default when unset)


@pytest.fixture
def cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setattr(SparkContext, "_jvm", None)  # SparkConf() reads no earlier test's JVM
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    return tmp_path / "cache"


def test_a_local_jvm_maps_the_archive_once_it_is_built(cache: Path) -> None:
    archive = archive_file()
    assert archive is not None and archive.parent == cache and archive.name.startswith("classes-")
    assert archive_option() == "" and java_options(None) == SHORT_JAVA_OPTIONS  # not built: no option
    cache.mkdir()
    archive.write_bytes(b"")
    option = f" -XX:SharedArchiveFile={archive}"
    assert archive_option() == option
    assert java_options(None) == SHORT_JAVA_OPTIONS + option
    big = LOCAL_JAVA_OPTIONS.format(directives=compiler_directives()) + HEAP_OPTIONS.format(memory="1g") + option
    assert java_options(SHORT_JOB_RECORDS, "1g") == big
    assert java_options(SHORT_JOB_RECORDS, "1g", archive=False) == big.removesuffix(option)
    local = spark_conf(SessionOptions(master="local[2]", records=SHORT_JOB_RECORDS))
    assert local.get("spark.driver.extraJavaOptions") == big
    assert spark_conf(SessionOptions(master="spark://h:7077")).get("spark.driver.extraJavaOptions") is None


def test_the_archive_is_named_by_the_jdk_it_was_built_for(
    cache: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    mine = archive_file()
    other = tmp_path / "jdk" / "bin" / "java"  # JAVA_HOME first, as Spark's launcher picks it
    other.parent.mkdir(parents=True)
    other.write_bytes(b"not this machine's java")
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "jdk"))
    assert java_executable() == other and archive_file() not in (None, mine)
    renamed = archive_file()
    other.write_bytes(b"another build of it")  # the same path, another JDK
    assert archive_file() != renamed
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "none"))
    assert java_executable() is None and archive_file() is None and archive_option() == ""
    monkeypatch.delenv("JAVA_HOME")
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "a cache"))  # Spark splits its options at white space
    Path(str(archive_file())).parent.mkdir()
    Path(str(archive_file())).write_bytes(b"")
    assert archive_option() == ""


def test_each_installation_of_pyspark_has_its_own_archive(
    cache: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # another checkout's virtualenv: the same jars elsewhere, so another class path (an archive fits one)
    mine = archive_file()
    copy = tmp_path / "venv" / "jars"
    copy.mkdir(parents=True)
    for jar in spark_jars().glob("*.jar"):
        (copy / jar.name).symlink_to(jar)
    monkeypatch.setattr(class_archive, "spark_jars", lambda: copy)
    theirs = archive_file()
    assert mine is not None and theirs is not None
    assert theirs.name.split("-")[1] == installation() != mine.name.split("-")[1]
    assert theirs.name.split("-")[2] == mine.name.split("-")[2]  # the same JDK and PySpark


def test_jars_installed_again_name_another_archive(
    cache: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # the JVM maps an archive only for jars of the times it was built from (a virtualenv made again)
    jars = tmp_path / "jars"
    jars.mkdir()
    (jars / "spark-core.jar").write_bytes(b"jar")
    monkeypatch.setattr(class_archive, "spark_jars", lambda: jars)
    before = archive_file()
    os.utime(jars / "spark-core.jar", ns=(0, 1_000_000_000))
    assert archive_file() not in (None, before)


def test_a_change_of_the_builder_names_another_archive(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mine = archive_file()
    monkeypatch.setattr(class_archive, "builder_code", lambda: "another")
    theirs = archive_file()
    assert mine is not None and theirs is not None and theirs != mine
    assert theirs.name.split("-")[1] == mine.name.split("-")[1]  # the same installation: it replaces mine


def test_the_dump_archives_the_listed_classes_for_the_jvms_class_path(tmp_path: Path) -> None:
    modules = ["--add-modules=m"]
    command = dump_command(Path("/j/bin/java"), tmp_path / "l.txt", tmp_path / "a.jsa", "x.jar:y.jar", modules)
    assert command == [
        "/j/bin/java",
        "-Xshare:dump",
        f"-XX:SharedClassListFile={tmp_path / 'l.txt'}",
        f"-XX:SharedArchiveFile={tmp_path / 'a.jsa'}",
        "--add-modules=m",
        "-cp",
        "x.jar:y.jar",
    ]


# a fresh process's session (this process's is up already): what its JVM says of class sharing
PROBE = """
from pathlib import Path
import sys
from spark_jobs.session import SessionOptions, build_session
spark = build_session(SessionOptions(app_name="probe", kafka=True, log_file=Path(sys.argv[1])))
jvm = spark.sparkContext._jvm
arguments = jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()
print(jvm.System.getProperty("java.vm.info"))
print(" ".join(str(a) for a in arguments if "SharedArchiveFile" in str(a)))
assert spark.range(10).count() == 10
spark.stop()
"""


def _probe(cache: Path, log: Path, java_tool_options: str | None = None) -> tuple[str, str]:
    env = {**os.environ, CACHE_ENV: str(cache)}
    if java_tool_options is not None:
        env["JAVA_TOOL_OPTIONS"] = java_tool_options
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(log)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    info, option = done.stdout.splitlines()[-2:]
    return info, option


def _seeded(cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path | None:
    """This checkout's archive in ``cache``, where ``make spark-archive`` built it (a link: the build is the
    target's, once per JDK, PySpark and builder); None where it did not (the test then builds one)."""
    if CHECKOUT_CACHE is None:
        monkeypatch.delenv(CACHE_ENV)
    else:
        monkeypatch.setenv(CACHE_ENV, CHECKOUT_CACHE)
    built = archive_file()
    monkeypatch.setenv(CACHE_ENV, str(cache))
    if built is None or not built.is_file():
        return None
    seeded = cache / built.name
    os.link(built, seeded) if built.stat().st_dev == cache.stat().st_dev else seeded.symlink_to(built)
    return seeded


@pytest.mark.spark
@PYSPARK_SOCKETS
def test_the_built_archive_is_mapped_by_a_sessions_jvm_and_a_bad_one_is_ignored(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache.mkdir()
    seeded = _seeded(cache, monkeypatch)
    stale = cache / f"classes-{installation()}-0000000000000000.jsa"  # an earlier JDK's or PySpark's, here
    stale.write_bytes(b"old")
    elsewhere = cache / "classes-00000000-0000000000000000.jsa"  # another checkout's PySpark: its own
    elsewhere.write_bytes(b"theirs")
    env = {**os.environ, CACHE_ENV: str(cache)}
    built = subprocess.run(
        [sys.executable, "-m", "spark_jobs.build_class_archive"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    assert ("up to date" in built.stdout) == (seeded is not None)
    archive = archive_file()
    assert archive is not None and archive.is_file() and not stale.exists() and elsewhere.exists()
    assert archive.stat().st_size > 50 * 2**20  # Spark's classes, not a stub
    again = subprocess.run(  # once: a second run builds nothing
        [sys.executable, "-m", "spark_jobs.build_class_archive"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert "up to date" in again.stdout
    # with a specified archive the JVM shares classes only when it maps that archive (else none at all); and
    # with a JVMTI class file load hook on (a flight recording) the JVM runs tasks with the archive mapped (an
    # archive of the method handles' generated holder classes crashed it: build_class_archive.GENERATED). Two
    # processes side by side: each mostly waits on its JVM's start
    recording = f"-XX:StartFlightRecording=filename={tmp_path / 'probe.jfr'}"
    with ThreadPoolExecutor(2) as pool:
        plain = pool.submit(_probe, cache, tmp_path / "probe.log")
        hooked = pool.submit(_probe, cache, tmp_path / "probe-jfr.log", recording)
        for info, option in (plain.result(), hooked.result()):
            assert "sharing" in info and option == f"-XX:SharedArchiveFile={archive}"
    # replaced, never written in place: a JVM still mapping the file (the probe's ends after its Python)
    # would fault on its pages (build_class_archive renames a whole archive over the old one)
    bad = cache / "bad"
    bad.write_bytes(b"not an archive")
    bad.replace(archive)  # the JVM starts as without it (a link to the built one is replaced, not written)
    info, option = _probe(cache, tmp_path / "probe-bad.log")
    assert "sharing" not in info and option == f"-XX:SharedArchiveFile={archive}"
