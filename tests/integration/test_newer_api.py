"""The REST API of newer Connect releases through the sidecar on both workers, compared with what Connect
4.4.0 answers directly: ``initial_state`` on create (KIP-980), PATCH of a configuration
(KIP-477), cluster-wide logger levels (KIP-976), ``GET /health`` (KIP-1017), 4.2's ``order_in_group``,
and the version ``GET /`` advertises. On 4.4.0 the sidecar defers to the worker; on 3.4.1 it emulates."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.connect_answers import same_answer, until_states
from tests.support.harness import InProcess
from tests.support.kafka_topics import read_to_end
from tests.support.stack import Cluster, Stack
from tests.support.waiting import eventually

SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"


def source_config(tag: str) -> dict[str, str]:
    return {"connector.class": SOURCE, "file": f"/tmp/newapi-absent-{tag}", "topic": f"newapi-{tag}"}


@pytest.fixture
async def newest(stack: Stack) -> AsyncIterator[httpx.AsyncClient]:
    """Connect 4.4.0 directly: the reference answers."""
    async with httpx.AsyncClient(base_url=stack.clusters["new"].connect_url, timeout=60) as client:
        yield client


@pytest.fixture
async def cleanup(sidecar: httpx.AsyncClient, newest: httpx.AsyncClient) -> AsyncIterator[list[str]]:
    names: list[str] = []
    yield names
    for name in names:
        await sidecar.delete(f"/connectors/{name}")
        await newest.delete(f"/connectors/{name}")


def shape(info: dict[str, Any]) -> dict[str, Any]:
    """A ConnectorInfo without what differs between two connectors of the same config (their names)."""
    config = {k: v for k, v in info["config"].items() if k != "name"}
    return {"config": config, "tasks": len(info["tasks"]), "type": info["type"]}


async def states_seen(stack: Stack, cluster: Cluster, name: str) -> tuple[list[str], list[str]]:
    """Every state the workers wrote to the status topic for connector ``name`` and for its tasks, in order."""
    topic = cluster.worker_property("status.storage.topic")
    log = await read_to_end(stack.bootstrap, topic)
    connector = [json.loads(v)["state"] for _, v in log.with_key(f"status-connector-{name}".encode()) if v]
    tasks = [
        json.loads(r.value)["state"]
        for r in log.records
        if r.key and r.value and r.key.startswith(f"status-task-{name}-".encode())
    ]
    return connector, tasks


# -- initial_state (KIP-980) ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("initial", "shown"),
    [
        pytest.param("PAUSED", "PAUSED", id="paused"),
        pytest.param("stopped", "STOPPED", id="stopped-lowercase"),
        pytest.param("RUNNING", "RUNNING", id="running"),
    ],
)
async def test_initial_state_on_create(
    stack: Stack,
    cluster: Cluster,
    sidecar: httpx.AsyncClient,
    newest: httpx.AsyncClient,
    cleanup: list[str],
    unique: str,
    initial: str,
    shown: str,
) -> None:
    via, direct = f"newapi-init-{cluster.name}-{unique}", f"newapi-init-ref-{unique}"
    cleanup += [via, direct]
    config = source_config(unique)
    answers = [
        await client.post("/connectors", json={"name": name, "config": config, "initial_state": initial})
        for client, name in ((sidecar, via), (newest, direct))
    ]
    assert [a.status_code for a in answers] == [201, 201], [a.text for a in answers]
    assert shape(answers[0].json()) == shape(answers[1].json())
    assert answers[0].json()["name"] == via
    await until_states(sidecar, via, shown, [] if shown != "RUNNING" else ["RUNNING"])
    if shown != "RUNNING":  # it never ran: no worker ever reported it RUNNING, nor any task of it
        connector, tasks = await states_seen(stack, cluster, via)
        assert "RUNNING" not in connector and tasks == []
    # resumed, it runs
    assert (await sidecar.put(f"/connectors/{via}/resume")).status_code == 202
    await until_states(sidecar, via, "RUNNING", ["RUNNING"])


async def test_a_connector_created_stopped_takes_offset_changes_as_on_4_4_0(
    cluster: Cluster, sidecar: httpx.AsyncClient, newest: httpx.AsyncClient, cleanup: list[str], unique: str
) -> None:
    """Created STOPPED, it is STOPPED for KIP-875 too (emulated on 3.4.1): its offsets can be reset at once."""
    via, direct = f"newapi-stopped-{cluster.name}-{unique}", f"newapi-stopped-ref-{unique}"
    cleanup += [via, direct]
    for client, name in ((sidecar, via), (newest, direct)):
        body = {"name": name, "config": source_config(unique), "initial_state": "STOPPED"}
        assert (await client.post("/connectors", json=body)).status_code == 201
    reset = [await c.delete(f"/connectors/{n}/offsets") for c, n in ((sidecar, via), (newest, direct))]
    assert reset[0].status_code == reset[1].status_code == 200
    if cluster.name == "new":
        assert reset[0].json() == reset[1].json()
    else:  # the emulation cannot call the connector's own alterOffsets hook: Connect's message for that
        assert reset[0].json()["message"].startswith("The Connect framework-managed offsets for this connector")
    read = [await c.get(f"/connectors/{n}/offsets") for c, n in ((sidecar, via), (newest, direct))]
    assert (read[0].status_code, read[0].json()) == (read[1].status_code, read[1].json()) == (200, {"offsets": []})


async def test_initial_state_of_an_existing_connector_is_the_workers_409(
    cluster: Cluster, sidecar: httpx.AsyncClient, cleanup: list[str], unique: str
) -> None:
    name = f"newapi-exists-{cluster.name}-{unique}"
    cleanup.append(name)
    config = source_config(unique)
    assert (await sidecar.post("/connectors", json={"name": name, "config": config})).status_code == 201
    await until_states(sidecar, name, "RUNNING", ["RUNNING"])
    again = await sidecar.post("/connectors", json={"name": name, "config": config, "initial_state": "STOPPED"})
    assert (again.status_code, again.json()["message"]) == (409, f"Connector {name} already exists")
    await until_states(sidecar, name, "RUNNING", ["RUNNING"])  # not paused nor stopped by the attempt


async def test_a_number_as_the_name_with_initial_state_is_created_as_on_4_4_0(
    cluster: Cluster, sidecar: httpx.AsyncClient, newest: httpx.AsyncClient, cleanup: list[str], unique: str
) -> None:
    """CreateConnectorRequest's ``name`` is a String: Jackson reads a number into its text, and 4.4.0 creates
    the connector PAUSED under that name; the emulation reads it so too."""
    numbers = (int(unique, 16) * 2 + 1, int(unique, 16) * 2)  # the sidecar's, the worker's: each test's own
    via, direct = (str(n) for n in numbers)
    cleanup += [via, direct]
    config = source_config(unique)
    answers = [
        await client.post("/connectors", json={"name": number, "config": config, "initial_state": "PAUSED"})
        for client, number in ((sidecar, numbers[0]), (newest, numbers[1]))
    ]
    assert [a.status_code for a in answers] == [201, 201], [a.text for a in answers]
    assert shape(answers[0].json()) == shape(answers[1].json())
    assert (answers[0].json()["name"], answers[1].json()["name"]) == (via, direct)
    await until_states(sidecar, via, "PAUSED", [])


# -- PATCH /connectors/{c}/config (KIP-477) -----------------------------------------------------------
async def test_patch_config_as_4_4_0(
    cluster: Cluster, sidecar: httpx.AsyncClient, newest: httpx.AsyncClient, cleanup: list[str], unique: str
) -> None:
    via, direct = f"newapi-patch-{cluster.name}-{unique}", f"newapi-patch-ref-{unique}"
    cleanup += [via, direct]
    config = {**source_config(unique), "batch.size": "7"}
    for client, name in ((sidecar, via), (newest, direct)):
        assert (await client.post("/connectors", json={"name": name, "config": config})).status_code == 201
    patch = {"topic": f"newapi-patched-{unique}", "batch.size": None}
    answers = [await c.patch(f"/connectors/{n}/config", json=patch) for c, n in ((sidecar, via), (newest, direct))]
    assert [a.status_code for a in answers] == [200, 200], [a.text for a in answers]
    assert shape(answers[0].json())["config"] == shape(answers[1].json())["config"]
    assert answers[0].json()["config"] == {**source_config(unique), "topic": f"newapi-patched-{unique}", "name": via}
    got = await sidecar.get(f"/connectors/{via}/config")
    assert got.json() == answers[0].json()["config"]
    missing = f"newapi-missing-{unique}"
    absent = [await c.patch(f"/connectors/{missing}/config", json=patch) for c in (sidecar, newest)]
    assert (absent[0].status_code, absent[0].json()) == (absent[1].status_code, absent[1].json())


async def test_a_patch_of_numbers_is_read_as_4_3_1_reads_it(
    cluster: Cluster, sidecar: httpx.AsyncClient, newest: httpx.AsyncClient, cleanup: list[str], unique: str
) -> None:
    """Numbers in a PATCH are the text they were written as (Jackson into ``Map<String, String>``), not a 500."""
    via, direct = f"newapi-numbers-{cluster.name}-{unique}", f"newapi-numbers-ref-{unique}"
    cleanup += [via, direct]
    for client, name in ((sidecar, via), (newest, direct)):
        assert (
            await client.post("/connectors", json={"name": name, "config": source_config(unique)})
        ).status_code == 201
    body = b'{"x": 1e-7, "y": 1.50, "z": -0, "w": 1E+3, "v": 10000000000000000000000, "t": true}'
    headers = {"content-type": "application/json"}
    answers = [
        await c.patch(f"/connectors/{n}/config", content=body, headers=headers)
        for c, n in ((sidecar, via), (newest, direct))
    ]
    assert [a.status_code for a in answers] == [200, 200], [a.text for a in answers]
    assert shape(answers[0].json())["config"] == shape(answers[1].json())["config"]
    numbers = {"x": "1e-7", "y": "1.50", "z": "-0", "w": "1E+3", "v": "10000000000000000000000", "t": "true"}
    assert answers[0].json()["config"] == {**source_config(unique), **numbers, "name": via}
    stored = [(await c.get(f"/connectors/{n}/config")).json() for c, n in ((sidecar, via), (newest, direct))]
    assert {**stored[0], "name": direct} == stored[1]


@pytest.mark.parametrize("body", [pytest.param(b"", id="empty"), pytest.param(b"null", id="null")])
async def test_a_patch_with_no_entity_is_answered_as_4_4_0(
    cluster: Cluster,
    sidecar: httpx.AsyncClient,
    newest: httpx.AsyncClient,
    cleanup: list[str],
    unique: str,
    body: bytes,
) -> None:
    """No map to patch with: 4.4.0 finds the connector, then fails on the null map (500); nothing changes."""
    via, direct = f"newapi-nopatch-{cluster.name}-{unique}", f"newapi-nopatch-ref-{unique}"
    cleanup += [via, direct]
    for client, name in ((sidecar, via), (newest, direct)):
        assert (
            await client.post("/connectors", json={"name": name, "config": source_config(unique)})
        ).status_code == 201
    headers = {"content-type": "application/json"}
    answers = [
        await c.patch(f"/connectors/{n}/config", content=body, headers=headers)
        for c, n in ((sidecar, via), (newest, direct))
    ]
    assert (answers[0].status_code, answers[0].json()) == (answers[1].status_code, answers[1].json())
    assert answers[0].status_code == 500
    assert (await sidecar.get(f"/connectors/{via}/config")).json() == {**source_config(unique), "name": via}


UNREADABLE_INITIAL_STATES = {
    "unknown": '"bogus"',
    "spaces": '" paused"',
    "number": "5",
    "boolean": "true",
    "object": "{}",
    "array": "[]",
}
UNREADABLE_PATCHES = {
    "array": "[1]",
    "array-after-a-space": " [1]",
    "number": "5",
    "boolean": "true",
    "string": '"x"',
    "object-value": '{"a":{"b":1}}',
    "array-value-on-line-2": '{"a":"b",\n"c":[1]}',
}


@pytest.mark.parametrize(
    ("endpoint", "value"),
    [
        *(pytest.param("initial_state", v, id=f"initial-state-{k}") for k, v in UNREADABLE_INITIAL_STATES.items()),
        *(pytest.param("patch", v, id=f"patch-{k}") for k, v in UNREADABLE_PATCHES.items()),
    ],
)
async def test_an_unreadable_body_is_answered_as_4_4_0(
    cluster: Cluster, sidecar: httpx.AsyncClient, newest: httpx.AsyncClient, unique: str, endpoint: str, value: str
) -> None:
    """A create whose ``initial_state`` (KIP-980), or a PATCH of a config (KIP-477) whose body, Jackson cannot
    read: the same status and message as 4.4.0's, and nothing created."""
    if endpoint == "initial_state":
        name = f"newapi-bad-{unique}"  # the same length on both: Jackson's column is the same
        method, path = "POST", "/connectors"
        body = f'{{"name":"{name}","config":{json.dumps(source_config(unique))},\n "initial_state":{value}}}'
    else:
        name = f"newapi-missing-{unique}"
        method, path, body = "PATCH", f"/connectors/{name}/config", value
    headers = {"content-type": "application/json"}
    via, direct = [await c.request(method, path, content=body, headers=headers) for c in (sidecar, newest)]
    assert (via.status_code, via.json()) == (direct.status_code, direct.json())
    assert (await sidecar.get(f"/connectors/{name}")).status_code == 404


# -- logger levels (KIP-976) --------------------------------------------------------------------------
async def test_cluster_wide_logger_level_as_4_4_0(
    cluster: Cluster, sidecar: httpx.AsyncClient, worker: httpx.AsyncClient, newest: httpx.AsyncClient, unique: str
) -> None:
    namespace = f"newapi.probe.{cluster.name}.{unique}"
    put = await sidecar.put(f"/admin/loggers/{namespace}?scope=cluster", json={"level": "debug"})
    assert (put.status_code, put.content) == (204, b"")
    # KIP-976: a cluster-scoped change is applied asynchronously (4.4.0 answers 204 once it is written to the
    # config topic; each worker applies it when it reads it): the level shows once the worker has read it.
    # A 4.4.0 worker passed through unchanged has been seen to show the new level with a null last_modified
    # for an instant while it applies it: the level and its time are waited for together
    answer = await eventually(
        lambda: sidecar.get(f"/admin/loggers/{namespace}"),
        lambda r: r.status_code == 200 and r.json()["level"] == "DEBUG" and r.json()["last_modified"] is not None,
        what=f"{namespace} at DEBUG",
    )
    shown = answer.json()
    assert shown["level"] == "DEBUG" and isinstance(shown["last_modified"], int)
    assert (await worker.get(f"/admin/loggers/{namespace}")).json()["level"] == "DEBUG"
    listed = (await sidecar.get("/admin/loggers")).json()
    assert all(set(entry) == {"level", "last_modified"} for entry in listed.values())
    assert listed[namespace]["level"] == "DEBUG"
    for bad in ({"level": "BOGUS"}, {}):
        via = await sidecar.put(f"/admin/loggers/{namespace}.bad?scope=cluster", json=bad)
        direct = await newest.put(f"/admin/loggers/{namespace}.bad?scope=cluster", json=bad)
        assert (via.status_code, via.json()) == (direct.status_code, direct.json())


async def test_cluster_wide_logger_level_reaches_every_worker(
    stack: Stack, in_process: InProcess, cluster: Cluster, unique: str
) -> None:
    """Two workers behind one sidecar (the stack's 3.4.1 and 4.4.0 workers; the oldest decides, so the
    sidecar emulates): the level is set on both and read back from both before the 204."""
    if cluster.name != "old":
        pytest.skip("one mixed pair of workers is enough")
    urls = [stack.clusters["old"].connect_url, stack.clusters["new"].connect_url]
    client = await in_process(worker_properties=None, connect_urls=",".join(urls), view_enabled=False)
    namespace = f"newapi.every.{unique}"
    put = await client.put(f"/admin/loggers/{namespace}?scope=CLUSTER", json={"level": "TRACE"})
    assert put.status_code == 204, put.text
    for url in urls:
        async with httpx.AsyncClient(base_url=url) as direct:
            assert (await direct.get(f"/admin/loggers/{namespace}")).json()["level"] == "TRACE"


# -- GET /health (KIP-1017) ---------------------------------------------------------------------------
async def test_health_as_4_4_0(sidecar: httpx.AsyncClient, newest: httpx.AsyncClient) -> None:
    await same_answer(sidecar, newest, "/health")


async def test_health_of_a_worker_that_does_not_answer(cluster: Cluster, in_process: InProcess) -> None:
    from tests.support.ports import closed_url

    client = await in_process(connect_urls=closed_url(), wait_ready=False, view_enabled=False)
    answer = await client.get("/health")
    assert answer.status_code == 503


# -- 4.2's order_in_group -----------------------------------------------------------------------------
async def test_definitions_in_the_newest_shape(sidecar: httpx.AsyncClient, newest: httpx.AsyncClient) -> None:
    path = f"/connector-plugins/{SOURCE}/config"
    via, direct = (await sidecar.get(path)).json(), (await newest.get(path)).json()
    fields = {d["name"]: list(d) for d in direct}  # 4.4.0's FileStreamSource has a few more keys than 3.4.1's
    assert [list(d) for d in via] == [fields[d["name"]] for d in via]
    body = {"connector.class": SOURCE, "topic": "x"}
    validate = f"/connector-plugins/{SOURCE}/config/validate"
    via, direct = (await sidecar.put(validate, json=body)).json(), (await newest.put(validate, json=body)).json()
    assert {tuple(c["definition"]) for c in via["configs"]} <= {tuple(c["definition"]) for c in direct["configs"]}


async def test_definitions_in_the_workers_shape_by_setting(
    cluster: Cluster, in_process: InProcess, worker: httpx.AsyncClient
) -> None:
    client = await in_process(feature_order_in_group="native")
    path = f"/connector-plugins/{SOURCE}/config"
    if cluster.at_least("3.2"):  # before, the worker has no such endpoint: the sidecar composes it (KIP-769)
        assert (await client.get(path)).json() == (await worker.get(path)).json()
    else:
        assert (await client.get(path)).status_code == 200


# -- 4.4: validate shows values given as config provider references as given ---------------------------
async def test_provider_references_shown_as_given(
    cluster: Cluster,
    sidecar: httpx.AsyncClient,
    worker: httpx.AsyncClient,
    newest: httpx.AsyncClient,
    tmp_path: Path,
    unique: str,
) -> None:
    """The stack's workers resolve ``${file:...}`` (a FileConfigProvider each). Before 4.4 a worker answers
    with the resolved values and the errors its rules found in them (a secret quoted); 4.4.0 shows the
    references as given, without recommended values, one generic error where the resolved value failed.
    Through the sidecar, on every release, 4.4.0's answer; a reference no provider resolves stays as it is."""
    secrets = tmp_path / "secrets.properties"
    secrets.write_text("topic=resolved-topic\ntasks=abc\nconverter=s3cret\n")
    refs = {
        "topic": f"${{file:{secrets}:topic}}",
        "tasks.max": f"${{file:{secrets}:tasks}}",
        "key.converter": f"${{file:{secrets}:converter}}",
        "file": "${unknown:path:key}",
    }
    body = {"connector.class": SOURCE, "name": "refs", **refs}
    validate = f"/connector-plugins/{SOURCE}/config/validate"
    via, direct = (await sidecar.put(validate, json=body)).json(), (await newest.put(validate, json=body)).json()
    own = (await worker.put(validate, json=body)).json()

    def values(infos: dict[str, Any]) -> dict[str, Any]:
        return {c["value"]["name"]: c["value"] for c in infos["configs"] if c["value"]["name"] in refs}

    assert values(via) == values(direct)
    assert (via["error_count"], direct["error_count"]) == (2, 2)
    assert values(direct)["tasks.max"]["errors"] == [
        "Invalid value for configuration 'tasks.max': the value resolved from the config provider reference "
        "failed validation"
    ]
    assert {k: v["value"] for k, v in values(direct).items()} == refs
    if not cluster.newest:  # the worker's own answer: resolved, its errors quoting the secret
        assert values(own)["topic"]["value"] == "resolved-topic"
        assert any("s3cret" in e for e in values(own)["key.converter"]["errors"])
    # create and update validate the same way: 4.4.0's 400 lists the generic errors, never the secret
    create = {"name": f"refs-{unique}", "config": {k: v for k, v in body.items() if k != "name"}}
    for method, path, sent in (
        ("POST", "/connectors", create),
        ("PUT", f"/connectors/refs-{unique}/config", create["config"]),
    ):
        via_write = await sidecar.request(method, path, json=sent)
        direct_write = await newest.request(method, path, json=sent)
        assert (via_write.status_code, via_write.json()) == (direct_write.status_code, direct_write.json())
        assert via_write.status_code == 400 and "s3cret" not in via_write.text
    # a reference no provider can resolve: the worker's own 500, through the sidecar as from the worker
    missing = {**body, "topic": f"${{file:{tmp_path / 'absent.properties'}:topic}}"}
    via_missing, direct_missing = await sidecar.put(validate, json=missing), await newest.put(validate, json=missing)
    assert (via_missing.status_code, via_missing.json()) == (direct_missing.status_code, direct_missing.json())


# -- GET / --------------------------------------------------------------------------------------------
async def test_advertised_version(
    cluster: Cluster, sidecar: httpx.AsyncClient, worker: httpx.AsyncClient, in_process: InProcess
) -> None:
    via, direct = (await sidecar.get("/")).json(), (await worker.get("/")).json()
    capabilities = (await sidecar.get("/_sidecar/capabilities")).json()
    # 3.4.1 and 2.8.2: every feature through 4.4 is native or emulated, so the API of 4.4, the answers 4.4.0's
    # (domain/api_version.py); 4.4.0 itself: its own version
    expected = {"new": "4.4.0", "old": "4.4.0", "oldest": "4.4.0"}[cluster.name]
    assert via == {**direct, "version": expected}
    assert capabilities["worker_version"] == direct["version"]
    assert capabilities["advertised_version"] == expected
    plain = await in_process(advertised_version="worker")
    assert (await plain.get("/")).json() == direct
