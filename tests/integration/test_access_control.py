"""Access control and audit in front of the real workers, on every cluster: what each role may do (and what
the connector then really does), a token limited to connector-name patterns, configs masked for viewers
with config provider references kept, and the audit log on stdout and in a Kafka topic read back from the
real broker."""

from __future__ import annotations

import base64
import json
import tempfile
from pathlib import Path
from typing import Any

import httpx
import pytest

from control_plane.cli import main as control_plane
from control_plane.codecs.config import ConnectorConfig, decode_config
from control_plane.rules.secrets import DEFAULT_SECRET_RULE, MASK
from tests.support.harness import InProcess, sidecar_with
from tests.support.kafka_topics import read_to_end
from tests.support.stack import Cluster, Stack
from tests.support.waiting import eventually

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
CREDENTIALS = (
    "token view viewer plain:view-token; token op operator plain:op-token; token adm admin plain:adm-token;"
    "token team viewer plain:team-token {pattern}"
)
VIEWER = {"authorization": "Bearer view-token"}
OPERATOR = {"authorization": "Bearer op-token"}
ADMIN = {"authorization": "Bearer adm-token"}
TEAM = {"authorization": "Bearer team-token"}
SECRETS = Path(tempfile.gettempdir()) / "control-plane-tests" / "acl-secrets.properties"
REFERENCE = f"${{file:{SECRETS}:db.password}}"  # the stack's workers resolve it (a FileConfigProvider each)


@pytest.fixture(autouse=True, scope="module")
def secrets_file() -> None:
    SECRETS.parent.mkdir(exist_ok=True)
    SECRETS.write_text("db.password=from-the-file\n")


def config_of(topic: str) -> dict[str, str]:
    return {
        "connector.class": FILE_SOURCE,
        "tasks.max": "1",
        "file": "/dev/null",
        "topic": topic,
        "connection.password": "hunter2",  # unknown to the plugin: kept, and a secret by its name
        "db.password": REFERENCE,
    }


async def connector_state(worker: httpx.AsyncClient, name: str) -> str | None:
    answer = await worker.get(f"/connectors/{name}/status")
    return str(answer.json()["connector"]["state"]) if answer.status_code == 200 else None


def audit_lines(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines() if line.startswith("{") and '"audit"' in line]


async def test_roles_patterns_masking_and_audit(
    cluster: Cluster,
    in_process: InProcess,
    worker: httpx.AsyncClient,
    unique: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    mine, other = f"acl-{unique}-a", f"acl-{unique}-b"
    sidecar = await in_process(auth_enabled=True, auth_credentials=CREDENTIALS.format(pattern=f"acl-{unique}-a*"))
    try:
        assert (await sidecar.get("/connectors")).status_code == 401
        # admin creates (on every cluster: both through the sidecar's own create route)
        for name in (mine, other):
            created = await sidecar.post("/connectors", json={"name": name, "config": config_of(name)}, headers=ADMIN)
            assert created.status_code == 201, created.text
        await eventually(lambda: connector_state(worker, mine), lambda s: s == "RUNNING", what=f"{mine} RUNNING")

        # the viewer reads, and may not pause: the connector stays RUNNING
        assert (await sidecar.get(f"/connectors/{mine}/status", headers=VIEWER)).status_code == 200
        refused = await sidecar.put(f"/connectors/{mine}/pause", headers=VIEWER)
        assert refused.status_code == 403 and refused.json()["error_code"] == 403
        assert await connector_state(worker, mine) == "RUNNING"
        # the operator pauses: the connector really is PAUSED; and resumes it
        assert (await sidecar.put(f"/connectors/{mine}/pause", headers=OPERATOR)).status_code == 202
        await eventually(lambda: connector_state(worker, mine), lambda s: s == "PAUSED", what=f"{mine} PAUSED")
        assert (await sidecar.put(f"/connectors/{mine}/resume", headers=OPERATOR)).status_code == 202
        assert (await sidecar.delete(f"/connectors/{other}", headers=OPERATOR)).status_code == 403
        assert await connector_state(worker, other) is not None

        # the viewer's config answers are masked, references kept; the admin's are the worker's
        masked = {**config_of(mine), "connection.password": MASK}
        assert (await sidecar.get(f"/connectors/{mine}/config", headers=VIEWER)).json() == {**masked, "name": mine}
        assert (await sidecar.get(f"/connectors/{mine}", headers=VIEWER)).json()["config"] == {**masked, "name": mine}
        tasks = await eventually(
            lambda: sidecar.get(f"/connectors/{mine}/tasks", headers=VIEWER),
            lambda r: r.status_code == 200 and len(r.json()) == 1,
            what="the task's config",
        )
        # the task configs are what the connector made of its config (2.8's FileStreamSource keeps fewer keys)
        direct_tasks = (await worker.get(f"/connectors/{mine}/tasks")).json()
        assert tasks.json() == DEFAULT_SECRET_RULE.mask_deep(direct_tasks)
        assert "hunter2" not in tasks.text and "from-the-file" not in tasks.text
        if "db.password" in direct_tasks[0]["config"]:
            assert tasks.json()[0]["config"]["db.password"] == REFERENCE
        info = (await sidecar.get("/connectors?expand=info", headers=VIEWER)).json()
        assert info[mine]["info"]["config"]["connection.password"] == MASK
        admin_config = (await sidecar.get(f"/connectors/{mine}/config", headers=ADMIN)).json()
        assert admin_config == (await worker.get(f"/connectors/{mine}/config")).json()
        assert admin_config["connection.password"] == "hunter2"

        # the limited token sees only its connector, in every listing
        assert mine in (await sidecar.get("/connectors", headers=VIEWER)).json()
        names = (await sidecar.get("/connectors", headers=TEAM)).json()
        assert mine in names and other not in names and all(n.startswith(f"acl-{unique}-a") for n in names)
        for query in ("?expand=status", "?expand=info", "?expand=status&expand=info"):
            expanded = (await sidecar.get(f"/connectors{query}", headers=TEAM)).json()
            assert mine in expanded and other not in expanded, query
        hidden = await sidecar.get(f"/connectors/{other}/status", headers=TEAM)
        assert (hidden.status_code, hidden.json()) == (
            404,
            {"error_code": 404, "message": f"Connector {other} not found"},
        )

        for name in (mine, other):
            assert (await sidecar.delete(f"/connectors/{name}", headers=ADMIN)).status_code == 204
        await eventually(lambda: connector_state(worker, other), lambda s: s is None, what=f"{other} deleted")
    finally:
        for name in (mine, other):
            await worker.delete(f"/connectors/{name}")

    seen = [(e["who"], e["method"], e["path"], e["status"]) for e in audit_lines(capsys.readouterr().out)]
    assert seen == [
        ("adm", "POST", "/connectors", 201),
        ("adm", "POST", "/connectors", 201),
        ("view", "PUT", f"/connectors/{mine}/pause", 403),
        ("op", "PUT", f"/connectors/{mine}/pause", 202),
        ("op", "PUT", f"/connectors/{mine}/resume", 202),
        ("op", "DELETE", f"/connectors/{other}", 403),
        ("adm", "DELETE", f"/connectors/{mine}", 204),
        ("adm", "DELETE", f"/connectors/{other}", 204),
    ]


async def test_audit_records_reach_the_kafka_topic(cluster: Cluster, stack: Stack, unique: str) -> None:
    """Every mutation's record is in the audit topic, read back from the real broker once the sidecar
    stopped (its queue flushed on shutdown)."""
    topic = f"audit-{unique}"
    missing = f"acl-{unique}-missing"
    async with sidecar_with(cluster, audit_topic=topic) as served:
        answer = await served.client.put(f"/connectors/{missing}/pause")
        assert answer.status_code == 404
        refused = await served.client.request("PURGE", f"/connectors/{missing}")
        purge_status = refused.status_code
    records = (await read_to_end(stack.bootstrap, topic)).records
    entries = [json.loads(r.value) for r in records if r.value is not None]
    assert [(e["method"], e["path"], e["status"], e["who"]) for e in entries] == [
        ("PUT", f"/connectors/{missing}/pause", 404, "anonymous"),
        ("PURGE", f"/connectors/{missing}", purge_status, "anonymous"),
    ]
    assert [r.key for r in records] == [missing.encode(), missing.encode()]


def test_an_export_masks_the_secrets_the_worker_wrote(cluster: Cluster, unique: str, tmp_path: Path) -> None:
    """``control-plane export`` of the real config topic: the connector's secret masked, the reference
    kept, the other keys as the worker wrote them."""
    name = f"acl-{unique}-export"
    snapshot = tmp_path / "snapshot.jsonl"
    with httpx.Client(base_url=cluster.connect_url, timeout=60) as worker:
        assert worker.put(f"/connectors/{name}/config", json=config_of(name)).status_code == 201
        try:
            assert control_plane(["export", "--worker-properties", cluster.properties, "--out", str(snapshot)]) == 0
        finally:
            worker.delete(f"/connectors/{name}")
    configs = []
    for line in snapshot.read_text().splitlines():
        row = json.loads(line)
        if row["key"] and base64.b64decode(row["key"]) == f"connector-{name}".encode() and row["value"]:
            configs.append(decode_config(f"connector-{name}".encode(), base64.b64decode(row["value"])))
    assert configs and all(isinstance(c, ConnectorConfig) for c in configs)
    properties = [dict(c.properties) for c in configs if isinstance(c, ConnectorConfig)]
    assert properties[0] == {**config_of(name), "name": name, "connection.password": MASK}
    values = [json.loads(line)["value"] for line in snapshot.read_text().splitlines()]
    assert not any(b"hunter2" in base64.b64decode(v) for v in values if v)  # task configs masked too
