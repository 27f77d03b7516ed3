"""Versioned plugins (KIP-891) on both Connect versions, with the test plugins of
deploy/local/test-plugins/versioned (a source connector, a converter and a transformation in 1.0.0, 1.1.0 and
2.0.0, one plugin directory each, on both workers' ``plugin.path``).

On 4.4.0 the pinned version runs (the status says it, and the records its task writes name the connector's,
the transformation's and the converter's versions); on 3.4.1 a pin the newest installed version satisfies
goes through and runs 2.0.0, and a pin no installed version satisfies is refused with 4.4.0's answer.
4.1 to 4.3 answer such a pin only once per range (then a 500 NullPointerException, KAFKA-20751, fixed in
4.4.0), which the sidecar in front of them does not give: checked on a 4.3.1 worker of the tests' own."""

from __future__ import annotations

import functools
import random
from typing import Any

import httpx
import pytest

from tests.support.connect_answers import until_states
from tests.support.deploy_local import local_stack
from tests.support.harness import sidecar_with
from tests.support.kafka_topics import read_to_end
from tests.support.own_worker import OwnWorkers
from tests.support.stack import Cluster, Stack
from tests.support.waiting import eventually

PACKAGE = "org.example.versioned"
CONNECTOR = f"{PACKAGE}.VersionedSourceConnector"
CONVERTER = f"{PACKAGE}.VersionedConverter"
TRANSFORMATION = f"{PACKAGE}.VersionedTransformation"
INSTALLED = ["1.0.0", "1.1.0", "2.0.0"]


def config(topic: str = "", **pins: str) -> dict[str, str]:
    out = {"connector.class": CONNECTOR, "tasks.max": "1", "topic": topic}
    if "value" in pins or "transform" in pins:
        out |= {"value.converter": CONVERTER, "transforms": "mark", "transforms.mark.type": TRANSFORMATION}
    if "connector" in pins:
        out["connector.plugin.version"] = pins["connector"]
    if "value" in pins:
        out["value.converter.plugin.version"] = pins["value"]
    if "transform" in pins:
        out["transforms.mark.plugin.version"] = pins["transform"]
    return out


def fresh_range() -> str:
    """A range no installed version satisfies, never sent before (4.1 to 4.3 cache a failed range per worker)."""
    return f"[3.{random.randrange(10**9)},)"


def not_found(range_: str) -> str:
    available = ", ".join(INSTALLED)
    return f"Plugin {CONNECTOR} not found that matches the version range {range_}, available versions: [{available}]"


def invalid(*errors: str) -> str:
    return (
        f"Connector configuration is invalid and contains the following {len(errors)} error(s):\n"
        + "\n".join(errors)
        + "\nYou can also find the above list of errors at the endpoint "
        + "`/connector-plugins/{connectorType}/config/validate`"
    )


def entry(infos: dict[str, Any], key: str) -> dict[str, Any]:
    return next(c["value"] for c in infos["configs"] if c["value"]["name"] == key)


@pytest.fixture
async def newest(stack: Stack) -> Any:
    async with httpx.AsyncClient(base_url=stack.clusters["new"].connect_url, timeout=60) as client:
        yield client


async def _values(bootstrap: str, topic: str) -> list[str]:
    log = await eventually(lambda: read_to_end(bootstrap, topic), lambda t: len(t.records) >= 2, what=topic)
    return [r.value.decode() for r in log.records if r.value is not None]


@pytest.mark.parametrize(
    ("pin", "runs_new"),
    [
        pytest.param("1.0.0", "1.0.0", id="exact-1.0.0"),
        pytest.param("1.1", "1.1.0", id="bare-1.1-is-exact"),
        pytest.param("[1.0,2.0)", "1.1.0", id="range-below-2"),
        pytest.param("[2.0,)", "2.0.0", id="range-from-2"),
        pytest.param("latest", "2.0.0", id="latest"),
    ],
)
async def test_a_pinned_connector_runs_its_version(
    cluster: Cluster, sidecar: httpx.AsyncClient, stack: Stack, unique: str, pin: str, runs_new: str
) -> None:
    name, topic = f"versioned-{unique}", f"versioned-{unique}"
    if cluster.name == "new":
        body = config(topic, connector=pin, value=pin, transform=pin)
    else:
        body = config(topic, connector=pin)
    created = await sidecar.post("/connectors", json={"name": name, "config": body})
    try:
        if not cluster.newest and runs_new != "2.0.0":  # only an older version satisfies it: refused
            assert created.status_code == 400, created.text
            assert "always loads the newest installed version, 2.0.0" in created.json()["message"]
            assert (await sidecar.get(f"/connectors/{name}")).status_code == 404
            return
        assert created.status_code == 201, created.text
        await until_states(sidecar, name, "RUNNING", ["RUNNING"])
        status = (await sidecar.get(f"/connectors/{name}/status")).json()
        runs = runs_new if cluster.name == "new" else "2.0.0"
        assert status["connector"]["version"] == runs
        assert status["tasks"][0]["version"] == runs
        task = (await sidecar.get(f"/connectors/{name}/tasks/0/status")).json()
        assert task["version"] == runs
        values = await _values(stack.bootstrap, topic)
        if cluster.name == "new":
            assert values[-1] == f"task={runs};transform={runs};converter={runs}"
        else:
            assert values[-1] == f'"task={runs}"'  # the worker's JsonConverter
        report = (await sidecar.get(f"/_sidecar/connectors/{name}/plugin-versions")).json()
        (connector,) = [p for p in report["plugins"] if p["class_key"] == "connector.class"]
        assert connector["installed"] == INSTALLED and connector["runs"] == runs
    finally:
        await sidecar.delete(f"/connectors/{name}")


async def test_an_unsatisfiable_pin_is_refused_as_4_4_0_refuses_it(
    cluster: Cluster, sidecar: httpx.AsyncClient, newest: httpx.AsyncClient, unique: str
) -> None:
    name = f"unsatisfiable-{unique}"
    range_ = fresh_range()
    body = {"name": name, "config": config(connector=range_)}
    direct = await newest.post("/connectors", json=body)
    via = await sidecar.post("/connectors", json=body)
    assert (via.status_code, via.json()) == (direct.status_code, direct.json())
    assert via.json()["message"] == invalid(not_found(range_), not_found(range_))
    again = await newest.post("/connectors", json=body)  # 4.4.0: the same answer every time
    assert (again.status_code, again.json()) == (direct.status_code, direct.json())
    assert (await sidecar.post("/connectors", json=body)).json() == direct.json()

    validated = await sidecar.put(f"/connector-plugins/{CONNECTOR}/config/validate", json=body["config"])
    assert validated.status_code == 200
    infos = validated.json()
    assert entry(infos, "connector.class")["errors"] == [not_found(range_)]
    version = entry(infos, "connector.plugin.version")
    assert (version["value"], version["errors"], version["recommended_values"]) == (
        range_,
        [not_found(range_)],
        INSTALLED,
    )

    # update and PATCH of an existing connector: the same refusal, the connector untouched
    assert (await sidecar.post("/connectors", json={"name": name, "config": config()})).status_code == 201
    try:
        put = await sidecar.put(f"/connectors/{name}/config", json=config(connector=range_))
        patch = await sidecar.patch(f"/connectors/{name}/config", json={"connector.plugin.version": range_})
        for answer in (put, patch):
            refused = invalid(not_found(range_), not_found(range_))
            assert (answer.status_code, answer.json()["message"]) == (400, refused)
        assert "connector.plugin.version" not in (await sidecar.get(f"/connectors/{name}/config")).json()
    finally:
        await sidecar.delete(f"/connectors/{name}")


async def test_4_3_1_answers_a_repeated_unsatisfiable_pin_with_a_500_the_sidecar_does_not(
    own_workers: OwnWorkers, unique: str
) -> None:
    """KAFKA-20751 on a 4.3.1 worker of the tests' own: its first answer to a pin no installed version
    satisfies is the KIP's, then a 500 (``CachedConnectors`` throws the failure again without its versions);
    the sidecar in front of it hides the pin from the worker and answers the first answer every time."""
    cluster = own_workers.of(local_stack.PREVIOUS_VERSION).cluster
    range_ = fresh_range()
    body = {"name": f"unsatisfiable-{unique}", "config": config(connector=range_)}
    refused = (400, {"error_code": 400, "message": invalid(not_found(range_), not_found(range_))})
    async with httpx.AsyncClient(base_url=cluster.connect_url, timeout=60) as worker, sidecar_with(cluster) as via:
        await eventually(
            lambda: via.client.get(f"/connector-plugins/{CONNECTOR}/config?version=1.0.0"),
            lambda r: r.status_code == 200,
            what="the worker's plugins known to the sidecar",
        )
        direct = await worker.post("/connectors", json=body)
        assert (direct.status_code, direct.json()) == refused
        again = await worker.post("/connectors", json=body)
        assert again.status_code == 500 and "availableVersions()" in again.json()["message"]
        for _ in range(2):
            answer = await via.client.post("/connectors", json=body)
            assert (answer.status_code, answer.json()) == refused


async def test_a_pin_that_is_no_range_is_a_400(
    cluster: Cluster, sidecar: httpx.AsyncClient, newest: httpx.AsyncClient, unique: str
) -> None:
    body = {"name": f"unparseable-{unique}", "config": config(connector="[1.0")}
    direct = await newest.post("/connectors", json=body)
    via = await sidecar.post("/connectors", json=body)
    assert (
        (via.status_code, via.json())
        == (direct.status_code, direct.json())
        == (
            400,
            {"error_code": 400, "message": "Unbounded range: [1.0"},
        )
    )
    # validate: 4.1+ wraps its own 400 into a 500 (4.4.0 too); the sidecar answers the 400 on every version
    validated = await sidecar.put(f"/connector-plugins/{CONNECTOR}/config/validate", json=body["config"])
    assert (validated.status_code, validated.json()) == (400, {"error_code": 400, "message": "Unbounded range: [1.0"})


@pytest.mark.parametrize(
    ("query", "status", "message"),
    [
        pytest.param("[1.0", 400, "Invalid version specification: [1.0", id="unparseable"),
        pytest.param("[5.0,)", 400, not_found("[5.0,)"), id="unsatisfiable"),
        pytest.param("2.0.0", 200, None, id="newest"),
        pytest.param("latest", 200, None, id="latest"),
    ],
)
async def test_the_config_of_a_version_answers_as_4_4_0_does(
    cluster: Cluster, sidecar: httpx.AsyncClient, newest: httpx.AsyncClient, query: str, status: int, message: str
) -> None:
    path = f"/connector-plugins/{CONNECTOR}/config"  # 3.4.1 knows no alias of a plugin installed twice
    via = await sidecar.get(path, params={"version": query})
    direct = await newest.get(path, params={"version": query})
    assert via.status_code == direct.status_code == status
    if message is not None:
        assert via.json() == direct.json() == {"error_code": 400, "message": message}


async def test_plugin_lists_show_every_installed_connector_version(
    cluster: Cluster, sidecar: httpx.AsyncClient, worker: httpx.AsyncClient
) -> None:
    listed = (await sidecar.get("/connector-plugins")).json()
    assert [p["version"] for p in listed if p["class"] == CONNECTOR] == INSTALLED
    assert listed == (await worker.get("/connector-plugins")).json()


async def test_the_report_says_what_a_configuration_resolves_to(cluster: Cluster, sidecar: httpx.AsyncClient) -> None:
    body = config(connector="[1.0,2.0)", value="1.0.0", transform="latest")
    report = (await sidecar.put("/_sidecar/plugin-versions", json=body)).json()
    plugins = {p["class_key"]: p for p in report["plugins"]}
    connector = plugins["connector.class"]
    assert connector["class"] == CONNECTOR and connector["installed"] == INSTALLED
    assert connector["selected"] == "1.1.0" and connector["requirement"] == "[1.0,2.0)"
    if cluster.name == "new":
        assert report["mode"] == "native"
        assert (connector["outcome"], connector["runs"]) == ("resolved", "1.1.0")
        assert plugins["value.converter"]["runs"] == "1.0.0"
    else:
        assert report["mode"] == "emulated"
        assert (connector["outcome"], connector["runs"]) == ("older_only", "2.0.0")
        # before 3.2 the worker lists no converters (KIP-769): the sidecar finds it on the plugin.path
        assert plugins["value.converter"]["outcome"] == "versions_unknown"
    unknown = await sidecar.get("/_sidecar/connectors/no-such-connector-here/plugin-versions")
    assert unknown.status_code == 404


async def test_capabilities_say_what_is_emulated(cluster: Cluster, sidecar: httpx.AsyncClient) -> None:
    feature = (await sidecar.get("/_sidecar/capabilities")).json()["features"]["plugin_versions"]
    assert feature["mode"] == ("native" if cluster.name == "new" else "emulated")
    assert "cannot run side by side" in feature["emulation"]


async def test_validate_puts_connects_errors_on_the_class_and_the_pin(
    cluster: Cluster, sidecar: httpx.AsyncClient, newest: httpx.AsyncClient
) -> None:
    body = {"name": "anything", **config(connector=fresh_range())}
    path = f"/connector-plugins/{CONNECTOR}/config/validate"
    direct = (await newest.put(path, json=body)).json()
    via = await sidecar.put(path, json=body)
    assert via.status_code == 200
    for key in ("connector.class", "connector.plugin.version"):
        shown, expected = entry(via.json(), key), entry(direct, key)
        assert (shown["value"], shown["errors"]) == (expected["value"], expected["errors"])
    assert entry(via.json(), "connector.plugin.version")["recommended_values"] == INSTALLED
    assert via.json()["error_count"] == direct["error_count"] == 2


async def test_statuses_forwarded_to_the_worker_carry_the_version_too(
    cluster: Cluster, in_process: Any, unique: str
) -> None:
    upstream = await in_process(read_from="upstream")
    name = f"forwarded-{unique}"
    assert (await upstream.post("/connectors", json={"name": name, "config": config()})).status_code == 201
    try:
        await until_states(upstream, name, "RUNNING", ["RUNNING"])
        status = (await upstream.get(f"/connectors/{name}/status")).json()
        assert status["connector"]["version"] == status["tasks"][0]["version"] == "2.0.0"
        assert (await upstream.get(f"/connectors/{name}/tasks/0/status")).json()["version"] == "2.0.0"
        listing = (await upstream.get("/connectors", params={"expand": "status"})).json()
        assert listing[name]["status"]["connector"]["version"] == "2.0.0"
    finally:
        await upstream.delete(f"/connectors/{name}")


async def test_a_converter_pin_an_old_worker_cannot_check_is_the_sidecars_to_refuse(
    cluster: Cluster, sidecar: httpx.AsyncClient, in_process: Any, unique: str
) -> None:
    name = f"converter-pin-{unique}"
    body = {"name": name, "config": config(value="2.0.0")}
    created = await sidecar.post("/connectors", json=body)
    try:
        if cluster.name == "new":  # 4.4.0 loads the pinned converter itself
            assert created.status_code == 201, created.text
            return
        assert created.status_code == 400
        assert "does not report the versions of its installed copies" in created.json()["message"]
        warned = await (await in_process(config_checks="warn")).post("/connectors", json=body)
        assert warned.status_code == 201, warned.text
        assert "value.converter.plugin.version" in warned.headers["warning"]
    finally:
        await sidecar.delete(f"/connectors/{name}")


async def test_two_sidecars_answer_a_pin_the_same_and_show_each_workers_plugins(
    cluster: Cluster, sidecar: httpx.AsyncClient, in_process: Any
) -> None:
    """Two sidecars in front of the cluster: each reports its worker's plugins through the sidecars' topic
    (``/_sidecar/cluster`` shows them per worker), and both answer a pin check alike."""
    other = await in_process(presence_interval_s=0.5)
    worker_id = cluster.connect_url.split("://", 1)[1].rstrip("/")
    them = (await other.get("/_sidecar/cluster")).json()["sidecar"]

    def installed(answer: httpx.Response) -> list[str] | None:
        (worker,) = [w for w in answer.json()["workers"] if w["url"].endswith(worker_id)]
        versions: list[str] | None = (worker["plugins"] or {}).get("source", {}).get(CONNECTOR)
        return versions

    def reported(answer: httpx.Response) -> bool:  # the other sidecar vouches for its worker's plugins
        return any(s["id"] == them and worker_id in s["plugins"] for s in answer.json()["sidecars"])

    for client in (sidecar, other):
        shown = await eventually(
            functools.partial(client.get, "/_sidecar/cluster"),
            lambda a: installed(a) == INSTALLED and reported(a),
            timeout_s=15,
            what="the worker's plugins shown, reported by the other sidecar",
        )
        assert installed(shown) == INSTALLED
    path = f"/connector-plugins/{CONNECTOR}/config/validate"
    for pin in ("1.0.0", "[2.0,)", fresh_range()):
        body = {"name": "anything", **config(connector=pin)}
        one, two = await sidecar.put(path, json=body), await other.put(path, json=body)
        assert (one.status_code, one.json()) == (two.status_code, two.json()), pin
    pins = [(await s.get("/_sidecar/plugin-pins")).json() for s in (sidecar, other)]
    expected = "enforced by the worker" if cluster.newest else "checked, not enforced by the worker"
    for answer in pins:
        assert [(w["worker"], w["enforcement"]) for w in answer["workers"]] == [(worker_id, expected)]
        assert answer["unknown_workers"] == []
