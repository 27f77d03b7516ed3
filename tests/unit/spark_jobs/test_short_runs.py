"""What a short run of a job leaves out: an offline run imports no Kafka client, and a Spark Connect session
gets the Python workers' code only when a plan runs Python workers (a small run's driver codecs start none)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from spark_jobs import session
from spark_jobs.target import resolve_target
from spark_jobs.transforms import driver_codec

ROOT = Path(__file__).resolve().parents[3]


def test_an_offline_run_neither_builds_kafka_clients_settings_nor_imports_the_kafka_client(tmp_path: Path) -> None:
    properties = tmp_path / "worker.properties"
    properties.write_text(
        "bootstrap.servers=127.0.0.1:9\nconfig.storage.topic=c\noffset.storage.topic=o\nstatus.storage.topic=s\n"
    )
    offline = resolve_target(worker_properties=str(properties), use_sidecar=False, kafka=False)
    assert offline.aiokafka_kwargs == {} and offline.topics == {"config": "c", "status": "s", "offsets": "o"}
    online = resolve_target(worker_properties=str(properties), use_sidecar=False)
    assert online.aiokafka_kwargs["bootstrap_servers"] == "127.0.0.1:9"
    probe = (
        "import sys\n"
        "from spark_jobs import offsets_reconcile, topic_audit\n"
        "from spark_jobs.job import resolve\n"
        f"args = topic_audit.build_parser().parse_args(['--worker-properties', {str(properties)!r}, '--offline'])\n"
        "resolve(args)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'aiokafka'))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


class _Connect:
    """A Spark Connect session as far as ``code_for_workers`` asks: its type's module and its id."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.uploads: list[tuple[str, bool, list[str]]] = []

    def addArtifacts(self, path: str, pyfile: bool = False) -> None:
        with zipfile.ZipFile(path) as archive:
            self.uploads.append((Path(path).name, pyfile, archive.namelist()))


_Connect.__module__ = "pyspark.sql.connect.session"


class _Frame:
    def __init__(self, spark: Any, calls: list[str]) -> None:
        self.sparkSession = spark
        self.calls = calls

    def mapInArrow(self, decode: Any, schema: Any) -> str:
        self.calls.append(f"mapInArrow after {len(self.sparkSession.uploads)} upload(s)")
        return "mapped"


def test_a_connect_session_gets_the_workers_code_once_and_only_for_a_plan_of_python_workers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(session, "_code_sent", set())
    first, second = _Connect("one"), _Connect("two")
    assert session.is_connect(first)  # type: ignore[arg-type]
    calls: list[str] = []
    mapped: Any = driver_codec.in_workers(_Frame(first, calls), None, None)  # type: ignore[arg-type]
    assert mapped == "mapped"
    driver_codec.in_workers(_Frame(first, calls), None, None)  # type: ignore[arg-type]
    assert calls == ["mapInArrow after 1 upload(s)"] * 2  # sent before the plan that needs it, once a session
    ((name, pyfile, files),) = first.uploads
    assert name == "control_plane_jobs.zip" and pyfile
    assert {"spark_jobs/session.py", "control_plane/codecs/__init__.py"} <= set(files)
    assert second.uploads == []  # a session whose plans start no Python worker gets nothing
    session.code_for_workers(second)  # type: ignore[arg-type]
    assert len(second.uploads) == 1


class _Classic(_Connect):
    pass


_Classic.__module__ = "pyspark.sql.session"


def test_a_classic_session_is_sent_nothing() -> None:
    classic = _Classic("classic")
    session.code_for_workers(classic)  # type: ignore[arg-type]
    assert classic.uploads == []
