"""The one local SparkSession of a test process (``local[2]``, with Spark's Kafka source so that the
integration tests can run the jobs in it too), as the session-scoped fixture ``spark``. Test modules
that need it import it (``from tests.support.spark_fixtures import spark``) or sit under a conftest that does;
``build_session`` hands every importer the same session. The JVM's output goes to a file."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pyspark.sql import SparkSession

from spark_jobs.session import SessionOptions, build_session

# PySpark reads every collect() from a loopback socket that it leaves to the garbage collector
# (pyspark.util._load_from_socket: "The socket will be automatically closed when garbage-collected"), so
# each collect ends in a ResourceWarning for an unclosed socket. Ignored in the Spark tests only.
PYSPARK_SOCKETS = pytest.mark.filterwarnings("ignore:unclosed <socket.socket:ResourceWarning")
SPARK_MARKS = [pytest.mark.spark, PYSPARK_SOCKETS]


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    log = tmp_path_factory.getbasetemp() / "spark" / "spark.log"
    options = SessionOptions(
        app_name="control-plane-tests", kafka=True, log_file=log, conf={"spark.sql.shuffle.partitions": "2"}
    )
    session = build_session(options)
    yield session
    session.stop()
