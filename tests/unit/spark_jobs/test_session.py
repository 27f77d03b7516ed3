"""The jobs' SparkSession as :func:`spark_jobs.session.build_session` starts it (the test process's one)."""

from __future__ import annotations

from typing import Any

import py4j.clientserver
import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from spark_jobs.session import DATAFRAME_DEBUGGING


def test_dataframe_calls_hand_the_jvm_no_python_call_site(spark: SparkSession, monkeypatch: pytest.MonkeyPatch) -> None:
    """PySpark's DataFrame debugging is off (session.spark_conf): building a frame sends the JVM no call
    site (``PySparkCurrentOrigin``), which cost about five py4j round trips a DataFrame or Column call."""
    assert spark.conf.get(DATAFRAME_DEBUGGING) == "false"
    commands: list[str] = []
    send = py4j.clientserver.ClientServerConnection.send_command

    def counted(self: py4j.clientserver.ClientServerConnection, command: str) -> Any:
        commands.append(command)
        return send(self, command)

    monkeypatch.setattr(py4j.clientserver.ClientServerConnection, "send_command", counted)
    frame = spark.range(3).select((F.col("id") + 1).alias("n")).filter(F.col("n") > 1)
    assert [r["n"] for r in frame.collect()] == [2, 3]
    assert commands  # the frame was built through py4j
    assert not [c for c in commands if "PySparkCurrentOrigin" in c]
