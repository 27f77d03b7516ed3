"""The jobs on a Spark Connect server, as far as no Spark is needed: which session a job asks for (``--remote``,
``SPARK_REMOTE``, ``--master``), what it sends with its session, and the server's command line
(tests/integration/test_spark_jobs.py runs both jobs on a real server)."""

from __future__ import annotations

import pytest

from spark_jobs import connect_server
from spark_jobs.job import parser
from spark_jobs.session import (
    DATAFRAME_DEBUGGING,
    REMOTE_ENV,
    SessionError,
    SessionOptions,
    kafka_package,
    remote_url,
    session_settings,
)
from spark_jobs.transforms.driver_codec import reads_first_batch_only


def test_remote_comes_from_the_flag_or_from_spark_remote_unless_a_master_is_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(REMOTE_ENV, raising=False)
    assert remote_url(None, None) is None  # local mode
    assert remote_url("sc://h:15002", None) == "sc://h:15002"
    monkeypatch.setenv(REMOTE_ENV, "sc://env:15002")
    assert remote_url(None, None) == "sc://env:15002"  # as Spark's own clients read it
    assert remote_url("sc://flag:1", None) == "sc://flag:1"
    assert remote_url(None, "local[2]") is None  # a master of the job's own wins over the environment
    monkeypatch.setenv(REMOTE_ENV, "")
    assert remote_url(None, None) is None


@pytest.mark.parametrize(
    ("remote", "master", "says"),
    [
        ("sc://h:15002", "local[2]", "--remote and --master exclude each other"),
        ("spark://h:7077", None, "not a Spark Connect URL: 'spark://h:7077'"),
        ("h:15002", None, "sc://host:port"),
    ],
)
def test_a_remote_the_job_cannot_use_is_a_clear_error(remote: str, master: str | None, says: str) -> None:
    with pytest.raises(SessionError, match=says.replace("[", r"\[").replace("]", r"\]")):
        remote_url(remote, master)


def test_both_jobs_take_remote() -> None:
    args = parser("x", "x", "out").parse_args(["--remote", "sc://localhost:15002"])
    assert args.remote == "sc://localhost:15002" and args.master is None


def test_a_remote_session_gets_the_jobs_sql_settings_and_the_callers_but_not_the_drivers_own() -> None:
    settings = session_settings(SessionOptions(remote="sc://h:1", conf={"spark.sql.shuffle.partitions": "8"}))
    assert settings["spark.sql.session.timeZone"] == "UTC"
    assert settings["spark.sql.inMemoryColumnarStorage.compressed"] == "false"
    assert settings["spark.sql.shuffle.partitions"] == "8"
    assert not [k for k in settings if k.startswith(("spark.driver.", "spark.jars", "spark.master"))]
    mine = session_settings(SessionOptions(remote="sc://h:1", conf={DATAFRAME_DEBUGGING: "true"}))
    assert mine[DATAFRAME_DEBUGGING] == "true"  # a --conf of the caller's is sent as it is


def test_the_server_is_spark_connect_on_the_port_with_the_kafka_source_and_a_long_jobs_jvm() -> None:
    cmd = connect_server.command(port=15999, host="127.0.0.1", conf={"spark.executor.cores": "1"})
    assert cmd[1:3] == ["--class", connect_server.SERVER_CLASS]
    conf = dict(cmd[i + 1].split("=", 1) for i, part in enumerate(cmd) if part == "--conf")
    assert conf["spark.connect.grpc.binding.port"] == "15999"
    assert conf["spark.connect.grpc.binding.address"] == "127.0.0.1"
    assert conf["spark.master"] == "local[2]" and conf["spark.executor.cores"] == "1"
    kafka = conf.get("spark.jars.packages") == kafka_package() or "spark-sql-kafka-0-10" in conf.get("spark.jars", "")
    assert kafka
    assert "-XX:TieredStopAtLevel=1" not in conf["spark.driver.extraJavaOptions"]  # C2 for a long-running JVM


@pytest.mark.parametrize(
    ("server", "first_only"),
    [
        pytest.param("4.0.0", True, id="4.0.0"),
        pytest.param("3.5.6", True, id="3.5.6"),
        pytest.param("4.0.1", False, id="4.0.1-fixed"),
        pytest.param("4.1.1", False, id="4.1.1"),
        pytest.param("4.2.0", False, id="4.2.0"),
        pytest.param("4.3.0-SNAPSHOT", False, id="a-snapshot-of-a-later-release"),
    ],
)
def test_only_servers_before_4_0_1_read_the_first_arrow_batch_of_a_local_relation_only(
    server: str, first_only: bool
) -> None:
    """SPARK-53342, fixed in 4.0.1: an older server keeps the first record batch of a local relation, so the
    driver's frames go to it in one chunk; newer ones get the table's batches as they are."""
    assert reads_first_batch_only(server) is first_only
