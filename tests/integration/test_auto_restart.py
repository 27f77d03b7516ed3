"""Auto-restart against the real workers, on every release of the stack, with two sidecars of the code under
test in front of each: a connector whose task really fails (the versioned test plugin's task, until the file
its ``fail.until.file`` names exists) is restarted on the backoff's schedule by one sidecar only, and runs
once the file is there; every sidecar shows the same restarts. A paused connector whose task failed is never
restarted. A connector whose restart the worker refuses (its transform class gone: ``POST
/connectors/{c}/restart`` answers 500 "Failed to start connector") is restarted on the schedule only, each
refusal counted and recorded once, and given up with its reason. With the first sidecar by id set not to
restart (``AUTO_RESTART=false``), the second one acts, and both say so."""

from __future__ import annotations

import json
import uuid
from functools import partial
from pathlib import Path
from typing import Any

import httpx

from control_plane.domain.auto_restart import AutoRestarter
from tests.support.connect_answers import until_states
from tests.support.harness import RunningSidecar, sidecar_with
from tests.support.kafka_topics import produce_record, read_to_end
from tests.support.stack import Cluster
from tests.support.waiting import eventually

CONNECTOR = "org.example.versioned.VersionedSourceConnector"  # deploy/local/test-plugins/versioned
UNIT_S = 0.5  # the schedule: at once, then 1 s, 3 s, 6 s after the restart before


def restarter(sidecar: RunningSidecar) -> AutoRestarter:
    runtime = sidecar.app.slot.runtime
    assert runtime is not None and runtime.herder.auto_restart.restarter is not None
    return runtime.herder.auto_restart.restarter


async def report(sidecar: RunningSidecar, name: str) -> dict[str, Any]:
    answer = await sidecar.client.get(f"/_sidecar/connectors/{name}/auto-restart")
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


async def acting(client: httpx.AsyncClient) -> str | None:
    """The acting sidecar the sidecar names."""
    acting_sidecar = (await client.get("/_sidecar/auto-restarts")).json()["acting_sidecar"]
    return None if acting_sidecar is None else str(acting_sidecar)


async def task_state(client: httpx.AsyncClient, name: str) -> str | None:
    answer = await client.get(f"/connectors/{name}/status")
    tasks = answer.json().get("tasks", []) if answer.status_code == 200 else []
    return str(tasks[0]["state"]) if tasks else None


async def test_a_failing_task_is_restarted_on_schedule_by_one_sidecar_until_it_runs(
    cluster: Cluster, tmp_path: Path
) -> None:
    unique = uuid.uuid4().hex[:6]
    name, paused = f"auto-{unique}", f"auto-{unique}-paused"
    ready = tmp_path / "ready"
    settings: dict[str, Any] = {
        "sidecars_topic": f"{cluster.name}.auto-{unique}.control-plane",
        "auto_restart": True,
        "auto_restart_connectors": f"auto-{unique}.*",
        "auto_restart_backoff_unit_s": UNIT_S,
        "auto_restart_check_s": 0.1,
    }
    topic = f"auto-{unique}-records"
    config = {"connector.class": CONNECTOR, "tasks.max": "1", "fail.until.file": str(ready), "topic": topic}
    async with sidecar_with(cluster, **settings) as one, sidecar_with(cluster, **settings) as two:
        try:
            # a paused connector: its task fails (auto-restart off for it meanwhile), an operator pauses it, and
            # auto-restart is turned on for it: never restarted
            off = await one.client.put(f"/_sidecar/connectors/{paused}/auto-restart", json={"enabled": False})
            assert off.status_code == 404, off.text  # no such connector yet
            assert (await two.client.put(f"/connectors/{paused}/config", json=config)).status_code == 201
            await eventually(lambda: report(two, paused), lambda r: r["enabled"], what="the paused one covered")
            off = await two.client.put(f"/_sidecar/connectors/{paused}/auto-restart", json={"enabled": False})
            assert (off.status_code, off.json()["chosen_by"], off.json()["enabled"]) == (200, "connector", False)
            await eventually(lambda: task_state(two.client, paused), lambda s: s == "FAILED", what="a FAILED task")
            assert (await two.client.put(f"/connectors/{paused}/pause")).status_code == 202
            await eventually(
                lambda: two.client.get(f"/connectors/{paused}/status"),
                lambda r: r.json()["connector"]["state"] == "PAUSED",
                what="the connector PAUSED",
            )
            on = await one.client.put(f"/_sidecar/connectors/{paused}/auto-restart", json={"enabled": True})
            assert on.status_code == 200 and on.json()["enabled"], on.text
            created = await one.client.put(f"/connectors/{name}/config", json=config)
            assert created.status_code == 201, created.text
            # restarted at once, then 1 s after; both sidecars show the same record
            twice = await eventually(
                lambda: report(two, name), lambda r: r["restarts"] >= 2, timeout_s=60, what="two restarts"
            )
            assert twice["enabled"] and twice["chosen_by"] == "settings" and not twice["gave_up"]
            assert twice["tasks"]["0"]["restarts"] >= 2
            due_after_s = UNIT_S * twice["restarts"] * (twice["restarts"] + 1)
            assert abs(twice["next_restart_ms"] - twice["last_restart_ms"] - 1000 * due_after_s) <= 1
            ready.touch()
            # it runs for good: its records come, on the next restart if it failed once more
            await eventually(
                lambda: read_to_end(cluster.worker_property("bootstrap.servers"), topic),
                lambda log: len(log.records) > 0,
                timeout_s=60,
                what="the task's records",
            )
            await until_states(one.client, name, "RUNNING", ["RUNNING"])
            last = await report(one, name)
            assert last == await report(two, name)
            sent = [restarter(s).counts["restarted"] for s in (one, two)]
            assert sum(sent) == last["restarts"] and 0 in sent, sent  # one sidecar restarted, once per due time
            assert (await report(one, paused))["restarts"] == 0
            assert await task_state(one.client, paused) == "FAILED"
            overview = (await one.client.get("/_sidecar/auto-restarts")).json()
            assert overview["acting_sidecar"] == last["by_sidecar"]
            assert {name, paused} <= {c["connector"] for c in overview["connectors"]}
            metrics = (await one.client.get("/metrics")).text
            assert f'auto_restart_restarts{{connector="{name}"}} {float(last["restarts"])}' in metrics
        finally:
            for each in (name, paused):
                await one.client.delete(f"/connectors/{each}")


async def test_a_restart_the_worker_refuses_is_counted_backed_off_and_given_up(cluster: Cluster) -> None:
    name = f"refused-{uuid.uuid4().hex[:6]}"
    topic = f"{cluster.name}.{name}.control-plane"
    settings: dict[str, Any] = {
        "sidecars_topic": topic,
        "auto_restart": True,
        "auto_restart_connectors": name,
        "auto_restart_backoff_unit_s": UNIT_S,  # at once, then 1 s and 3 s after; given up 6 s after the third
        "auto_restart_max_restarts": 3,
        "auto_restart_check_s": 0.1,
    }
    bootstrap = cluster.worker_property("bootstrap.servers")
    # a connector whose transform's class is gone (as after a plugin upgrade): written as the worker keeps it,
    # since no worker would accept it now; the worker fails it, and answers its restart with a 500
    config = {
        "name": name,
        "connector.class": CONNECTOR,
        "tasks.max": "1",
        "topic": name,
        "transforms": "gone",
        "transforms.gone.type": "org.example.GoneAfterAnUpgrade",
    }
    async with sidecar_with(cluster, **settings) as one:
        try:
            config_topic = cluster.worker_property("config.storage.topic")
            await produce_record(
                bootstrap, config_topic, f"connector-{name}".encode(), json.dumps({"properties": config}).encode()
            )
            await eventually(
                lambda: one.client.get(f"/connectors/{name}/status"),
                lambda r: r.status_code == 200 and r.json()["connector"]["state"] == "FAILED",
                what="the connector FAILED",
            )
            last = await eventually(
                lambda: report(one, name), lambda r: r["gave_up"], timeout_s=60, what="auto-restart giving up"
            )
            assert last["restarts"] == 3 and last["next_restart_ms"] is None, last
            assert last["last_error"]["status"] == 500, last
            assert last["last_error"]["message"] == f"Failed to start connector: {name}"  # the worker's words
            assert "3 restarts of at most 3" in last["gave_up_reason"], last
            counts = restarter(one).counts
            assert (counts["refused"], counts["restarted"], counts["gave_up"]) == (3, 0, 1), counts
            states = (await read_to_end(bootstrap, topic)).with_key(f"restart-state-{name}".encode())
            # each of the three attempts recorded before it is made and once answered, and giving up: no more
            assert len(states) == 7, states
            metrics = (await one.client.get("/metrics")).text
            assert 'auto_restarts_total{outcome="refused"} 3.0' in metrics
        finally:
            await one.client.delete(f"/connectors/{name}")


async def test_the_first_sidecar_set_not_to_restart_leaves_it_to_the_next(cluster: Cluster, tmp_path: Path) -> None:
    unique = uuid.uuid4().hex[:6]
    name = f"acting-{unique}"
    ready = tmp_path / "ready"
    settings: dict[str, Any] = {
        "sidecars_topic": f"{cluster.name}.acting-{unique}.control-plane",
        "auto_restart_connectors": name,
        "auto_restart_backoff_unit_s": UNIT_S,
        "auto_restart_check_s": 0.1,
        "presence_interval_s": 0.5,
    }
    config = {"connector.class": CONNECTOR, "tasks.max": "1", "fail.until.file": str(ready), "topic": name}
    # the id is "<host>:<PORT>/<process>": the one with port 1001 is the first by id
    async with (
        sidecar_with(cluster, **settings, auto_restart=False, port=1001) as off,
        sidecar_with(cluster, **settings, auto_restart=True, port=1002) as on,
    ):
        try:
            first, second = restarter(off).sidecar, restarter(on).sidecar
            assert first < second
            for client in (off.client, on.client):
                await eventually(
                    partial(acting, client),
                    lambda acting_sidecar: acting_sidecar == second,
                    what="the sidecar with AUTO_RESTART on acting",
                )
            shown = {s["id"]: s for s in (await off.client.get("/_sidecar/cluster")).json()["sidecars"]}
            assert (shown[first]["auto_restart"], shown[first]["auto_restart_chosen"], shown[first]["ready"]) == (
                False,
                True,
                True,
            )
            assert (shown[second]["auto_restart"], shown[second]["ready"]) == (True, True)
            assert (await off.client.put(f"/connectors/{name}/config", json=config)).status_code == 201
            restarted = await eventually(
                lambda: report(off, name), lambda r: r["restarts"] >= 1, timeout_s=60, what="a restart"
            )
            assert restarted["by_sidecar"] == second and restarted["last_error"] is None, restarted
            assert restarter(off).counts["restarted"] == 0 and restarter(on).counts["restarted"] >= 1
            ready.touch()
            await until_states(on.client, name, "RUNNING", ["RUNNING"])
        finally:
            await on.client.delete(f"/connectors/{name}")
