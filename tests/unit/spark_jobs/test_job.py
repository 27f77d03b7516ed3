"""The jobs' fail-fast paths, before any Spark starts: unreachable Kafka (refused, or silent until the
timeout), an unreadable snapshot, unknown internal topics: one clear line and exit status 2."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from spark_jobs import offsets_reconcile, topic_audit
from spark_jobs.job import parse_duration, parse_time
from spark_jobs.read import InputError
from tests.support.ports import free_port

Main = Callable[[list[str] | None], int]
JOBS = [pytest.param(offsets_reconcile.main, id="offsets-reconcile"), pytest.param(topic_audit.main, id="topic-audit")]


@pytest.fixture
def properties(tmp_path: Path) -> Path:
    path = tmp_path / "worker.properties"
    path.write_text(
        "bootstrap.servers=127.0.0.1:9\nconfig.storage.topic=c\noffset.storage.topic=o\nstatus.storage.topic=s\n"
    )
    return path


@pytest.fixture
def closed_port() -> int:
    return free_port()


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts connections and never answers."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(8)
        yield int(s.getsockname()[1])


@pytest.mark.parametrize("main", JOBS)
def test_refused_kafka(
    main: Main, properties: Path, closed_port: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "--worker-properties",
            str(properties),
            "--bootstrap",
            f"127.0.0.1:{closed_port}",
            "--out",
            str(tmp_path / "o"),
        ]
    )
    assert code == 2
    assert f"error: Kafka at 127.0.0.1:{closed_port} failed (connecting)" in capsys.readouterr().err
    assert not (tmp_path / "o" / "spark.log").exists()  # Spark never started


def test_silent_kafka_times_out(
    properties: Path, silent_port: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    started = time.monotonic()
    args = ["--worker-properties", str(properties), "--bootstrap", f"127.0.0.1:{silent_port}", "--kafka-timeout-s", "1"]
    assert topic_audit.main([*args, "--out", str(tmp_path)]) == 2
    assert time.monotonic() - started < 10
    assert f"error: Kafka at 127.0.0.1:{silent_port} did not answer within 1s" in capsys.readouterr().err


@pytest.mark.parametrize("main", JOBS)
def test_missing_snapshot(main: Main, properties: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    snapshot = tmp_path / "gone.parquet"
    assert (
        main(["--worker-properties", str(properties), "--snapshot", str(snapshot), "--offline", "--out", str(tmp_path)])
        == 2
    )
    assert f"error: cannot read snapshot {snapshot}: no such file or directory" in capsys.readouterr().err


def test_unknown_internal_topics(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bare = tmp_path / "bare.properties"
    bare.write_text("bootstrap.servers=127.0.0.1:9\n")
    assert offsets_reconcile.main(["--worker-properties", str(bare), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert (
        "the internal topic names are unknown (config.storage.topic, status.storage.topic, offset.storage.topic)" in err
    )


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        pytest.param("1700000000123", 1_700_000_000_123, id="epoch-ms"),
        pytest.param("2023-11-14T22:13:20Z", 1_700_000_000_000, id="utc"),
        pytest.param("2023-11-14T23:13:20+01:00", 1_700_000_000_000, id="offset"),
        pytest.param("2023-11-14T22:13:20", 1_700_000_000_000, id="naive-is-utc"),
    ],
)
def test_parse_time(text: str, ms: int) -> None:
    assert parse_time(text) == ms


def test_a_text_that_is_no_time_is_the_jobs_error() -> None:
    with pytest.raises(InputError, match="'yesterday' is not a time: ISO-8601 or milliseconds since the epoch"):
        parse_time("yesterday")


@pytest.mark.parametrize(
    ("text", "ms"), [("90", 90_000), ("90s", 90_000), ("15m", 900_000), ("12h", 43_200_000), ("7d", 604_800_000)]
)
def test_parse_duration(text: str, ms: int) -> None:
    assert parse_duration(text) == ms
