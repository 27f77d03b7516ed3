"""Bulk actions against the real workers, on every release of the stack (a 3.4.1 worker has no STOPPED state:
the sidecar stops it): connectors picked by pattern, state, task state and topic, a dry run, many paused and
resumed, one stopped, a failed task restarted with ``onlyFailed``, all deleted; after each action what the
connectors do next is read from the worker, not only the answer. With access rules: a token limited to
some connectors gets its single request's 404 for another, an operator is refused a delete, each
connector's own result, the others acted on."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.harness import InProcess
from tests.support.stack import Cluster
from tests.support.waiting import eventually

SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"


async def status(worker: httpx.AsyncClient, name: str) -> dict[str, Any] | None:
    answer = await worker.get(f"/connectors/{name}/status")
    return answer.json() if answer.status_code == 200 else None


def in_state(connector: str, tasks: list[str] | None = None) -> Any:
    def ok(found: dict[str, Any] | None) -> bool:
        if found is None or found["connector"]["state"] != connector:
            return False
        return tasks is None or sorted(t["state"] for t in found["tasks"]) == tasks

    return ok


async def bulk(client: httpx.AsyncClient, body: dict[str, Any], **headers: str) -> dict[str, Any]:
    answer = await client.post("/_sidecar/bulk", json=body, headers=headers)
    assert answer.status_code == 200, answer.text
    result: dict[str, Any] = answer.json()
    return result


def results(result: dict[str, Any]) -> dict[str, str]:
    return {item["name"]: item["result"] for item in result["connectors"]}


async def create(worker: httpx.AsyncClient, name: str, config: dict[str, str]) -> None:
    answer = await eventually(
        lambda: worker.put(f"/connectors/{name}/config", json=config),
        lambda r: r.status_code != 409,  # a 3.4.1 worker's group may be rebalancing after the last create
        what=f"{name} created",
    )
    assert answer.status_code in (200, 201), answer.text


async def test_select_dry_run_pause_resume_stop_restart_and_delete(
    cluster: Cluster, sidecar: httpx.AsyncClient, worker: httpx.AsyncClient, unique: str, tmp_path: Path
) -> None:
    prefix = f"bulk-{unique}"
    everything = {"pattern": f"{prefix}-.*"}
    a, b, c, sink = f"{prefix}-a", f"{prefix}-b", f"{prefix}-c", f"{prefix}-sink"
    orders, other = f"{prefix}-orders", f"{prefix}-other"
    lines = tmp_path / "in.txt"
    lines.write_text("one\ntwo\n")
    out_dir = tmp_path / "out"  # missing at first: the sink's task fails to open its file
    try:
        for name, topic in ((a, orders), (b, orders), (c, other)):
            await create(worker, name, {"connector.class": SOURCE, "file": str(lines), "topic": topic})
        await create(worker, sink, {"connector.class": SINK, "file": str(out_dir / "out.txt"), "topics": other})
        for name in (a, b, c):
            await eventually(partial(status, worker, name), in_state("RUNNING", ["RUNNING"]), what=f"{name} runs")
        await eventually(partial(status, worker, sink), in_state("RUNNING", ["FAILED"]), what="the sink's task fails")

        # a dry run by topic: the sources that wrote it, once their tasks reported it (KIP-558, from the view)
        dry = await eventually(
            partial(bulk, sidecar, {"action": "pause", "selector": {**everything, "topic": orders}, "dry_run": True}),
            lambda r: results(r) == {a: "selected", b: "selected"},
            what="the dry run picks the connectors writing the topic",
        )
        assert dry["counts"] == {"selected": 2, "done": 0, "refused": 0, "failed": 0} and dry["dry_run"] is True
        assert (await status(worker, a) or {})["connector"]["state"] == "RUNNING"  # a dry run acts on nothing

        # pause many by pattern, then resume those PAUSED: the workers' states follow
        paused = await bulk(sidecar, {"action": "pause", "selector": {**everything, "types": ["source"]}})
        assert paused["counts"]["done"] == 3 and {i["status"] for i in paused["connectors"]} == {202}, paused
        for name in (a, b, c):
            await eventually(partial(status, worker, name), in_state("PAUSED", ["PAUSED"]), what=f"{name} paused")
        await eventually(
            partial(
                bulk, sidecar, {"action": "resume", "selector": {**everything, "states": ["PAUSED"]}, "dry_run": True}
            ),
            lambda r: set(results(r)) == {a, b, c},
            what="the view shows them PAUSED",
        )
        resumed = await bulk(sidecar, {"action": "resume", "selector": {**everything, "states": ["PAUSED"]}})
        assert results(resumed) == {a: "done", b: "done", c: "done"}, resumed
        for name in (a, b, c):
            await eventually(partial(status, worker, name), in_state("RUNNING", ["RUNNING"]), what=f"{name} resumed")

        # stop one (emulated where the worker has no STOPPED state): its tasks are gone on the worker
        stopped = await bulk(sidecar, {"action": "stop", "selector": {"names": [c]}})
        assert results(stopped) == {c: "done"}, stopped
        await eventually(
            partial(status, worker, c), lambda s: s is not None and s["tasks"] == [], what="the stopped one's tasks go"
        )
        shown = await eventually(
            lambda: sidecar.get(f"/connectors/{c}/status"),
            lambda r: r.status_code == 200 and r.json()["connector"]["state"] == "STOPPED",
            what="the sidecar shows it STOPPED",
        )
        assert shown.json()["tasks"] == []

        # restart every failed task, once its cause is gone: only the sink is picked, and its task runs
        out_dir.mkdir()
        restart = {
            "action": "restart",
            "selector": {**everything, "task_states": ["FAILED"]},
            "include_tasks": True,
            "only_failed": True,
        }
        restarted = await bulk(sidecar, restart)
        assert results(restarted) == {sink: "done"} and restarted["connectors"][0]["status"] == 202, restarted
        await eventually(partial(status, worker, sink), in_state("RUNNING", ["RUNNING"]), what="the sink's task runs")
        await eventually(lambda: _exists(out_dir / "out.txt"), bool, what="the sink wrote its file")

        # delete them all: gone from the worker
        deleted = await bulk(sidecar, {"action": "delete", "selector": everything})
        assert results(deleted) == dict.fromkeys((a, b, c, sink), "done"), deleted
        for name in (a, b, c, sink):
            assert (await worker.get(f"/connectors/{name}")).status_code == 404
    finally:
        for name in (a, b, c, sink):
            await worker.delete(f"/connectors/{name}")


async def _exists(path: Path) -> bool:
    return path.exists()


async def test_access_rules_apply_per_connector_and_bad_input_is_a_400(
    cluster: Cluster,
    in_process: InProcess,
    worker: httpx.AsyncClient,
    unique: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    mine, theirs = f"bulkacl-{unique}-a", f"bulkacl-{unique}-b"
    credentials = f"token op operator plain:op-token; token team operator plain:team-token bulkacl-{unique}-a*"
    sidecar = await in_process(auth_enabled=True, auth_credentials=credentials)
    lines = tmp_path / "in.txt"
    lines.write_text("one\n")
    try:
        for name in (mine, theirs):
            await create(worker, name, {"connector.class": SOURCE, "file": str(lines), "topic": name})
        for name in (mine, theirs):
            await eventually(partial(status, worker, name), in_state("RUNNING"), what=f"{name} runs")
        team = {"authorization": "Bearer team-token"}
        await eventually(
            partial(bulk, sidecar, {"action": "pause", "selector": {"names": [mine]}, "dry_run": True}, **team),
            lambda r: results(r) == {mine: "selected"},
            what="the sidecar's view has the connectors",
        )

        # a token limited to its connectors: the other one named is its single request's 404; its own is paused
        paused = await bulk(sidecar, {"action": "pause", "selector": {"names": [mine, theirs]}}, **team)
        by_name = {i["name"]: i for i in paused["connectors"]}
        assert by_name[mine] == {"name": mine, "result": "done", "status": 202}
        assert by_name[theirs]["error"] == {"error_code": 404, "message": f"Connector {theirs} not found"}
        assert paused["counts"] == {"selected": 2, "done": 1, "refused": 1, "failed": 0}
        await eventually(partial(status, worker, mine), in_state("PAUSED"), what="its own connector paused")
        assert (await status(worker, theirs) or {})["connector"]["state"] == "RUNNING"
        # by pattern it never sees the other one (as its listing leaves it out)
        everything = await bulk(sidecar, {"action": "resume", "selector": {"pattern": f"bulkacl-{unique}-.*"}}, **team)
        assert results(everything) == {mine: "done"}, everything
        await eventually(partial(status, worker, mine), in_state("RUNNING"), what="its own connector resumed")

        # an operator may pause but not delete: each connector refused as its single DELETE would be
        refused = await bulk(
            sidecar,
            {"action": "delete", "selector": {"pattern": f"bulkacl-{unique}-.*"}},
            authorization="Bearer op-token",
        )
        assert {i["status"] for i in refused["connectors"]} == {403} and refused["counts"]["refused"] == 2
        assert refused["connectors"][0]["error"]["message"] == f"op (operator) may not DELETE /connectors/{mine}"
        for name in (mine, theirs):
            assert (await worker.get(f"/connectors/{name}")).status_code == 200

        # the audit: a line per connector, as its single request gets, besides the bulk request's own
        out = capsys.readouterr().out.splitlines()
        audited = [json.loads(x) for x in out if x.startswith("{") and '"audit"' in x]
        seen = [(e["who"], e["method"], e["path"], e["status"], e["refused"]) for e in audited]
        assert ("team", "PUT", f"/connectors/{mine}/pause", 202, False) in seen, seen
        assert ("op", "DELETE", f"/connectors/{theirs}", 403, True) in seen, seen
        assert ("op", "POST", "/_sidecar/bulk", 200, False) in seen, seen

        # bad input: Connect's error shape, a clear message
        op = {"authorization": "Bearer op-token"}
        bad = await sidecar.post(
            "/_sidecar/bulk", json={"action": "explode", "selector": {"pattern": ".*"}}, headers=op
        )
        assert bad.status_code == 400 and bad.json()["error_code"] == 400
        assert bad.json()["message"].startswith("Unknown action 'explode'")
        regex = await sidecar.post("/_sidecar/bulk", json={"action": "pause", "selector": {"pattern": "("}}, headers=op)
        assert regex.status_code == 400 and "is not a regular expression" in regex.json()["message"]
        assert (await sidecar.post("/_sidecar/bulk", json={"action": "pause", "selector": {}})).status_code == 401
    finally:
        for name in (mine, theirs):
            await worker.delete(f"/connectors/{name}")
