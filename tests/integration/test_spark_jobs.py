"""Both Spark jobs against the real stack (the native KIP-875 worker, Connect 4.4.0), after connectors
ran, were stopped, altered, reset and deleted, each finding produced by a real scenario:

- ``src``: a FileStreamSource read two lines (time T1), then two more; stopped and its offset altered
  down (went backwards); then a script wrote two offsets with Python's ``json.dumps`` spacing, one for
  its partition, one for a file it never read (keys the worker cannot find; the worker then shows that
  partition with a null offset: the sidecar's view disagrees with the history).
- ``reset``: a source whose offsets were reset (DELETE .../offsets) and whose topics were reset.
- ``sink``: a sink on three topics: ``data`` (altered beyond its log end), ``trim`` (altered to 0, then
  the records before 2 deleted: below the log start) and ``empty`` (never active).
- ``gone``, ``gsink``: a source and a sink that ran and were deleted (orphaned offsets, orphaned group).
- ``create``: a source with topic-creation rules that writes to a topic created beforehand otherwise.
- ``lonely``: a topic no connector uses.
- ``rsink``: a sink whose ``topics.regex`` means another set of topics to Java than to Python's ``re``
  (``[ab&&b]``: an intersection to Java, a class of three characters to Python).
- ``osink``: a sink whose consumer reads the broker under another name
  (``consumer.override.bootstrap.servers``): by the sidecar's rule, another Kafka cluster.
The restore plan as of T1 is then applied with the worker's own PATCH and read back.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiokafka import AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.admin.records_to_delete import RecordsToDelete
from pyspark.sql import SparkSession

from control_plane.cli import main as control_plane
from spark_jobs import offsets_reconcile, topic_audit
from tests.support.harness import Sidecars
from tests.support.paths import ROOT
from tests.support.ports import free_port
from tests.support.spark_cluster import standalone_cluster
from tests.support.spark_connect import spark_connect_server
from tests.support.spark_fixtures import SPARK_MARKS, spark  # noqa: F401 - the session-scoped fixture
from tests.support.spark_outputs import different_outputs
from tests.support.stack import Cluster, Stack
from tests.support.waiting import eventually

pytestmark = SPARK_MARKS

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"


@dataclass
class Scenario:
    cluster: Cluster
    names: dict[str, str]
    files: dict[str, str]
    t1_ms: int
    out: Path
    reports: dict[str, Any] = field(default_factory=dict)
    sidecar_url: str = ""

    def offsets_args(self, out: str = "offsets") -> list[str]:
        return [
            *("--worker-properties", self.cluster.properties, "--max-findings", "100000"),
            *("--sidecar-url", self.sidecar_url, "--as-of", str(self.t1_ms), "--out", str(self.out / out)),
        ]

    def offsets_report(self) -> dict[str, Any]:
        report: dict[str, Any] = json.loads((self.out / "offsets" / "offsets-report.json").read_text())
        return report

    def restore_plan(self) -> dict[str, Any]:
        plan: dict[str, Any] = json.loads((self.out / "offsets" / "restore-plan.json").read_text())
        return plan

    def audit_report(self, name: str = "audit") -> dict[str, Any]:
        audit: dict[str, Any] = json.loads((self.out / name / "topic-audit.json").read_text())
        return audit


async def offsets_of(worker: httpx.AsyncClient, name: str) -> list[dict[str, Any]]:
    answer = await worker.get(f"/connectors/{name}/offsets")
    return answer.json().get("offsets", []) if answer.status_code == 200 else []


async def state_of(worker: httpx.AsyncClient, name: str) -> str | None:
    answer = await worker.get(f"/connectors/{name}/status")
    return answer.json()["connector"]["state"] if answer.status_code == 200 else None


async def call(worker: httpx.AsyncClient, method: str, path: str, expected: int, body: Any = None) -> None:
    """One request; a 409 while the worker group rebalances (other tests' connectors come and go) is retried."""
    answer = await eventually(
        lambda: worker.request(method, path, json=body),
        lambda r: r.status_code != 409,
        timeout_s=30,
        what=f"{method} {path} without a 409",
    )
    assert answer.status_code == expected, answer.text


async def create(worker: httpx.AsyncClient, name: str, config: dict[str, str]) -> None:
    await call(worker, "POST", "/connectors", 201, {"name": name, "config": {"tasks.max": "1", **config}})


async def stop(worker: httpx.AsyncClient, name: str) -> None:
    await call(worker, "PUT", f"/connectors/{name}/stop", 204)
    await eventually(lambda: state_of(worker, name), lambda s: s == "STOPPED", what=f"{name} STOPPED")


async def patch(worker: httpx.AsyncClient, name: str, body: dict[str, Any]) -> None:
    await call(worker, "PATCH", f"/connectors/{name}/offsets", 200, body)


def position_is(partition: dict[str, Any], position: int) -> Any:
    return lambda offsets: {"partition": partition, "offset": {"position": position}} in offsets


def sink_offset_is(topic: str, offset: int) -> Any:
    entry = {"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": {"kafka_offset": offset}}
    return lambda offsets: entry in offsets


CONNECTORS = ("src", "reset", "sink", "gone", "gsink", "create", "rsink", "osink", "hsink")


def names_for(u: str) -> dict[str, str]:
    n = {k: f"spark-{k}-{u}" for k in CONNECTORS}
    topics = ("data", "trim", "empty", "lonely", "pre", "rtopic", "gtopic", "rxa", "rxb", "hold", "hnew")
    n.update({f"t_{k}": f"spark-{k}-{u}" for k in topics})
    return n


async def run_scenario(
    stack: Stack, cluster: Cluster, worker: httpx.AsyncClient, n: dict[str, str], tmp: Path
) -> Scenario:
    u = n["src"].rsplit("-", 1)[1]
    files = {k: str(tmp / f"{k}.txt") for k in ("src", "reset", "gone", "create")}
    admin = AIOKafkaAdminClient(bootstrap_servers=stack.bootstrap)
    await admin.start()
    producer = AIOKafkaProducer(bootstrap_servers=stack.bootstrap)
    await producer.start()
    try:
        topics = [n[f"t_{k}"] for k in ("data", "trim", "empty", "lonely", "pre", "rxa", "rxb", "hold")]
        await admin.create_topics([NewTopic(t, 1, 1) for t in topics])
        for i in range(3):
            await producer.send_and_wait(n["t_trim"], json.dumps(f"t{i}").encode())  # the worker reads JSON
        for t, i in ((t, i) for t in (n["t_rxa"], n["t_rxb"]) for i in range(2)):  # before T1: the log end then
            await producer.send_and_wait(t, json.dumps(f"x{i}").encode())

        # src: T1 after its first two lines, then two more, then stopped and altered down
        Path(files["src"]).write_text("a1\na2\n")
        a = {"filename": files["src"]}
        await create(worker, n["src"], {"connector.class": FILE_SOURCE, "file": files["src"], "topic": n["t_data"]})
        await eventually(lambda: offsets_of(worker, n["src"]), position_is(a, 6), what="src at 6")
        t1_ms = int(time.time() * 1000)
        # time has to pass on the worker's clock (a JVM's, not injectable): the commits after T1 must carry
        # later timestamps than T1, with a margin
        await asyncio.sleep(1.1)
        with open(files["src"], "a") as f:
            f.write("a3\na4\n")
        await eventually(lambda: offsets_of(worker, n["src"]), position_is(a, 12), what="src at 12")
        await stop(worker, n["src"])
        await patch(worker, n["src"], {"offsets": [{"partition": a, "offset": {"position": 3}}]})
        # a script's hand-written offsets: Python's json.dumps puts spaces the worker's converter does not
        offsets_topic = cluster.worker_property("offset.storage.topic")
        for partition, position in ((a, 99), ({"filename": f"/nowhere-{u}"}, 1)):
            key = json.dumps([n["src"], partition]).encode()
            await producer.send_and_wait(offsets_topic, key=key, value=json.dumps({"position": position}).encode())

        # reset: offsets reset, topics reset
        Path(files["reset"]).write_text("r1\n")
        await create(
            worker, n["reset"], {"connector.class": FILE_SOURCE, "file": files["reset"], "topic": n["t_rtopic"]}
        )
        await eventually(
            lambda: offsets_of(worker, n["reset"]), position_is({"filename": files["reset"]}, 3), what="reset at 3"
        )
        await stop(worker, n["reset"])
        await call(worker, "DELETE", f"/connectors/{n['reset']}/offsets", 200)
        await call(worker, "PUT", f"/connectors/{n['reset']}/topics/reset", 202)

        # sink: beyond the log end on data, below the log start on trim, never active on empty
        sink_topics = ",".join(n[f"t_{k}"] for k in ("data", "trim", "empty"))
        await create(
            worker, n["sink"], {"connector.class": FILE_SINK, "file": str(tmp / "out.txt"), "topics": sink_topics}
        )
        await eventually(
            lambda: offsets_of(worker, n["sink"]),
            lambda o: sink_offset_is(n["t_data"], 4)(o) and sink_offset_is(n["t_trim"], 3)(o),
            what="sink caught up",
        )
        await stop(worker, n["sink"])
        await patch(
            worker,
            n["sink"],
            {
                "offsets": [
                    {"partition": {"kafka_topic": n["t_data"], "kafka_partition": 0}, "offset": {"kafka_offset": 1000}},
                    {"partition": {"kafka_topic": n["t_trim"], "kafka_partition": 0}, "offset": {"kafka_offset": 0}},
                ]
            },
        )
        await admin.delete_records({TopicPartition(n["t_trim"], 0): RecordsToDelete(before_offset=2)})

        # gone and gsink: ran, then deleted
        Path(files["gone"]).write_text("g1\n")
        await create(worker, n["gone"], {"connector.class": FILE_SOURCE, "file": files["gone"], "topic": n["t_gtopic"]})
        await create(
            worker, n["gsink"], {"connector.class": FILE_SINK, "file": str(tmp / "g.txt"), "topics": n["t_data"]}
        )
        await eventually(
            lambda: offsets_of(worker, n["gone"]), position_is({"filename": files["gone"]}, 3), what="gone at 3"
        )
        await eventually(lambda: offsets_of(worker, n["gsink"]), sink_offset_is(n["t_data"], 4), what="gsink caught up")
        for name in (n["gone"], n["gsink"]):
            await call(worker, "DELETE", f"/connectors/{name}", 204)

        # rsink: to Java, spark-rx[ab&&b]-u is spark-rxb-u only; Python's re would match spark-rxa-u too
        regex = f"spark-rx[ab&&b]-{u}"
        rsink = {"connector.class": FILE_SINK, "file": str(tmp / "r.txt"), "topics.regex": regex}
        await create(worker, n["rsink"], rsink)
        await eventually(lambda: offsets_of(worker, n["rsink"]), sink_offset_is(n["t_rxb"], 2), what="rsink at 2")
        # osink: its consumer names the stack's broker otherwise (localhost): the worker reads through it,
        # but the sidecar's rule compares the named servers, so to the job it reads another cluster
        other = ",".join(a.replace("127.0.0.1", "localhost") for a in stack.bootstrap.split(","))
        assert other != stack.bootstrap
        osink = {"connector.class": FILE_SINK, "file": str(tmp / "o.txt"), "topics": n["t_data"]}
        await create(worker, n["osink"], {**osink, "consumer.override.bootstrap.servers": other})
        await eventually(lambda: offsets_of(worker, n["osink"]), sink_offset_is(n["t_data"], 4), what="osink at 4")

        # create: topic-creation rules that disagree with the topic created beforehand
        Path(files["create"]).write_text("c1\n")
        rules = {
            "topic.creation.default.replication.factor": "1",
            "topic.creation.default.partitions": "2",
            "topic.creation.groups": "compacted",
            "topic.creation.compacted.include": "spark-pre-.*",
            "topic.creation.compacted.cleanup.policy": "compact",
        }
        await create(
            worker, n["create"], {"connector.class": FILE_SOURCE, "file": files["create"], "topic": n["t_pre"], **rules}
        )
        await eventually(
            lambda: offsets_of(worker, n["create"]), position_is({"filename": files["create"]}, 3), what="create at 3"
        )

        # hsink: created STOPPED (it never reads), then its config names another topic: hold is a topic only
        # its earlier config named (the config history, in the sidecars' topic)
        hsink = {"connector.class": FILE_SINK, "tasks.max": "1", "file": str(tmp / "h.txt"), "topics": n["t_hold"]}
        await call(
            worker, "POST", "/connectors", 201, {"name": n["hsink"], "config": hsink, "initial_state": "STOPPED"}
        )
        await call(worker, "PUT", f"/connectors/{n['hsink']}/config", 200, {**hsink, "topics": n["t_hnew"]})
    finally:
        await producer.stop()
        await admin.close()
    return Scenario(cluster, n, files, t1_ms, tmp / "reports")


async def recorded_versions(sidecar_url: str, name: str) -> list[dict[str, Any]]:
    async with httpx.AsyncClient(base_url=sidecar_url, timeout=10) as client:
        answer = await client.get(f"/_sidecar/connectors/{name}/history")
    return list(answer.json()["versions"]) if answer.status_code == 200 else []


@pytest.fixture(scope="module")
async def scenario(
    stack: Stack,
    sidecars: Sidecars,
    tmp_path_factory: pytest.TempPathFactory,
    spark: SparkSession,  # noqa: F811 - the session fixture imported above, by name
) -> AsyncIterator[Scenario]:
    """The connectors' history; each job then runs once in its own fixture (``reconciled``, ``audited``),
    so that no one test's setup carries the scenario and both jobs under the test timeout."""
    cluster = stack.clusters["new"]
    sidecar = await sidecars.of(cluster)  # the code under test, served in this process (the jobs call it)
    tmp = tmp_path_factory.mktemp("spark-jobs")
    u = str(int(time.time() * 1000) % 10**8)
    names = names_for(u)
    async with httpx.AsyncClient(base_url=cluster.connect_url, timeout=60) as worker:
        try:
            s = await run_scenario(stack, cluster, worker, names, tmp)
            s.sidecar_url = sidecar.url
            await eventually(
                lambda: recorded_versions(sidecar.url, names["hsink"]),
                lambda versions: bool(versions) and versions[0]["change"] == "updated",
                what="hsink's config change in the history",
            )
            yield s
        finally:
            for name in (names[k] for k in CONNECTORS):
                await worker.delete(f"/connectors/{name}")


@pytest.fixture(scope="module")
async def on_other_sparks(
    scenario: Scenario, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[dict[str, asyncio.Task[Any]]]:
    """The runs on a Spark standalone cluster and on a Spark Connect server, started as soon as the scenario
    stands, side by side with each other and with local mode's runs (this process's session): much of each
    is waiting (JVMs starting, an executor registering, a stage's tasks scheduled), which the others fill.
    Their processes are their own, nothing of the session is shared. Each test awaits its own."""
    runs: dict[str, asyncio.Task[Any]] = {
        "standalone": asyncio.create_task(on_a_standalone_cluster(scenario, tmp_path_factory.mktemp("standalone"))),
        "connect": asyncio.create_task(on_a_spark_connect_server(scenario, tmp_path_factory.mktemp("sc"))),
    }
    yield runs
    for run in runs.values():
        run.cancel()
    await asyncio.gather(*runs.values(), return_exceptions=True)


@pytest.fixture(scope="module")
async def reconciled(scenario: Scenario, on_other_sparks: dict[str, asyncio.Task[Any]]) -> Scenario:
    # the jobs are synchronous programs with their own event loops: off this loop's thread (which serves
    # the sidecar they ask)
    assert await asyncio.to_thread(offsets_reconcile.main, scenario.offsets_args()) == 0
    return scenario


@pytest.fixture(scope="module")
async def audited(scenario: Scenario) -> Scenario:
    common = ["--worker-properties", scenario.cluster.properties, "--max-findings", "100000"]
    audit_args = [*common, "--unused-after", "1s", "--out", str(scenario.out / "audit")]
    assert await asyncio.to_thread(topic_audit.main, audit_args) == 0
    return scenario


def items(report: dict[str, Any], finding: str, **match: Any) -> list[dict[str, Any]]:
    return [i for i in report["findings"][finding]["items"] if all(i.get(k) == v for k, v in match.items())]


async def on_a_standalone_cluster(scenario: Scenario, tmp_path: Path) -> list[str]:
    """spark-submit with --master spark://... and --py-files (python -m spark_jobs.submit run), against the
    stack's broker and the same sidecar; the names of the master's completed applications."""
    ports = (free_port(), free_port(), free_port())  # free loopback ports
    async with standalone_cluster(tmp_path / "spark", ports) as cluster:
        command = [
            *(sys.executable, "-m", "spark_jobs.submit", "run", "--master", cluster.master_url),
            *("--out", str(tmp_path / "dist"), "--conf", "spark.driver.host=127.0.0.1"),
            *("--conf", "spark.executor.memory=512m", "--conf", "spark.sql.shuffle.partitions=4"),
            *("offsets-reconcile", *scenario.offsets_args("cluster")),
        ]
        proc = await asyncio.create_subprocess_exec(
            *command, cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
        )
        output, _ = await proc.communicate()  # this loop serves the sidecar the job asks meanwhile
        assert proc.returncode == 0, output.decode(errors="replace")[-4000:] + "\n" + cluster.log_tail()
        async with httpx.AsyncClient(timeout=10) as client:
            master = (await client.get(f"{cluster.ui_url}/json/")).json()
        return [app["name"] for app in master["completedapps"]]


def snapshot_audit_args(folder: Path, properties: str) -> list[str]:
    """topic-audit's options for the snapshot exported under ``folder``, but its ``--out``."""
    snapshot = ["--snapshot", str(folder / "snapshot.parquet"), "--offline", "--idle-after", "1s"]
    return ["--worker-properties", properties, *snapshot, "--max-findings", "100000"]


async def on_a_spark_connect_server(scenario: Scenario, tmp_path: Path) -> Path:
    """--remote sc://... : offsets-reconcile from the stack's broker with the same sidecar, and topic-audit
    from an exported snapshot, each a thin client in a process of its own on a Spark Connect server started
    from the installed PySpark (the folder of the snapshot and the outputs)."""
    properties = scenario.cluster.properties
    # a process of its own: the command configures this process's logging (structlog, at "error"), which a
    # thread would change under the tests that run meanwhile and after (their captured warnings gone)
    export = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "control_plane", "export", "--worker-properties", properties),
        *("--out", str(tmp_path / "snapshot.parquet")),
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    exported, _ = await export.communicate()  # this loop serves the sidecar meanwhile
    assert export.returncode == 0, exported.decode(errors="replace")[-3000:]
    audit_args = snapshot_audit_args(tmp_path, properties)
    async with spark_connect_server(tmp_path / "connect", free_port()) as server:

        async def job(module: str, args: list[str]) -> None:
            proc = await asyncio.create_subprocess_exec(
                *(sys.executable, "-m", module, "--remote", server.url, *args),
                cwd=ROOT,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
            )
            output, _ = await proc.communicate()  # this loop serves the sidecar the job asks meanwhile
            assert proc.returncode == 0, output.decode(errors="replace")[-4000:] + "\n" + server.log_tail()
            assert f"up (Spark Connect {server.url})" in output.decode()  # not a local session of its own

        # the driver's local frames keep every row: this server (the installed PySpark's, 4.0.1 or later) reads
        # every Arrow batch of a local relation, so they go to it as they are (a 4.0.0 server gets one batch)
        proc = await asyncio.create_subprocess_exec(
            *(sys.executable, "-c", LOCAL_FRAME_PROBE, server.url),
            cwd=ROOT,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        output, _ = await proc.communicate()
        assert proc.returncode == 0 and output.decode().splitlines()[-2:] == ["False", "25000 rows"], output.decode()[
            -3000:
        ]
        await job("spark_jobs.offsets_reconcile", scenario.offsets_args("connect"))
        await job("spark_jobs.topic_audit", [*audit_args, "--out", str(tmp_path / "audit-connect")])
    return tmp_path


@pytest.mark.timeout(1200)  # a second Spark (master, worker, driver and executor JVMs) on the shared cores
async def test_spark_submit_on_a_standalone_cluster_agrees_with_local_mode(
    reconciled: Scenario, on_other_sparks: dict[str, asyncio.Task[Any]]
) -> None:
    """spark-submit on a standalone cluster: the same findings and restore plan for this scenario's
    connectors as the local[2] run. Before any test alters them (file order)."""
    assert "offsets-reconcile" in await on_other_sparks["standalone"]  # ran on the cluster
    assert_same_offsets_findings(reconciled, "cluster")


@pytest.mark.timeout(900)  # a Spark Connect server's JVM beside the session's own, on the shared cores
async def test_both_jobs_on_a_spark_connect_server_agree_with_local_mode(
    reconciled: Scenario, audited: Scenario, on_other_sparks: dict[str, asyncio.Task[Any]]
) -> None:
    """Both jobs on a Spark Connect server: the same findings and restore plan as local mode, the same
    audit report and tables as a local run on the same snapshot."""
    folder: Path = await on_other_sparks["connect"]
    assert_same_offsets_findings(reconciled, "connect")
    local_audit, remote_out = folder / "audit-local", folder / "audit-connect"
    local_args = [*snapshot_audit_args(folder, audited.cluster.properties), "--out", str(local_audit)]
    assert await asyncio.to_thread(topic_audit.main, local_args) == 0  # this process's session, as local mode's
    assert different_outputs(local_audit, remote_out) == []
    remote = json.loads((remote_out / "topic-audit.json").read_text())
    (never,) = items(remote, "sinks_never_active_topics", connector=audited.names["sink"])  # not vacuous
    assert never["topic"] == audited.names["t_empty"]


LOCAL_FRAME_PROBE = """
import sys
import pyarrow as pa
from pyspark.sql.types import LongType, StructField, StructType
from spark_jobs.session import SessionOptions, build_session
from spark_jobs.transforms.driver_codec import arrow_frame, reads_first_batch_only
spark = build_session(SessionOptions(remote=sys.argv[1], app_name="local-frame-probe"))
print(reads_first_batch_only(spark.version))
batches = [pa.record_batch({"n": list(range(i, min(i + 10_000, 25_000)))}) for i in (0, 10_000, 20_000)]
table = pa.Table.from_batches(batches)
assert table.num_rows == 25_000 and len(table.to_batches()) == 3
print(arrow_frame(spark, table, StructType([StructField("n", LongType())])).count(), "rows")
"""


def assert_same_offsets_findings(reconciled: Scenario, out: str) -> None:
    """The findings and restore plan of another run of offsets-reconcile (``--out`` under ``out``) are local
    mode's for this scenario's connectors (others may have changed between the runs)."""
    local, other = reconciled.offsets_report(), json.loads((reconciled.out / out / "offsets-report.json").read_text())
    ours = set(reconciled.names.values())

    def of_ours(finding: dict[str, Any]) -> list[dict[str, Any]]:
        return sorted((i for i in finding["items"] if i.get("connector") in ours), key=json.dumps)

    assert local["findings"].keys() == other["findings"].keys()
    for name, finding in local["findings"].items():
        assert of_ours(other["findings"][name]) == of_ours(finding), name
    assert of_ours(local["findings"]["non_canonical_keys"])  # not vacuous
    plan = json.loads((reconciled.out / out / "restore-plan.json").read_text())
    assert {c: e for c, e in plan["connectors"].items() if c in ours} == {
        c: e for c, e in reconciled.restore_plan()["connectors"].items() if c in ours
    }


def test_orphaned_offsets_of_deleted_connectors(reconciled: Scenario) -> None:
    report, n = reconciled.offsets_report(), reconciled.names
    (gone,) = items(report, "orphaned_offsets", connector=n["gone"])
    assert (gone["type"], gone["partitions"]) == ("source", 1) and gone["deleted"] is not None
    (gsink,) = items(report, "orphaned_offsets", connector=n["gsink"])
    assert (gsink["type"], gsink["group"], gsink["partitions"]) == ("sink", f"connect-{n['gsink']}", 1)
    assert not items(report, "orphaned_offsets", connector=n["src"])


def test_keys_the_worker_cannot_find(reconciled: Scenario) -> None:
    report, n, a = reconciled.offsets_report(), reconciled.names, reconciled.files["src"]
    found = {i["key_text"]: i["reasons"] for i in items(report, "non_canonical_keys", connector=n["src"])}
    nowhere = {"filename": f"/nowhere-{n['src'].rsplit('-', 1)[1]}"}
    assert found == {
        json.dumps([n["src"], {"filename": a}]): [
            "key bytes differ from the worker's encoding",
            "the same source partition under 2 keys",
        ],
        json.dumps([n["src"], {"filename": a}], separators=(",", ":")): ["the same source partition under 2 keys"],
        json.dumps([n["src"], nowhere]): ["key bytes differ from the worker's encoding"],
    }


def test_offsets_that_went_backwards(reconciled: Scenario) -> None:
    report, n = reconciled.offsets_report(), reconciled.names
    (step,) = items(report, "offsets_went_backwards", connector=n["src"])
    assert (step["partition_json"], step["from_offset"], step["to_offset"]) == (
        {"filename": reconciled.files["src"]},
        {"position": 12},
        {"position": 3},
    )


def test_sink_offsets_against_the_log(reconciled: Scenario) -> None:
    report, n = reconciled.offsets_report(), reconciled.names
    (beyond,) = items(report, "sink_offsets_beyond_log_end", connector=n["sink"])
    assert (beyond["topic"], beyond["committed"], beyond["log_end"]) == (n["t_data"], 1000, 4)
    (below,) = items(report, "sink_offsets_below_log_start", connector=n["sink"])
    assert (below["topic"], below["committed"], below["log_start"], below["log_end"]) == (n["t_trim"], 0, 2, 3)
    lags = {i["topic"]: i["lag"] for i in items(report, "sink_lag", connector=n["sink"])}
    assert lags == {n["t_trim"]: 3, n["t_empty"]: 0}  # data: beyond the log end, its own finding, no lag
    assert report["findings"]["sink_lag"]["total"] >= 0


def test_sidecar_view_disagrees_where_the_worker_cannot_find_an_offset(reconciled: Scenario) -> None:
    report, n = reconciled.offsets_report(), reconciled.names
    u = n["src"].rsplit("-", 1)[1]
    (src,) = items(report, "sidecar_disagreements", connector=n["src"])
    assert (src["only_in_sidecar"], src["only_in_history"], src["different"]) == (
        [json.dumps({"filename": f"/nowhere-{u}"}, separators=(",", ":"))],
        [],
        [],
    )
    ours = {n[k] for k in ("reset", "sink", "create")}
    assert not [i for i in report["findings"]["sidecar_disagreements"]["items"] if i["connector"] in ours]
    running = report["findings"]["sidecar_disagreements"]["not_compared_running"]
    assert n["create"] in running and not {n["src"], n["reset"], n["sink"]} & set(running)  # those are stopped


async def test_restore_plan_puts_the_connectors_back(reconciled: Scenario) -> None:
    plan, n = reconciled.restore_plan(), reconciled.names
    src = plan["connectors"][n["src"]]
    a = {"filename": reconciled.files["src"]}
    assert src["body"] == {"offsets": [{"partition": a, "offset": {"position": 6}}]}
    sink = plan["connectors"][n["sink"]]["body"]["offsets"]
    data = {"partition": {"kafka_topic": n["t_data"], "kafka_partition": 0}, "offset": {"kafka_offset": 2}}
    assert data in sink  # a3, the first record written after T1
    assert n["reset"] not in plan["connectors"]  # no offsets then, none now
    assert (src["based_on"], src["not_restored"]) == (["offsets_topic"], [])
    assert "offsets_for_times" in plan["connectors"][n["sink"]]["based_on"]
    # trim's committed offset (altered to 0, the records before 2 deleted since) is below its position then
    # (the log end, 3): set, it would skip record 2, which the sink has not read: left out, with why;
    # data's (1000, beyond the log end) is above its position then (2): a rewind, planned
    not_planned = items(reconciled.offsets_report(), "restore_sink_not_planned", connector=n["sink"])
    assert [(i["partition_json"]["kafka_topic"], i["based_on"]) for i in not_planned] == [(n["t_trim"], "sink_behind")]
    assert "would skip 1 unread record(s)" in not_planned[0]["reason"]
    assert n["t_trim"] not in [e["partition"]["kafka_topic"] for e in sink]
    assert [e["partition"]["kafka_topic"] for e in plan["connectors"][n["sink"]]["not_restored"]] == [n["t_trim"]]
    async with httpx.AsyncClient(base_url=reconciled.cluster.connect_url, timeout=60) as worker:
        for name in (n["src"], n["sink"]):
            assert plan["connectors"][name]["path"] == f"/connectors/{name}/offsets"
            await patch(worker, name, plan["connectors"][name]["body"])
        assert {"partition": a, "offset": {"position": 6}} in await offsets_of(worker, n["src"])
        assert data in await offsets_of(worker, n["sink"])


def test_restore_plan_matches_topics_regex_as_java_and_skips_a_sink_on_another_cluster(
    reconciled: Scenario,
) -> None:
    plan, report, n = reconciled.restore_plan(), reconciled.offsets_report(), reconciled.names
    # rsink reads spark-rxb-u only (its committed offset, 2, is the log end then); spark-rxa-u, which
    # Python's re would match, is neither in its body nor anywhere else in its plan
    rsink = plan["connectors"][n["rsink"]]
    rxb = {"partition": {"kafka_topic": n["t_rxb"], "kafka_partition": 0}, "offset": {"kafka_offset": 2}}
    assert (rsink["body"], rsink["based_on"], rsink["not_restored"]) == ({"offsets": [rxb]}, ["log_end"], [])
    assert n["t_rxa"] not in json.dumps(plan) + json.dumps(report["findings"])
    # osink's group, on the stack's broker, has offsets (4 on data); to the job, whose rule compares the
    # named servers, its consumer reads another cluster: not planned, and why
    assert n["osink"] not in plan["connectors"]
    reason = plan["skipped"][n["osink"]]
    assert reason.startswith("its consumer reads another Kafka cluster (localhost:")
    assert items(report, "restore_sinks_skipped", connector=n["osink"]) == [{"connector": n["osink"], "reason": reason}]
    assert not [i for i in report["findings"]["sink_lag"]["items"] if i["connector"] == n["osink"]]  # not read


def test_history_table_per_connector_and_partition(reconciled: Scenario, spark: SparkSession) -> None:  # noqa: F811
    table = spark.read.parquet(str(reconciled.out / "offsets" / "tables" / "source_offsets"))
    rows = table.filter(table.connector == reconciled.names["src"]).filter("key_canonical").collect()
    (a,) = [r for r in rows if json.loads(r["partition_json"]) == {"filename": reconciled.files["src"]}]
    assert json.loads(a["offset_json"]) == {"position": 3}
    assert a["commits"] >= 3 and a["live"] and a["first_commit"] < a["last_commit"]
    (reset,) = table.filter(table.connector == reconciled.names["reset"]).collect()
    assert (reset["live"], reset["tombstones"]) == (False, 1)


def test_topic_usage_and_resets(audited: Scenario) -> None:
    report, n = audited.audit_report(), audited.names
    topics = {t["topic"]: t for t in report["topics"]["items"]}
    data = topics[n["t_data"]]
    assert {n["src"], n["sink"], n["gsink"]} <= set(data["connectors"])
    assert n["gsink"] not in data["active_connectors"] and data["first_seen"] <= data["last_seen"]
    assert topics[n["t_rtopic"]]["resets"] == 1 and topics[n["t_rtopic"]]["active_connectors"] == []
    unused = {i["topic"] for i in report["findings"]["topics_unused_by_connectors"]["items"]}
    assert {n["t_rtopic"], n["t_gtopic"]} <= unused and n["t_data"] not in unused


def test_topics_without_connector_and_sink_topics_never_active(audited: Scenario) -> None:
    report, n = audited.audit_report(), audited.names
    alone = {i["topic"] for i in report["findings"]["topics_without_connector"]["items"]}
    assert n["t_lonely"] in alone
    assert not {n["t_data"], n["t_trim"], n["t_empty"], n["t_pre"]} & alone
    (never,) = items(report, "sinks_never_active_topics", connector=n["sink"])
    assert (never["topic"], never["via"], never["topic_exists"]) == (n["t_empty"], "topics", True)


def assert_earlier_config_named(report: dict[str, Any], n: dict[str, str]) -> None:
    (found,) = items(report, "topics_only_earlier_configs_named", connector=n["hsink"])
    assert (found["topic"], found["via"]) == (n["t_hold"], "topics")
    assert found["named_at"] <= found["until"]  # ISO-8601 times: the version that named it, the next one
    (kept,) = [c for c in report["config_history"]["connectors"]["items"] if c["connector"] == n["hsink"]]
    assert kept["versions"] >= 2 and kept["last"] == "updated"


def test_topics_only_earlier_configs_named(audited: Scenario, spark: SparkSession) -> None:  # noqa: F811
    report, n = audited.audit_report(), audited.names
    assert_earlier_config_named(report, n)
    assert not items(report, "topics_only_earlier_configs_named", topic=n["t_hnew"])  # its config names it now
    table = spark.read.parquet(str(audited.out / "audit" / "tables" / "config_history"))
    topics = [
        r["properties"]["topics"] for r in table.filter(table.connector == n["hsink"]).orderBy("version").collect()
    ]
    assert topics[0] == n["t_hold"] and topics[-1] == n["t_hnew"]  # the previous config, named by the audit


def test_topic_creation_mismatch(audited: Scenario) -> None:
    report, n = audited.audit_report(), audited.names
    (found,) = items(report, "creation_mismatches", connector=n["create"])
    assert (found["topic"], found["group"], found["mismatches"]) == (
        n["t_pre"],
        "compacted",
        ["partitions", "cleanup.policy"],
    )
    assert (found["expected_partitions"], found["actual_partitions"]) == (2, 1)
    assert (found["expected_cleanup_policy"], found["actual_cleanup_policy"]) == ("compact", "delete")


def test_state_timeline(audited: Scenario, spark: SparkSession) -> None:  # noqa: F811
    table = spark.read.parquet(str(audited.out / "audit" / "tables" / "state_timeline"))
    src = [
        r["state"]
        for r in table.filter((table.connector == audited.names["src"]) & table.task.isNull())
        .orderBy("timestamp")
        .collect()
    ]
    assert src[-1] == "STOPPED" and "RUNNING" in src
    states = {r["connector"]: r["state"] for r in audited.audit_report()["connector_states"]["items"]}
    assert states[audited.names["sink"]] == "STOPPED"


def test_offline_audit_of_an_exported_snapshot(audited: Scenario) -> None:
    snapshot = audited.out / "snapshot.parquet"
    cluster = audited.cluster
    assert control_plane(["export", "--worker-properties", cluster.properties, "--out", str(snapshot)]) == 0
    args = ["--worker-properties", cluster.properties, "--snapshot", str(snapshot), "--offline", "--idle-after", "1s"]
    assert topic_audit.main([*args, "--max-findings", "100000", "--out", str(audited.out / "offline")]) == 0
    report, n = audited.audit_report("offline"), audited.names
    assert report["source"]["kind"] == "snapshot"
    assert set(report["skipped_sections"]) == {"topics_without_connector", "creation_mismatches"}
    (never,) = items(report, "sinks_never_active_topics", connector=n["sink"])
    assert (never["topic"], never["topic_exists"]) == (n["t_empty"], None)
    assert n["t_rtopic"] in {i["topic"] for i in report["findings"]["topics_unused_by_connectors"]["items"]}
    assert_earlier_config_named(report, n)  # the snapshot holds the config history too
