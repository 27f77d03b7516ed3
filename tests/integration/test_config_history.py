"""Config history against the real workers, on every release of the stack, with two sidecars of the code
under test in front of each (authentication on, a principal per sidecar): changes made through either
sidecar and straight to the worker are recorded once, in order, with who made them; a secret never
reaches the sidecars' topic in clear, nor an export as a digest; a diff; a rollback is a config write the
connector then runs, and refused with the secret's name until the caller supplies it. Without a history
key: no digest of a secret anywhere, whether it changed still recorded, across a change of the recording
sidecar."""

from __future__ import annotations

import asyncio
import base64
import json
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
import structlog

from control_plane.cli import main as control_plane
from control_plane.codecs.config_history import HistoryEntry, decode_entry
from tests.support.harness import RunningSidecar, sidecar_with
from tests.support.kafka_topics import read_to_end
from tests.support.stack import Cluster
from tests.support.waiting import eventually

SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"
CREDENTIALS = "token alice admin plain:alice-token; token bob admin plain:bob-token; token view viewer plain:view"
ALICE = {"authorization": "Bearer alice-token"}
BOB = {"authorization": "Bearer bob-token"}
VIEWER = {"authorization": "Bearer view"}


async def history(sidecar: RunningSidecar, name: str) -> dict[str, Any]:
    answer = await sidecar.client.get(f"/_sidecar/connectors/{name}/history", headers=VIEWER)
    return dict(answer.json()) if answer.status_code == 200 else {"versions": []}


async def task_topic(worker: httpx.AsyncClient, name: str) -> str | None:
    answer = await worker.get(f"/connectors/{name}/tasks")
    tasks = answer.json() if answer.status_code == 200 else []
    return tasks[0]["config"].get("topic") if tasks else None


async def test_changes_from_everywhere_are_recorded_once_with_who_and_a_rollback_is_run(
    cluster: Cluster, tmp_path: Path
) -> None:
    unique = uuid.uuid4().hex[:6]
    name = f"history-{unique}"
    sidecars_topic = f"{cluster.name}.history-{unique}.control-plane"
    settings: dict[str, Any] = {
        "sidecars_topic": sidecars_topic,
        "history_check_s": 0.1,
        "auth_enabled": True,
        "auth_credentials": CREDENTIALS,
        "history_secret_key": "test-key",
    }
    source = tmp_path / "in.txt"
    source.write_text("")
    v1_config = {
        "connector.class": SOURCE,
        "tasks.max": "1",
        "file": str(source),
        "topic": f"{name}-a",
        "source.password": "first-s3cret",
    }
    async with (
        sidecar_with(cluster, **settings) as one,
        sidecar_with(cluster, **settings) as two,
        httpx.AsyncClient(base_url=cluster.connect_url, timeout=30) as worker,
    ):
        try:
            created = await one.client.put(f"/connectors/{name}/config", json=v1_config, headers=ALICE)
            assert created.status_code == 201, created.text
            patch = {"topic": f"{name}-b", "source.password": "second-s3cret"}
            patched = await two.client.patch(f"/connectors/{name}/config", json=patch, headers=BOB)
            assert patched.status_code == 200, patched.text
            same = await two.client.put(f"/connectors/{name}/config", json={**v1_config, **patch}, headers=BOB)
            assert same.status_code == 200, same.text  # the same config again: no version
            assert (await worker.put(f"/connectors/{name}/pause")).status_code == 202  # straight to the worker
            assert (await worker.put(f"/connectors/{name}/resume")).status_code == 202

            recorded = await eventually(
                lambda: history(one, name), lambda h: len(h["versions"]) == 4, what="four versions recorded"
            )
            versions = recorded["versions"]
            assert [v["change"] for v in versions] == ["state", "state", "updated", "created"]
            assert [(v["who"], v["state"]) for v in versions] == [
                (None, "STARTED"),
                (None, "PAUSED"),
                ("bob", "STARTED"),
                ("alice", "STARTED"),
            ]
            assert versions[3]["via_sidecar"] != versions[2]["via_sidecar"]  # alice through one, bob through two
            assert versions[2]["changes"] == [
                {"name": "source.password", "op": "changed", "before": "[hidden]", "after": "[hidden]", "secret": True},
                {"name": "topic", "op": "changed", "before": f"{name}-a", "after": f"{name}-b"},
            ]
            await eventually(lambda: history(two, name), lambda h: h == recorded, what="the other sidecar the same")
            v1, v2 = versions[3]["version"], versions[2]["version"]

            # recorded once, by one sidecar, and no secret in clear in the sidecars' topic
            log = await read_to_end(cluster.worker_property("bootstrap.servers"), sidecars_topic)
            ours = [r for r in log.records if r.key is not None and r.key.endswith(f"-{name}".encode())]
            entries = [r for r in ours if r.key is not None and r.key.startswith(b"config-history-")]
            assert len(entries) == 4, [r.key for r in entries]
            assert not any(b"s3cret" in (r.value or b"") for r in log.records)
            assert all(b"hmac-sha256:" in (r.value or b"") for r in entries if b"source.password" in (r.value or b""))

            diff = await one.client.get(f"/_sidecar/connectors/{name}/history/diff?from={v1}", headers=VIEWER)
            assert diff.status_code == 200, diff.text
            assert [c["name"] for c in diff.json()["changes"]] == ["source.password", "topic"]
            one_version = await one.client.get(f"/_sidecar/connectors/{name}/history/{v1}", headers=VIEWER)
            assert one_version.json()["config"] == {**v1_config, "name": name, "source.password": "[hidden]"}

            # a rollback: a viewer may not; without the secret it cannot be restored; with it, it is run
            rollback = f"/_sidecar/connectors/{name}/history/{v1}/rollback"
            assert (await one.client.post(rollback, headers=VIEWER)).status_code == 403
            refused = await one.client.post(rollback, headers=BOB)
            assert refused.status_code == 400 and "source.password" in refused.json()["message"], refused.text
            done = await one.client.post(rollback, json={"secrets": {"source.password": "first-s3cret"}}, headers=BOB)
            assert done.status_code == 200, done.text
            assert done.json()["config"]["topic"] == f"{name}-a"
            # (a 3.4.1 worker may answer 409, its config momentarily stale, right after the write: asked again)
            config = await eventually(
                lambda: worker.get(f"/connectors/{name}/config"), lambda r: r.status_code != 409, what="the config"
            )
            assert config.json() == {**v1_config, "name": name}
            await eventually(lambda: task_topic(worker, name), lambda t: t == f"{name}-a", what="the task runs v1")
            back = await eventually(
                lambda: history(two, name), lambda h: len(h["versions"]) == 5, what="the rollback recorded"
            )
            newest = back["versions"][0]
            assert (newest["change"], newest["who"]) == ("updated", "bob")
            restore = await two.client.get(f"/_sidecar/connectors/{name}/history/diff?from={v1}", headers=VIEWER)
            assert restore.json()["changes"] == []  # the password's digest is v1's again
            assert v2 > v1
            # an export carries which versions held the same password, and no digest of it
            snapshot = await exported(cluster, sidecars_topic, tmp_path)
            assert b"hmac" not in snapshot_bytes(snapshot) and b"s3cret" not in snapshot_bytes(snapshot)
            marks = [e.secrets.get("source.password") for e in snapshot_entries(snapshot, name)]
            assert marks == ["value-1", "value-2", "value-2", "value-2", "value-1"]
        finally:
            await worker.delete(f"/connectors/{name}")


async def exported(cluster: Cluster, sidecars_topic: str, tmp_path: Path) -> Path:
    """``control-plane export`` of the cluster and the sidecars' topic, as an operator runs it."""
    out = tmp_path / "snapshot.jsonl"
    args = ["export", "--worker-properties", cluster.properties, "--out", str(out)]
    with pytest.MonkeyPatch.context() as env:
        env.setenv("CONTROL_PLANE_SIDECARS_TOPIC", sidecars_topic)
        assert await asyncio.to_thread(control_plane, args) == 0
    return out


def snapshot_bytes(snapshot: Path) -> bytes:
    rows = [json.loads(line) for line in snapshot.read_text().splitlines()]
    return b"\n".join(base64.b64decode(row[field]) for row in rows for field in ("key", "value") if row[field])


def snapshot_entries(snapshot: Path, connector: str) -> list[HistoryEntry]:
    """The connector's history entries in the snapshot, oldest first."""
    found = []
    for line in snapshot.read_text().splitlines():
        row = json.loads(line)
        key, value = (base64.b64decode(row[f]) if row[f] else None for f in ("key", "value"))
        entry = decode_entry(key, value)
        if isinstance(entry, HistoryEntry) and entry.connector == connector:
            found.append(entry)
    return sorted(found, key=lambda e: e.offset)


async def test_without_a_key_no_digest_of_a_secret_and_still_whether_it_changed(
    cluster: Cluster, tmp_path: Path
) -> None:
    unique = uuid.uuid4().hex[:6]
    name = f"history-nokey-{unique}"
    sidecars_topic = f"{cluster.name}.history-{unique}.control-plane"
    settings: dict[str, Any] = {"sidecars_topic": sidecars_topic, "history_check_s": 0.1}
    source = tmp_path / "in.txt"
    source.write_text("")
    config = {"connector.class": SOURCE, "tasks.max": "1", "file": str(source), "topic": f"{name}-a"}
    config["source.password"] = "first-s3cret"
    async with httpx.AsyncClient(base_url=cluster.connect_url, timeout=30) as worker:
        try:
            with structlog.testing.capture_logs() as logs:  # (the lines it logs go to the list only)
                async with sidecar_with(cluster, **settings) as one:
                    assert (await one.client.put(f"/connectors/{name}/config", json=config)).status_code == 201
                    config["topic"] = f"{name}-b"  # the password the same
                    assert (await one.client.put(f"/connectors/{name}/config", json=config)).status_code == 200
                    config["source.password"] = "second-s3cret"
                    assert (await one.client.put(f"/connectors/{name}/config", json=config)).status_code == 200
                    await eventually(lambda: history(one, name), lambda h: len(h["versions"]) == 3, what="recorded")
            warned = [e["event"] for e in logs if e["log_level"] == "warning"]
            assert any(w.startswith("HISTORY_SECRET_KEY is not set: the history keeps no digest") for w in warned)
            # another sidecar records from now on: it compares with the config topic's record of the newest
            async with sidecar_with(cluster, **settings) as two:
                assert (await worker.put(f"/connectors/{name}/pause")).status_code == 202
                recorded = await eventually(
                    lambda: history(two, name), lambda h: len(h["versions"]) == 4, what="the pause recorded"
                )
                versions = recorded["versions"]
                assert [v["change"] for v in versions] == ["state", "updated", "updated", "created"]
                assert [[c["name"] for c in v["changes"]] for v in versions[:3]] == [
                    [],
                    ["source.password"],
                    ["topic"],
                ]
                v1 = versions[3]["version"]
                refused = await two.client.post(f"/_sidecar/connectors/{name}/history/{v1}/rollback")
                assert refused.status_code == 400 and "source.password" in refused.json()["message"], refused.text
            log = await read_to_end(cluster.worker_property("bootstrap.servers"), sidecars_topic)
            written = b"\n".join(r.value or b"" for r in log.records)
            assert b"hmac" not in written and b"s3cret" not in written and b"changed-at:" in written
            snapshot = await exported(cluster, sidecars_topic, tmp_path)
            assert b"hmac" not in snapshot_bytes(snapshot) and b"changed-at:" not in snapshot_bytes(snapshot)
            marks = [e.secrets.get("source.password") for e in snapshot_entries(snapshot, name)]
            assert marks == ["value-1", "value-1", "value-2", "value-2"]
        finally:
            await worker.delete(f"/connectors/{name}")


async def topic_users(sidecar: RunningSidecar, topic: str) -> dict[str, Any]:
    answer = await sidecar.client.get(f"/_sidecar/topics/{topic}/connectors")
    return dict(answer.json()) if answer.status_code == 200 else {"earlier_configs": []}


async def test_a_topic_names_the_earlier_config_of_a_sink_that_no_longer_reads_it(
    cluster: Cluster, tmp_path: Path
) -> None:
    unique = uuid.uuid4().hex[:6]
    name, old, new = f"history-sink-{unique}", f"history-old-{unique}", f"history-new-{unique}"
    settings: dict[str, Any] = {
        "sidecars_topic": f"{cluster.name}.history-{unique}.control-plane",
        "history_check_s": 0.1,
    }
    config = {"connector.class": SINK, "tasks.max": "1", "file": str(tmp_path / "out.txt"), "topics": old}
    async with (
        sidecar_with(cluster, **settings) as one,
        sidecar_with(cluster, **settings) as two,
        httpx.AsyncClient(base_url=cluster.connect_url, timeout=30) as worker,
    ):
        try:  # created through one sidecar, moved through the other
            assert (await one.client.put(f"/connectors/{name}/config", json=config)).status_code == 201
            moved = await two.client.put(f"/connectors/{name}/config", json={**config, "topics": new})
            assert moved.status_code == 200, moved.text
            recorded = await eventually(
                lambda: history(one, name), lambda h: len(h["versions"]) == 2, what="two versions recorded"
            )
            created, updated = recorded["versions"][1], recorded["versions"][0]
            users = await eventually(
                lambda: topic_users(one, old), lambda u: u["earlier_configs"], what="the earlier config named"
            )
            assert users["earlier_configs"] == [
                {
                    "connector": name,
                    "version": created["version"],
                    "via": "topics",
                    "named_at_ms": created["timestamp_ms"],
                    "until_ms": updated["timestamp_ms"],
                    "deleted": False,
                }
            ]
            await eventually(lambda: topic_users(two, old), lambda u: u == users, what="the other sidecar the same")
            assert (await topic_users(two, new))["earlier_configs"] == []  # its current config names it
            await eventually(lambda: task_topics(worker, name), lambda t: t == new, what="the task reads the new topic")
        finally:
            await worker.delete(f"/connectors/{name}")


async def task_topics(worker: httpx.AsyncClient, name: str) -> str | None:
    answer = await worker.get(f"/connectors/{name}/tasks")
    tasks = answer.json() if answer.status_code == 200 else []
    return tasks[0]["config"].get("topics") if tasks else None
