"""KIP-158 on the real stack, every Connect version: source connectors with three groups create their topics
as the sidecar's preview said (partitions, replication factor, cleanup.policy as the broker reports them);
each mistake Connect fails on is refused through the sidecar with its message, where the worker accepts it
directly and fails later (a FAILED connector or task); what Connect 4.4.0 accepts and runs (a group that
never claims a topic, brokers of admin.override.* the sidecar cannot reach) goes through with a warning,
validate's answer the worker's own; config_checks=warn lets a mistake through with a warning; keys on a
sink warn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from aiokafka.admin import AIOKafkaAdminClient

from tests.support.connect_answers import states
from tests.support.harness import InProcess
from tests.support.kafka_topics import read_values, topic_configs
from tests.support.ports import free_port
from tests.support.stack import Cluster, Stack
from tests.support.waiting import eventually

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"

GROUPS = {
    "topic.creation.groups": "compacted, wide, single",
    "topic.creation.default.replication.factor": "1",
    "topic.creation.default.partitions": "2",
    "topic.creation.compacted.include": ".*-state",
    "topic.creation.compacted.partitions": "1",
    "topic.creation.compacted.cleanup.policy": "compact",
    "topic.creation.wide.include": ".*-events-.*",
    "topic.creation.wide.exclude": ".*-events-audit",
    "topic.creation.wide.partitions": "3",
    "topic.creation.single.include": ".*-events-audit",
    "topic.creation.single.partitions": "-1",
    "topic.creation.single.retention.ms": "3600000",
}
EXPECTED_GROUP = {"state": "compacted", "events-a": "wide", "events-audit": "single", "other": "default"}


async def broker_facts(bootstrap: str, topic: str) -> tuple[int, int, str] | None:
    """(partitions, replication factor, cleanup.policy) as the broker describes the topic; None: none yet."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        (description,) = await admin.describe_topics([topic])
        if description["error_code"] or not description["partitions"]:
            return None
        partitions = description["partitions"]
        configs = await topic_configs(admin, topic)
        return len(partitions), max(len(p["replicas"]) for p in partitions), configs["cleanup.policy"]
    finally:
        await admin.close()


def predicted(plan: dict[str, Any]) -> tuple[int, int, str]:
    created = plan["created_with"]
    return created["partitions"], created["replication_factor"], created["configs"]["cleanup.policy"]


async def test_three_groups_create_the_topics_the_preview_predicted(
    cluster: Cluster, stack: Stack, sidecar: httpx.AsyncClient, worker: httpx.AsyncClient, unique: str, tmp_path: Path
) -> None:
    prefix = f"tc-{cluster.name}-{unique}"
    topics = {suffix: f"{prefix}-{suffix}" for suffix in EXPECTED_GROUP}
    config = {"connector.class": FILE_SOURCE, **GROUPS}

    before = await sidecar.post(
        "/_sidecar/topic-creation/preview", json={"config": config, "topics": list(topics.values())}
    )
    assert before.status_code == 200, before.text
    preview = before.json()
    assert preview["creates_topics"] is True and preview["problems"] == []
    plans = {plan["topic"]: plan for plan in preview["topics"]}
    assert {suffix: plans[t]["group"] for suffix, t in topics.items()} == EXPECTED_GROUP
    assert not any(plan["exists"] for plan in plans.values())
    assert plans[topics["events-audit"]]["requested"]["partitions"] == -1  # the broker's default, filled in
    assert plans[topics["events-audit"]]["created_with"]["configs"]["retention.ms"] == "3600000"

    # one FileStreamSource per topic, each record keyed by its line (a compacted topic refuses records
    # without a key); the last writes to a topic name a RegexRouter makes of its own
    keyed = {
        "transforms": "hoist, key",
        "transforms.hoist.type": "org.apache.kafka.connect.transforms.HoistField$Value",
        "transforms.hoist.field": "line",
        "transforms.key.type": "org.apache.kafka.connect.transforms.ValueToKey",
        "transforms.key.fields": "line",
    }
    names = []
    for suffix, topic in topics.items():
        name = f"{prefix}-src-{suffix}"
        lines = tmp_path / f"{suffix}.txt"
        lines.write_text(f"{suffix}-1\n")
        own = {**config, **keyed, "file": str(lines), "topic": topic}
        if suffix == "other":
            own |= {
                "topic": f"{prefix}-raw-other",
                "transforms": "hoist, key, route",
                "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
                "transforms.route.regex": "(.*)-raw-(.*)",
                "transforms.route.replacement": "$1-$2",
            }
        created = await sidecar.put(f"/connectors/{name}/config", json=own)
        assert created.status_code == 201, created.text
        assert "warning" not in created.headers
        names.append(name)
    for topic in topics.values():
        assert len(await read_values(stack.bootstrap, topic, 1)) == 1
    for name in names:
        assert await states(worker, name) == ("RUNNING", ["RUNNING"])

    facts = {suffix: await broker_facts(stack.bootstrap, topic) for suffix, topic in topics.items()}
    assert facts == {suffix: predicted(plans[topic]) for suffix, topic in topics.items()}
    # what the groups say, checked against the broker, not only against the preview
    assert facts["state"] == (1, 1, "compact")
    assert facts["events-a"] is not None and facts["events-a"][0] == 3
    assert facts["other"] is not None and facts["other"][0] == 2

    # the preview of an existing connector: the topics exist, as the group would create them
    query = "&".join(f"topic={t}" for t in topics.values())
    after = await sidecar.get(f"/_sidecar/connectors/{names[0]}/topic-creation?{query}")
    assert after.status_code == 200, after.text
    for plan in after.json()["topics"]:
        assert plan["exists"] is True and plan["differences"] == [], plan
        assert plan["group"] == EXPECTED_GROUP[plan["topic"].removeprefix(f"{prefix}-")]
    invalid = await sidecar.post("/_sidecar/topic-creation/preview", json={"config": config, "topics": ["a b"]})
    assert invalid.status_code == 200, invalid.text
    (plan,) = invalid.json()["topics"]
    assert plan["group"] == "default" and plan["exists"] is False and plan["created_with"] is None
    assert plan["refused"].startswith("InvalidTopicError: Topic name is invalid: 'a b'")
    missing = await sidecar.get(f"/_sidecar/connectors/{prefix}-none/topic-creation?topic=x")
    assert missing.status_code == 404 and missing.json()["message"] == f"Connector {prefix}-none not found"

    for name in names:
        assert (await worker.delete(f"/connectors/{name}")).status_code == 204


BASE = {
    "connector.class": FILE_SOURCE,
    "topic.creation.default.replication.factor": "1",
    "topic.creation.default.partitions": "1",
}
ONE_GROUP = {**BASE, "topic.creation.groups": "g", "topic.creation.g.include": "orders.*"}

# each mistake by its id: the config, the key the error is on, and (a part of) the message
MISTAKES_BY_ID: dict[str, tuple[dict[str, str | None], str, str]] = {
    "required-default": (
        {**BASE, "topic.creation.default.replication.factor": None},
        "topic.creation.default.replication.factor",
        'Missing required configuration "topic.creation.default.replication.factor"',
    ),
    "zero-partitions": (
        {**ONE_GROUP, "topic.creation.g.partitions": "0"},
        "topic.creation.g.partitions",
        "Invalid value 0 for configuration partitions: Number of partitions must be positive, or -1 to use the "
        "broker's default (group 'g'",
    ),
    "replication-above-live-brokers": (
        {**ONE_GROUP, "topic.creation.g.replication.factor": "3"},
        "topic.creation.g.replication.factor",
        "replication factor 3 of group 'g' is larger than the 1 live broker(s)",
    ),
    "invalid-regex": (
        {**ONE_GROUP, "topic.creation.g.include": "orders, [a-"},
        "topic.creation.g.include",
        "entry '[a-' of group 'g' is not a valid Java regular expression",
    ),
    "comma-split": (
        {**ONE_GROUP, "topic.creation.g.include": "o{1,3}rders"},
        "topic.creation.g.include",
        "'o{1,3}rders' in group 'g' was split at its comma into ['o{1', '3}rders']",
    ),
    "unknown-topic-setting": (
        {**ONE_GROUP, "topic.creation.g.no.such.setting": "1"},
        "topic.creation.g.no.such.setting",
        "topic setting no.such.setting='1' of group 'g' is refused by the broker (InvalidConfigurationError: "
        "Unknown topic config name: no.such.setting)",
    ),
    "rejected-topic-setting": (
        {**BASE, "topic.creation.default.cleanup.policy": "nope"},
        "topic.creation.default.cleanup.policy",
        "Invalid value nope for configuration cleanup.policy",
    ),
}
MISTAKES = [pytest.param(*row, id=ident) for ident, row in MISTAKES_BY_ID.items()]

# what Connect 4.4.0 accepts and runs, by id: the config, and (a part of) the warning the sidecar gives
ACCEPTED_BY_ID: dict[str, tuple[dict[str, str], str]] = {
    "leaking-flag": (
        {**ONE_GROUP, "topic.creation.g.include": "(?i)orders, audit"},
        "topic.creation.g.include: entry '(?i)orders' of group 'g' changes the entries after it",
    ),
    "no-include": (
        {**BASE, "topic.creation.groups": "g", "topic.creation.g.partitions": "2"},
        "topic.creation.g.include: group 'g' has no include list",
    ),
    "shadowed-group": (
        {**ONE_GROUP, "topic.creation.groups": "g, h", "topic.creation.h.include": "orders.*"},
        "topic.creation.h.include: group 'h' never claims a topic: the earlier group 'g'",
    ),
    "not-a-group": (
        {**ONE_GROUP, "topic.creation.stray.partitions": "3"},
        "topic.creation.stray.partitions: ignored: 'stray' is not a group",
    ),
    # 3 replicas are above the stack's one broker, but the connector's topics are created elsewhere
    "admin-override-unreachable": (
        {
            **ONE_GROUP,
            "topic.creation.g.replication.factor": "3",
            "admin.override.bootstrap.servers": "127.0.0.1:{port}",
        },
        "topic.creation.*: could not check the replication factors against the brokers at "
        "admin.override.bootstrap.servers=127.0.0.1:",
    ),
}
ACCEPTED = [pytest.param(*row, id=ident) for ident, row in ACCEPTED_BY_ID.items()]


def without_none(config: dict[str, str | None]) -> dict[str, str]:
    return {k: v for k, v in config.items() if v is not None}


@pytest.mark.parametrize(("config", "key", "message"), MISTAKES)
async def test_each_mistake_is_refused_through_the_sidecar_and_accepted_by_the_worker(
    sidecar: httpx.AsyncClient,
    worker: httpx.AsyncClient,
    unique: str,
    tmp_path: Path,
    config: dict[str, str | None],
    key: str,
    message: str,
) -> None:
    name = f"tc-mistake-{unique}"
    full = without_none({**config, "file": str(tmp_path / "in.txt"), "topic": f"orders-{unique}"})
    validate = f"/connector-plugins/{FILE_SOURCE}/config/validate"
    direct = (await worker.put(validate, json={**full, "name": name})).json()
    assert direct["error_count"] == 0  # the worker sees nothing wrong

    checked = (await sidecar.put(validate, json={**full, "name": name})).json()
    assert checked["error_count"] >= 1
    errors = {c["value"]["name"]: c["value"]["errors"] for c in checked["configs"]}
    assert any(message in e for e in errors[key]), errors[key]

    refused = await sidecar.post("/connectors", json={"name": name, "config": full})
    assert refused.status_code == 400
    assert refused.json()["error_code"] == 400
    assert refused.json()["message"].startswith("Connector configuration is invalid and contains the following")
    assert message in refused.json()["message"]
    assert (await worker.get(f"/connectors/{name}")).status_code == 404  # nothing reached the worker


@pytest.mark.parametrize(("config", "warning"), ACCEPTED)
async def test_what_connect_accepts_is_accepted_through_the_sidecar_with_its_warning(
    stack: Stack,
    sidecar: httpx.AsyncClient,
    worker: httpx.AsyncClient,
    unique: str,
    tmp_path: Path,
    config: dict[str, str],
    warning: str,
) -> None:
    name = f"tc-accepted-{unique}"
    port = str(free_port())  # nothing listens there
    full = {k: v.replace("{port}", port) for k, v in config.items()}
    full |= {"file": str(tmp_path / "in.txt"), "topic": f"orders-{unique}"}
    validate = f"/connector-plugins/{FILE_SOURCE}/config/validate"
    async with httpx.AsyncClient(base_url=stack.newest.connect_url, timeout=60) as newest:
        reference = (await newest.put(validate, json={**full, "name": name})).json()
    assert reference["error_count"] == 0  # Connect 4.4.0 accepts it

    checked = await sidecar.put(validate, json={**full, "name": name})
    assert checked.status_code == 200, checked.text
    assert checked.json()["error_count"] == 0  # no error added to the worker's own answer
    assert [c["value"]["name"] for c in checked.json()["configs"] if c["value"]["errors"]] == []
    assert warning in checked.headers["warning"]

    created = await sidecar.post("/connectors", json={"name": name, "config": full})
    assert created.status_code == 201, created.text
    assert warning in created.headers["warning"]
    assert created.json()["config"]["topic.creation.default.partitions"] == "1"  # as sent, to the worker
    assert (await worker.delete(f"/connectors/{name}")).status_code == 204


@pytest.mark.parametrize(
    ("config", "failure"),
    [
        pytest.param(
            {**BASE, "topic.creation.default.replication.factor": None},
            'Missing required configuration "topic.creation.default.replication.factor"',
            id="required-default",
        ),
        pytest.param(
            {**ONE_GROUP, "topic.creation.g.no.such.setting": "1"},
            "Unknown topic config name: no.such.setting",
            id="unknown-topic-setting",
        ),
    ],
)
async def test_the_worker_accepts_them_directly_and_the_connector_or_its_task_fails_later(
    worker: httpx.AsyncClient, unique: str, tmp_path: Path, config: dict[str, str | None], failure: str
) -> None:
    lines = tmp_path / "in.txt"
    lines.write_text("x\n")
    name = f"tc-fails-{unique}"
    full = without_none({**config, "file": str(lines), "topic": f"orders-{unique}"})
    assert (await worker.put(f"/connectors/{name}/config", json=full)).status_code == 201

    async def status() -> dict[str, Any]:
        return dict((await worker.get(f"/connectors/{name}/status")).json())

    def failures(s: dict[str, Any]) -> list[str]:
        return [
            e.get("trace") or "" for e in (s.get("connector", {}), *s.get("tasks", [])) if e.get("state") == "FAILED"
        ]

    failed = await eventually(status, lambda s: bool(failures(s)), what=f"{name} or a task of it FAILED")
    assert any(failure in trace for trace in failures(failed)), failed
    assert (await worker.delete(f"/connectors/{name}")).status_code == 204


async def test_warn_only_lets_a_mistake_through_with_a_warning_and_sink_keys_warn(
    in_process: InProcess, worker: httpx.AsyncClient, unique: str, tmp_path: Path
) -> None:
    sidecar = await in_process(config_checks="warn")
    name = f"tc-warned-{unique}"
    config = {**ONE_GROUP, "topic.creation.g.partitions": "0", "file": str(tmp_path / "in.txt"), "topic": "t"}
    created = await sidecar.put(f"/connectors/{name}/config", json=config)
    assert created.status_code == 201, created.text
    assert "topic.creation.g.partitions: Invalid value 0 for configuration partitions" in created.headers["warning"]

    sink = f"tc-sink-{unique}"
    sink_config = {**BASE, "connector.class": FILE_SINK, "file": str(tmp_path / "out.txt"), "topics": "t"}
    answered = await sidecar.put(f"/connectors/{sink}/config", json=sink_config)
    assert answered.status_code == 201, answered.text
    assert "topic.creation.* keys on a sink connector are ignored" in answered.headers["warning"]
    for done in (name, sink):
        assert (await worker.delete(f"/connectors/{done}")).status_code == 204
    assert await states(worker, name) == (None, [])


async def test_an_update_and_a_patch_with_a_mistake_are_refused(
    sidecar: httpx.AsyncClient, worker: httpx.AsyncClient, unique: str, tmp_path: Path
) -> None:
    name = f"tc-update-{unique}"
    config = {**ONE_GROUP, "file": str(tmp_path / "in.txt"), "topic": f"orders-{unique}"}
    assert (await sidecar.put(f"/connectors/{name}/config", json=config)).status_code == 201
    message = "entry '[a-' of group 'g' is not a valid Java regular expression"

    update = await sidecar.put(f"/connectors/{name}/config", json={**config, "topic.creation.g.include": "[a-"})
    assert update.status_code == 400 and message in update.json()["message"]
    patch = await sidecar.patch(f"/connectors/{name}/config", json={"topic.creation.g.include": "[a-"})
    assert patch.status_code == 400 and message in patch.json()["message"]
    assert (await worker.get(f"/connectors/{name}/config")).json()["topic.creation.g.include"] == "orders.*"
    assert (await worker.delete(f"/connectors/{name}")).status_code == 204
