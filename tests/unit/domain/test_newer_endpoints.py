"""KIP-745's restart options and KIP-769's plugin listing and plugin config, composed by the herder on
workers that lack them (before 3.0 and 3.2) and forwarded to workers that have them."""

from __future__ import annotations

import orjson
import pytest

from control_plane.codecs import ConnectorStatus, TaskStatus
from control_plane.domain.errors import NotFoundError, OperationFailed, Unsupported, WorkerRefused
from control_plane.domain.newer.restart import RestartRequest
from control_plane.domain.outcomes import Accepted, Answer, Forward
from control_plane.domain.plugins.listings import (
    KAFKA_CONVERTERS,
    KAFKA_HEADER_CONVERTERS,
    ListedPlugin,
    aliases,
    connector_config_keys,
    find,
    plugin_list,
)
from control_plane.upstream import UpstreamResponse
from tests.support.fake_cluster import FakeCluster
from tests.support.fakes import CONFIG

SINK = "org.example.SqlSinkConnector"
SOURCE = "org.example.FileSourceConnector"
CONNECTORS = [
    {"class": SOURCE, "type": "source", "version": "1.0"},
    {"class": SINK, "type": "sink", "version": "2.0"},
]


def restart(name: str = "c", *, only_failed: bool = False, include_tasks: bool = False) -> RestartRequest:
    return RestartRequest(name, only_failed=only_failed, include_tasks=include_tasks)


async def old_cluster(version: str = "2.8.2") -> FakeCluster:
    cluster = FakeCluster(version)
    await cluster.detect()
    cluster.running("c")
    state = cluster.kafka.view.state
    state.apply_status(TaskStatus("c", 1, "FAILED", "boom", "w1", 1))
    for path in ("/connectors/c/restart", "/connectors/c/tasks/0/restart", "/connectors/c/tasks/1/restart"):
        cluster.workers.answers[("POST", path)] = (204, b"")
    return cluster


def sent(cluster: FakeCluster) -> list[str]:
    return [f"{r.method} {r.path}" for r in cluster.workers.forwarded if r.method == "POST"]


# -- KIP-745 ----------------------------------------------------------------------------------------
async def test_restart_without_options_is_the_old_request_on_every_version() -> None:
    for version in ("2.8.2", "4.3.1"):
        cluster = await old_cluster(version)
        assert isinstance(await cluster.herder.newer.restart(restart()), Forward)
        assert isinstance(await cluster.herder.newer.restart(restart(include_tasks=True)), Forward) is (
            version == "4.3.1"
        )


@pytest.mark.parametrize(
    ("only_failed", "include_tasks", "connector", "tasks", "posts"),
    [
        (False, True, "RESTARTING", ["RESTARTING", "RESTARTING"], ["restart", "tasks/0/restart", "tasks/1/restart"]),
        (True, True, "RUNNING", ["RUNNING", "RESTARTING"], ["tasks/1/restart"]),
        (True, False, "RUNNING", ["RUNNING", "FAILED"], []),
    ],
)
async def test_restart_options_on_an_old_worker_answer_the_plan_and_restart_what_it_says(
    only_failed: bool, include_tasks: bool, connector: str, tasks: list[str], posts: list[str]
) -> None:
    cluster = await old_cluster()
    outcome = await cluster.herder.newer.restart(restart(only_failed=only_failed, include_tasks=include_tasks))
    assert isinstance(outcome, Accepted) and outcome.value is not None
    assert outcome.value.connector.state == connector
    assert [entry.state for _, entry in outcome.value.tasks] == tasks
    assert sent(cluster) == [f"POST /connectors/c/{p}" for p in posts]


async def test_restart_options_refusals_are_connects() -> None:
    cluster = await old_cluster()
    with pytest.raises(NotFoundError, match=r"^Unknown connector: nope$"):
        await cluster.herder.newer.restart(restart("nope", include_tasks=True))
    cluster.running("quiet")
    state = cluster.kafka.view.state
    state.connector_statuses.pop("quiet")
    with pytest.raises(NotFoundError, match=r"^Status for connector quiet not found$"):
        await cluster.herder.newer.restart(restart("quiet", include_tasks=True))
    # the worker refuses a step: its own answer, and nothing after it is sent
    cluster.workers.answers[("POST", "/connectors/c/restart")] = (409, b'{"error_code":409,"message":"busy"}')
    with pytest.raises(WorkerRefused) as refused:
        await cluster.herder.newer.restart(restart(include_tasks=True))
    assert (refused.value.status, refused.value.message) == (409, "busy")
    assert sent(cluster)[-1] == "POST /connectors/c/restart"


async def test_a_stopped_connector_restarts_as_3_5_shows_it() -> None:
    cluster = await old_cluster()
    cluster.kafka.view.state.connector_statuses["c"] = ConnectorStatus("c", "RUNNING", None, "w1", 2)
    await cluster.kafka.stopper.stop("c")
    outcome = await cluster.herder.newer.restart(restart(include_tasks=True))
    assert isinstance(outcome, Accepted) and outcome.value is not None
    assert (outcome.value.connector.state, outcome.value.tasks) == ("RESTARTING", ())


@pytest.mark.parametrize(
    ("worker_plan", "shown"),
    [
        pytest.param({"state": "PAUSED"}, "STOPPED", id="not-restarted"),
        pytest.param({"state": "RESTARTING"}, "RESTARTING", id="restarted"),
    ],
)
async def test_a_3_4_workers_plan_of_a_connector_the_sidecar_stopped_shows_it_stopped(
    worker_plan: dict[str, str], shown: str
) -> None:
    """The 3.4 worker keeps PAUSED what the sidecar stopped; 4.3.1's plan over that connector shows STOPPED
    without tasks (AbstractHerder.buildRestartPlan), RESTARTING where it restarts it."""
    cluster = await old_cluster("3.4.1")
    await cluster.kafka.stopper.stop("c")
    outcome = await cluster.herder.newer.restart(restart(only_failed=True, include_tasks=True))
    assert isinstance(outcome, Forward) and outcome.rewrite is not None
    plan = {
        "name": "c",
        "connector": {**worker_plan, "worker_id": "w1"},
        "tasks": [{"id": 0, "state": "PAUSED", "worker_id": "w1"}],
        "type": "source",
    }
    answer = await outcome.rewrite(UpstreamResponse(202, [], orjson.dumps(plan), "w1"))
    data = orjson.loads(answer.body)
    assert (data["connector"], data["tasks"]) == (
        {"state": shown, "worker_id": "w1"},
        [] if shown == "STOPPED" else plan["tasks"],
    )
    cut_off = await old_cluster("3.4.1")  # a stop cut off before its empty task set: the worker's tasks stay
    cut_off.kafka.failing = lambda key: ConnectionError("broker gone") if key.startswith(b"commit-") else None
    with pytest.raises(OperationFailed):
        await cut_off.kafka.stopper.stop("c")
    await cut_off.kafka.view.read_to_end(CONFIG, 1)
    half = await cut_off.herder.newer.restart(restart(only_failed=True, include_tasks=True))
    assert isinstance(half, Forward) and half.rewrite is not None
    data = orjson.loads((await half.rewrite(UpstreamResponse(202, [], orjson.dumps(plan), "w1"))).body)
    assert (data["connector"]["state"], data["tasks"]) == (shown, plan["tasks"])
    running = await old_cluster("3.4.1")  # a connector the sidecar did not stop: the worker's plan as it is
    kept = await running.herder.newer.restart(restart(only_failed=True, include_tasks=True))
    assert isinstance(kept, Forward) and kept.rewrite is not None
    paused = await kept.rewrite(UpstreamResponse(202, [], orjson.dumps(plan), "w1"))
    assert orjson.loads(paused.body) == plan


# -- KIP-769 ----------------------------------------------------------------------------------------
def test_aliases_and_lookup_as_plugin_utils() -> None:
    assert aliases(SINK) == ("SqlSinkConnector", "SqlSink")
    plugins = [ListedPlugin(SINK, "sink", "1"), ListedPlugin("a.SqlSinkConnector", "sink", "1")]
    assert find(SINK, plugins) == plugins[0]
    assert find("SqlSink", plugins) is None  # ambiguous
    assert find("SqlSink", plugins[:1]) == plugins[0]


def test_the_list_in_connects_order_without_internal_classes() -> None:
    connectors = [ListedPlugin(SOURCE, "source", "1"), ListedPlugin(SINK, "sink", "2")]
    listed = plugin_list(
        connectors, ["x.B", "x.A", "org.apache.kafka.connect.runtime.PredicatedTransformation"], ["p.P"]
    )
    assert [(p.class_name, p.type, p.version) for p in listed] == [
        (SINK, "sink", "2"),
        (SOURCE, "source", "1"),
        ("x.A", "transformation", "undefined"),
        ("x.B", "transformation", "undefined"),
        ("p.P", "predicate", "undefined"),
    ]


def definition(name: str, group: str | None, order: int = -1) -> dict[str, object]:
    return {"name": name, "type": "STRING", "required": False, "default_value": None, "importance": "LOW",
            "documentation": "", "group": group, "order": order, "width": "NONE", "display_name": name,
            "dependents": []}  # fmt: skip


def test_a_connectors_keys_first_then_the_frameworks_in_the_newest_shape() -> None:
    validated = {
        "configs": [
            {"definition": definition("name", "Common", 1)},
            {"definition": definition("errors.tolerance", "Error Handling", 3)},
            {"definition": definition("url", None)},
            {"definition": definition("pool", "Connection", 1)},
        ]
    }
    keys = connector_config_keys(validated)
    assert [k["name"] for k in keys] == ["url", "pool", "name", "errors.tolerance"]
    assert list(keys[0]) == [
        "name", "type", "required", "default_value", "importance", "documentation", "group", "order_in_group",
        "width", "display_name", "dependents",
    ]  # fmt: skip
    assert keys[1]["order_in_group"] == 1


def validate_answer(recommended: dict[str, list[str]], own: list[str]) -> bytes:
    configs = [{"definition": definition("name", "Common", 1), "value": {"recommended_values": []}}]
    configs += [{"definition": definition(k, "Transforms: sidecar", 0), "value": {"recommended_values": v}}
                for k, v in recommended.items()]  # fmt: skip
    configs += [{"definition": definition(k, None), "value": {"recommended_values": []}} for k in own]
    return orjson.dumps({"name": "x", "error_count": 1, "groups": [], "configs": configs})


async def plugin_cluster() -> FakeCluster:
    cluster = FakeCluster("2.8.2")
    await cluster.detect()
    cluster.workers.answers[("GET", "/connector-plugins")] = (200, orjson.dumps(CONNECTORS))
    answer = validate_answer({"transforms.sidecar.type": ["t.T"], "predicates.sidecar.type": ["p.P"]}, ["path"])
    for cls in (SOURCE, SINK):
        cluster.workers.answers[("PUT", f"/connector-plugins/{cls}/config/validate")] = (200, answer)
    return cluster


async def test_plugin_listing_on_an_old_worker() -> None:
    cluster = await plugin_cluster()
    assert isinstance(await cluster.herder.plugins.connector_plugins(connectors_only=True), Forward)
    outcome = await cluster.herder.plugins.connector_plugins(connectors_only=False)
    assert isinstance(outcome, Answer) and outcome.warnings
    assert [(p.class_name, p.type) for p in outcome.value] == [
        (SINK, "sink"),
        (SOURCE, "source"),
        ("t.T", "transformation"),
        ("p.P", "predicate"),
        *((c, "converter") for c in sorted(KAFKA_CONVERTERS)),
        *((c, "header_converter") for c in sorted(KAFKA_HEADER_CONVERTERS)),
    ]
    validate = next(r for r in cluster.workers.forwarded if r.method == "PUT")
    assert orjson.loads(validate.body) == {
        "connector.class": SOURCE,
        "transforms": "sidecar",
        "predicates": "sidecar",
    }


async def test_plugin_config_on_an_old_worker() -> None:
    cluster = await plugin_cluster()
    cluster.workers.answers[("PUT", f"/connector-plugins/{SINK}/config/validate")] = (
        200,
        validate_answer({}, ["path"]),
    )
    outcome = await cluster.herder.plugins.config("SqlSink")
    assert isinstance(outcome, Answer)
    assert [k["name"] for k in outcome.value] == ["path", "name"]
    validate = [r for r in cluster.workers.forwarded if r.method == "PUT"][-1]
    assert orjson.loads(validate.body) == {"connector.class": SINK, "topics": "sidecar"}  # a sink needs topics
    with pytest.raises(NotFoundError, match=r"^Unknown plugin org.example.NoConverter\.$"):
        await cluster.herder.plugins.config("org.example.NoConverter")
    with pytest.raises(Unsupported, match="converter plugins"):  # listed, not describable before 3.2
        await cluster.herder.plugins.config("JsonConverter")
    with pytest.raises(Unsupported, match="transformation plugins"):
        await cluster.herder.plugins.config("t.T")


async def test_plugin_endpoints_go_through_from_3_2() -> None:
    cluster = FakeCluster("3.2.0")
    await cluster.detect()
    assert isinstance(await cluster.herder.plugins.connector_plugins(connectors_only=False), Forward)
    assert isinstance(await cluster.herder.plugins.config("x"), Forward)
