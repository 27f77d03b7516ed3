"""Packaging the jobs for spark-submit (no Spark starts here): the zip holds both packages, the command
line carries --master, --py-files and, for a job that reads Kafka, Spark's Kafka source; a job's session
takes spark-submit's master when the job names none."""

from __future__ import annotations

import json
import subprocess
import zipfile
from pathlib import Path

import pytest
from pyspark import SparkConf, SparkContext

from spark_jobs import submit
from spark_jobs.class_archive import CACHE_ENV
from spark_jobs.session import (
    C1_ONLY,
    DEFAULT_MASTER,
    HEAP_OPTIONS,
    LOCAL_JAVA_OPTIONS,
    SHORT_JAVA_OPTIONS,
    SHORT_JOB_RECORDS,
    SessionOptions,
    compiler_directives,
    ivy_dir,
    kafka_jars_file,
    kafka_package,
    lists_kafka_jars,
    local_threads,
    remember_kafka_jars,
    shuffle_partitions,
    spark_conf,
)


def test_package_holds_both_packages_and_the_entry_file(tmp_path: Path) -> None:
    archive, main = submit.package(tmp_path)
    names = set(zipfile.ZipFile(archive).namelist())
    assert {"control_plane/codecs/offsets.py", "spark_jobs/job.py", "spark_jobs/transforms/jvm_decode.py"} <= names
    assert not [n for n in names if not n.endswith(".py")]
    assert "run_job" in main.read_text()


def test_command_line(tmp_path: Path) -> None:
    kafka = submit.command("spark://h:7077", "offsets-reconcile", ["--no-sidecar"], tmp_path, ["a=b"])
    assert kafka[kafka.index("--master") + 1] == "spark://h:7077"
    assert kafka[kafka.index("--py-files") + 1] == str(tmp_path / submit.ZIP)
    assert kafka[kafka.index("--packages") + 1] == kafka_package()
    assert "a=b" in kafka and kafka[-3:] == [str(tmp_path / "main.py"), "offsets-reconcile", "--no-sidecar"]
    offline = submit.command("yarn", "topic-audit", ["--snapshot", "s.parquet", "--offline"], tmp_path)
    assert "--packages" not in offline


def test_entry_point_refuses_an_unknown_job(capsys: pytest.CaptureFixture[str]) -> None:
    assert submit.run_job(["nope"]) == 2
    assert "offsets-reconcile" in capsys.readouterr().err


def test_master_from_the_job_else_from_spark_submit_else_local(monkeypatch: pytest.MonkeyPatch) -> None:
    # no JVM of an earlier test's session in this process: SparkConf() would load that JVM's spark.* settings
    monkeypatch.setattr(SparkContext, "_jvm", None)
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    assert spark_conf(SessionOptions(master=None)).get("spark.master") == DEFAULT_MASTER
    assert spark_conf(SessionOptions(master="spark://h:7077")).get("spark.master") == "spark://h:7077"
    monkeypatch.setenv("PYSPARK_GATEWAY_PORT", "1")  # as under spark-submit: its JVM's settings
    conf = spark_conf(SessionOptions(master=None, kafka=True))
    assert conf.get("spark.jars.packages") is None and conf.get("spark.driver.memory") is None


def test_a_local_jobs_jvm_and_shuffle_are_sized_to_its_input(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(SparkContext, "_jvm", None)
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))  # no class archive (test_class_archive.py: with one)
    small = spark_conf(SessionOptions(master="local[2]", records=1_000))
    assert small.get("spark.driver.extraJavaOptions") == SHORT_JAVA_OPTIONS  # C1 only: a short job
    assert small.get("spark.sql.shuffle.partitions") == "4"
    assert spark_conf(SessionOptions(master="local[2]")).get("spark.driver.extraJavaOptions") == SHORT_JAVA_OPTIONS
    big = spark_conf(SessionOptions(master="local[2]", records=SHORT_JOB_RECORDS))
    directives = compiler_directives()
    heap = HEAP_OPTIONS.format(memory="1g")  # the whole heap from the start: the driver's memory
    assert heap == " -Xms1g -XX:MetaspaceSize=256m"
    assert big.get("spark.driver.extraJavaOptions") == LOCAL_JAVA_OPTIONS.format(directives=directives) + heap
    bigger = spark_conf(SessionOptions(master="local[2]", records=SHORT_JOB_RECORDS, driver_memory="3g"))
    assert str(bigger.get("spark.driver.extraJavaOptions")).endswith(" -Xms3g -XX:MetaspaceSize=256m")
    # Spark starts the JVM with -XX:+IgnoreUnrecognizedVMOptions: a misspelt option would pass unnoticed there
    options = str(big.get("spark.driver.extraJavaOptions")).split()
    accepted = subprocess.run(["java", *options, "-version"], capture_output=True, text=True, check=False)
    assert accepted.returncode == 0 and "Unrecognized" not in accepted.stderr, accepted.stderr
    # HotSpot's compiler directives: the planner's and the compilers' code left to C1
    assert json.loads(directives.read_text()) == [{"match": list(C1_ONLY), "c2": {"Exclude": True}}]
    assert compiler_directives() == directives  # written once
    mine = spark_conf(SessionOptions(master="local[2]", conf={"spark.driver.extraJavaOptions": "-Xss4m"}))
    assert mine.get("spark.driver.extraJavaOptions") == "-Xss4m"  # --conf wins
    assert spark_conf(SessionOptions(master="spark://h:7077")).get("spark.driver.extraJavaOptions") is None
    assert [local_threads(m) for m in ("local", "local[3]", "local[3,2]")] == [1, 3, 3]
    assert shuffle_partitions("local") == 2


def test_the_kafka_sources_jars_once_resolved_are_taken_as_they_are(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A start that Ivy resolved the Kafka source for lists its jars (``spark.jars`` as Spark's submit set
    it); a later local start takes them while every one is there, else, or with a ``spark.jars`` of its
    own, resolves the package again."""
    monkeypatch.setattr(SparkContext, "_jvm", None)
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))

    def resolves(conf: SparkConf) -> bool:
        return conf.get("spark.jars.packages") == kafka_package() and conf.get("spark.jars.ivy") == ivy_dir()

    first = SessionOptions(kafka=True)
    assert resolves(spark_conf(first)) and lists_kafka_jars(first, spark_conf(first))
    assert not kafka_jars_file().exists()
    jars = [tmp_path / "a b.jar", tmp_path / "c.jar"]
    for jar in jars:
        jar.write_bytes(b"PK")
    urls = [jar.as_uri() for jar in jars]  # file:///... with %20 for the space
    remember_kafka_jars(SparkConf(loadDefaults=False).set("spark.jars", ",".join(urls)))
    assert kafka_jars_file().read_text().split() == urls
    taken = spark_conf(SessionOptions(kafka=True))
    assert taken.get("spark.jars") == ",".join(urls) and taken.get("spark.jars.packages") is None
    assert spark_conf(SessionOptions(kafka=False)).get("spark.jars") is None
    mine = spark_conf(SessionOptions(kafka=True, conf={"spark.jars": "/opt/x.jar"}))
    assert resolves(mine) and mine.get("spark.jars") == "/opt/x.jar"  # Spark adds the package's to them
    own = SessionOptions(kafka=True, conf={"spark.jars": "/opt/x.jar"})
    assert not lists_kafka_jars(own, spark_conf(own))  # its spark.jars are not the source's alone
    assert not lists_kafka_jars(first, taken)  # taken as listed: nothing resolved
    listed = kafka_jars_file()
    monkeypatch.setenv("SPARK_JOBS_IVY_DIR", str(tmp_path / "ivy"))
    assert kafka_jars_file() != listed and resolves(spark_conf(SessionOptions(kafka=True)))  # another Ivy's
    monkeypatch.delenv("SPARK_JOBS_IVY_DIR")
    jars[0].unlink()
    assert resolves(spark_conf(SessionOptions(kafka=True)))  # one is gone: resolved again


def test_the_records_a_job_reads_are_known_before_spark_starts(tmp_path: Path) -> None:
    import argparse

    import pyarrow as pa
    import pyarrow.parquet as pq

    from spark_jobs.job import expected_records

    snapshot = tmp_path / "s.parquet"
    pq.write_table(pa.table({"topic": ["a", "b", "c"]}), snapshot)
    assert expected_records(argparse.Namespace(snapshot=snapshot), None) == 3
    assert expected_records(argparse.Namespace(snapshot=None), {"t": {0: 5, 1: 7}, "u": {0: 1}}) == 13
    assert expected_records(argparse.Namespace(snapshot=tmp_path / "s.jsonl"), None) is None
