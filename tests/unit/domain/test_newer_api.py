"""The newer releases' API on older workers, over the fakes: initial_state (KIP-980) read as Jackson reads
it and written before the config, PATCH (KIP-477) against concurrent changes, cluster logger levels
(KIP-976), health (KIP-1017), 4.2's order_in_group, and the advertised version."""

from __future__ import annotations

import json

import orjson
import pytest

from control_plane.codecs import ConnectorConfig, TargetState, decode_config
from control_plane.domain.api_version import effective_version
from control_plane.domain.capabilities import Feature, Version, decide
from control_plane.domain.configs.connector_configs import NO_PATCH, ConnectorConfigs
from control_plane.domain.configs.initial_state import InitialState, Unreadable, read_initial_state
from control_plane.domain.connect_api import validate_path
from control_plane.domain.definitions import newest_definition
from control_plane.domain.errors import ConflictError, NotFoundError, OperationFailed
from control_plane.domain.jackson import string_map_error
from control_plane.domain.newer.health import HEALTHY, STARTING, UNHEALTHY, HealthCheck
from control_plane.domain.newer.loggers import Loggers
from control_plane.domain.outcomes import Refusal, Relay, Reply
from control_plane.modes import FeatureMode
from control_plane.upstream import UpstreamRequest, UpstreamResponse, UpstreamTimeout
from tests.support.fakes import CONFIG, FakeWorkers, Kafka

CLASS = "org.example.Source"


# -- initial_state as Jackson reads it (Connect 4.3.1's 500s, checked against the worker in the integration tests)
def initial(body: str) -> InitialState | Unreadable | None:
    return read_initial_state(json.loads(body), body.encode())


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param('{"initial_state":"paused"}', InitialState("PAUSED"), id="any-case"),
        pytest.param('{"initial_state":"STOPPED"}', InitialState("STOPPED"), id="stopped"),
        pytest.param('{"initial_state":null}', None, id="null"),
        pytest.param("{}", None, id="absent"),
    ],
)
def test_readable_initial_states(body: str, expected: object) -> None:
    assert initial(body) == expected


@pytest.mark.parametrize(
    ("body", "start"),
    [
        pytest.param('{"name":"zz","initial_state":"bogus"}', "problem: No enum constant", id="unknown"),
        pytest.param('{"name":"zz","initial_state":5.5}', "problem: No enum constant", id="number"),
        pytest.param('{"name":"zz","initial_state":{}}', "from Object value", id="object"),
        pytest.param('{"name":"zz","initial_state":[]}', "expects String Value, got Array", id="array"),
    ],
)
def test_unreadable_initial_states_get_jacksons_message(body: str, start: str) -> None:
    read = initial(body)
    assert isinstance(read, Unreadable) and start in read.message
    assert "line: 1, column: 30]" in read.message  # the value's first character, 1-based


def test_the_location_counts_lines() -> None:
    read = initial('{"name":"zz",\n  "initial_state": true}')
    assert isinstance(read, Unreadable) and "InitialState.TRUE\n at" in read.message
    assert "line: 2, column: 20]" in read.message


async def test_a_paused_create_writes_the_target_state_before_the_worker_creates() -> None:
    kafka, workers = Kafka(), FakeWorkers("3.4.1")
    workers.answers[("PUT", validate_path(CLASS))] = (200, b'{"error_count":0,"configs":[]}')
    seen: list[list[object]] = []

    def worker_creates(request: UpstreamRequest) -> None:
        if request.method == "POST":
            seen.append([decode_config(k, v) for _, k, v in kafka.log])
            kafka.log.append((CONFIG, b"connector-c", orjson.dumps({"properties": {"connector.class": CLASS}})))

    workers.before_answer = worker_creates
    workers.answers[("POST", "/connectors")] = (201, b'{"name":"c"}')
    configs = ConnectorConfigs(workers, ())
    creation = kafka.creation(workers, configs)
    body = {"name": "c", "config": {"connector.class": CLASS}, "initial_state": "stopped"}
    outcome = await creation.create(body, {"connector.class": CLASS}, InitialState("STOPPED"))
    assert isinstance(outcome, Relay) and outcome.response.status == 201
    assert seen == [[TargetState("c", "PAUSED", "STOPPED")]]  # before the config, as 3.7+ writes them
    assert orjson.loads(workers.forwarded[-1].body) == {"name": "c", "config": {"connector.class": CLASS}}


async def test_a_create_the_worker_refuses_leaves_no_target_state() -> None:
    kafka, workers = Kafka(), FakeWorkers("3.4.1")
    workers.answers[("PUT", validate_path(CLASS))] = (200, b'{"error_count":0,"configs":[]}')
    workers.answers[("POST", "/connectors")] = (500, b'{"error_code":500,"message":"boom"}')
    creation = kafka.creation(workers, ConnectorConfigs(workers, ()))
    outcome = await creation.create({"name": "c", "config": {}}, {"connector.class": CLASS}, InitialState("PAUSED"))
    assert isinstance(outcome, Relay) and outcome.response.status == 500
    assert [v for _, k, v in kafka.log if k == b"target-state-c"][-1] is None  # removed again


async def test_an_invalid_config_or_an_existing_connector_writes_nothing() -> None:
    kafka, workers = Kafka(), FakeWorkers("3.4.1")
    workers.answers[("PUT", validate_path(CLASS))] = (200, b'{"error_count":1,"configs":[]}')
    workers.answers[("POST", "/connectors")] = (400, b'{"error_code":400}')
    creation = kafka.creation(workers, ConnectorConfigs(workers, ()))
    config = {"connector.class": CLASS}
    assert isinstance(await creation.create({"name": "c", "config": config}, config, InitialState("PAUSED")), Relay)
    kafka.view.state.apply_config(ConnectorConfig("d", config))
    workers.answers[("PUT", validate_path(CLASS))] = (200, b'{"error_count":0,"configs":[]}')
    assert isinstance(await creation.create({"name": "d", "config": config}, config, InitialState("PAUSED")), Relay)
    assert kafka.log == []


# -- PATCH (KIP-477) --------------------------------------------------------------------------------------
def patching(current: dict[str, str]) -> tuple[FakeWorkers, Kafka]:
    kafka, workers = Kafka(), FakeWorkers("3.4.1")
    workers.answers[("GET", "/connectors/c/config")] = (200, orjson.dumps(current))
    workers.answers[("PUT", "/connectors/c/config")] = (200, b'{"name":"c"}')
    kafka.view.state.apply_config(ConnectorConfig("c", current))
    return workers, kafka


async def test_an_emulated_patch_puts_the_patched_config() -> None:
    workers, kafka = patching({"connector.class": CLASS, "name": "c", "a": "1", "b": "2"})
    outcome = await ConnectorConfigs(workers, (), view=kafka.view, writes=kafka.connector_writes).patch(
        "c", {"a": None, "b": "3"}, emulate=True
    )
    assert isinstance(outcome, Relay) and outcome.response.status == 200
    assert orjson.loads(workers.forwarded[-1].body) == {"connector.class": CLASS, "name": "c", "b": "3"}
    assert [r.method for r in workers.forwarded] == ["PUT"]  # applied to the config topic read to its end


async def test_an_emulated_patch_of_a_missing_connector_is_4_3_1s_404() -> None:
    workers = FakeWorkers("3.4.1")
    outcome = await ConnectorConfigs(workers, ()).patch("c", {"a": "1"}, emulate=True)
    assert isinstance(outcome, Refusal) and isinstance(outcome.error, NotFoundError)
    assert outcome.error.message == "Connector c not found"


async def test_an_emulated_patch_with_no_entity_is_4_3_1s_500_after_the_connector() -> None:
    """An empty body or ``null``: DistributedHerder finds the connector (404 first), then
    ConnectUtils.patchConfig fails on the null map (4.3.1's NullPointerException, 500); nothing is put."""
    workers, kafka = patching({"connector.class": CLASS, "name": "c"})
    outcome = await ConnectorConfigs(workers, (), view=kafka.view).patch("c", None, emulate=True)
    assert isinstance(outcome, Refusal) and isinstance(outcome.error, OperationFailed)
    assert outcome.error.message == NO_PATCH
    assert not [r for r in workers.forwarded if r.method == "PUT"]
    missing = await ConnectorConfigs(FakeWorkers("3.4.1"), ()).patch("c", None, emulate=True)
    assert isinstance(missing, Refusal) and isinstance(missing.error, NotFoundError)


async def test_a_patch_raced_by_other_changes_is_refused() -> None:
    workers, kafka = patching({"connector.class": CLASS, "name": "c"})
    # another client keeps changing the config between the read the patch applies to and the PUT
    read_to_end, changes = kafka.view.read_to_end, iter(range(100))

    async def changed_each_time(topic: str, timeout_s: float) -> None:
        await read_to_end(topic, timeout_s)
        config = {"connector.class": CLASS, "name": "c", "x": str(next(changes))}
        kafka.view.state.apply_config(ConnectorConfig("c", config))

    kafka.view.read_to_end = changed_each_time  # type: ignore[method-assign]
    outcome = await ConnectorConfigs(workers, (), view=kafka.view, writes=kafka.connector_writes).patch(
        "c", {"a": "1"}, emulate=True
    )
    assert isinstance(outcome, Refusal) and isinstance(outcome.error, ConflictError)
    assert not [r for r in workers.forwarded if r.method == "PUT"]


# -- loggers (KIP-976) ------------------------------------------------------------------------------------
async def test_a_cluster_level_goes_to_every_worker_and_is_read_back() -> None:
    workers = FakeWorkers("3.4.1")
    workers.versions["http://w2:8083"] = "3.4.1"
    workers.answers[("PUT", "/admin/loggers/a.b")] = (200, b'["a.b"]')
    workers.answers[("GET", "/admin/loggers/a.b")] = (200, b'{"level":"DEBUG"}')
    loggers = Loggers(workers, timeout_s=1.0, clock=lambda: 1.5)
    assert await loggers.set_cluster_level("/admin/loggers/a.b", b'{"level":"debug"}') == Reply(204)
    assert [(w, r.method) for w, r in workers.sent_to].count(("http://w2:8083", "PUT")) == 1
    shown = loggers.with_last_modified("a.b")(UpstreamResponse(200, [], b'{"level":"DEBUG"}', "http://w2:8083"))
    assert orjson.loads(shown.body) == {"level": "DEBUG", "last_modified": 1500}
    listed = loggers.with_last_modified_all(UpstreamResponse(200, [], b'{"root":{"level":"INFO"}}', "http://w1:8083"))
    assert orjson.loads(listed.body) == {"root": {"level": "INFO", "last_modified": None}}


async def test_a_level_the_first_worker_refuses_is_its_answer() -> None:
    workers = FakeWorkers("3.4.1")
    workers.answers[("PUT", "/admin/loggers/a")] = (404, b'{"error_code":404,"message":"invalid log level \'X\'."}')
    outcome = await Loggers(workers, timeout_s=1.0).set_cluster_level("/admin/loggers/a", b'{"level":"X"}')
    assert isinstance(outcome, Relay) and outcome.response.status == 404


# -- health (KIP-1017) ------------------------------------------------------------------------------------
async def test_health_from_the_herders_answer() -> None:
    workers = FakeWorkers("3.4.1")
    health = HealthCheck(workers, 1.0)
    assert await health.check() == Reply(503, STARTING)  # 404: resources not there yet
    workers.answers[("GET", "/connectors")] = (200, b"[]")
    assert await health.check() == Reply(200, HEALTHY)

    def stuck(request: UpstreamRequest) -> None:
        raise UpstreamTimeout("http://w1:8083", "no answer")

    workers.before_answer = stuck
    assert await health.check() == Reply(500, UNHEALTHY)  # it answered before: stuck, not starting


# -- order_in_group (4.2) and the advertised version --------------------------------------------------------
def test_definitions_are_renamed_in_4_2s_order() -> None:
    old: dict[str, object] = {
        "name": "n",
        "type": "STRING",
        "group": None,
        "width": "NONE",
        "dependents": [],
        "order": -1,
    }
    assert list(newest_definition(old)) == ["name", "type", "group", "order_in_group", "width", "dependents"]
    assert newest_definition(old)["order_in_group"] == -1


@pytest.mark.parametrize(
    ("worker", "modes", "advertised"),
    [
        pytest.param("4.4.0", {}, "4.4.0", id="newest-its-own"),
        pytest.param("3.4.1", {}, "4.4.0", id="old-with-every-emulation"),
        pytest.param("3.4.1", {Feature.PLUGIN_VERSIONS: FeatureMode.NATIVE}, "4.0.0", id="old-capped-by-kip-891"),
        pytest.param("3.4.1", {Feature.PATCH_CONFIG: FeatureMode.NATIVE}, "3.7.0", id="patch-not-provided"),
        pytest.param("4.1.0", {Feature.ORDER_IN_GROUP: FeatureMode.NATIVE}, "4.1.0", id="workers-shape-kept"),
        pytest.param("4.1.0", {}, "4.4.0", id="4.1-with-the-rename"),
        pytest.param("2.8.2", {}, "4.4.0", id="2.8-with-every-emulation"),
        pytest.param("4.3.1", {}, "4.4.0", id="4.3-with-4.4s-validate"),
        pytest.param("4.3.1", {Feature.VALIDATE_UNRESOLVED: FeatureMode.NATIVE}, "4.3.1", id="4.3-its-own"),
        pytest.param("4.4.1", {}, "4.4.1", id="a-later-patch-its-own"),
    ],
)
def test_the_advertised_version(worker: str, modes: dict[Feature, FeatureMode], advertised: str) -> None:
    version = Version.of(worker)
    assert str(effective_version(version, decide(version, modes))) == advertised


# -- Jackson's messages for a body that is not a map of strings ------------------------------------------------
@pytest.mark.parametrize(
    ("body", "message"),
    [
        pytest.param(b"", None, id="empty"),
        pytest.param(b"null", None, id="null"),
        pytest.param(b'{"a":"b","n":1.5}', None, id="scalars-read-as-strings"),
        pytest.param(b" [1]", "`java.util.LinkedHashMap<java.lang.String,java.lang.String>` from Array", id="array"),
        pytest.param(b'{"a":"b",\n"c":{}}', "line: 2, column: 5] (through reference chain: ", id="object-value"),
    ],
)
def test_string_map_errors(body: bytes, message: str | None) -> None:
    error = string_map_error(body)
    assert error is None if message is None else error is not None and message in error
