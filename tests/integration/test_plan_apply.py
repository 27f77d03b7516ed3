"""Plan and apply against the real workers, on every release of the stack, through the CLI
(``control-plane plan`` / ``apply``) and a sidecar of the code under test: files of connectors with a
secret, a config-provider reference and numbers are created, a connector no file names is pruned (within
the pattern asked), the connectors then run, and a plan made again shows nothing to do; a plan the cluster
changed since is refused and changes nothing. Fingerprints are keyed: a plan made through one sidecar
applies through another of the same key, is refused once a secret alone changed, and holds no unkeyed
digest of a config."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sys
import uuid
import warnings
from asyncio.subprocess import PIPE
from functools import partial
from pathlib import Path
from typing import Any

import httpx

from tests.support.deploy_local import files_under, local_stack
from tests.support.harness import sidecar_with
from tests.support.kafka_topics import read_to_end
from tests.support.stack import Cluster, Stack
from tests.support.waiting import eventually

SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
NEWEST = local_stack.NEW_VERSION


async def cli(*args: str) -> tuple[int, str, str]:
    """``control-plane`` in a process of its own, as an operator runs it (this loop serves the sidecar it asks)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "control_plane", *args, stdout=PIPE, stderr=PIPE, env={**os.environ, "NO_COLOR": "1"}
    )
    out, err = await proc.communicate()
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def state(worker: httpx.AsyncClient, name: str) -> str | None:
    answer = await worker.get(f"/connectors/{name}/status")
    return answer.json()["connector"]["state"] if answer.status_code == 200 else None


async def test_plan_apply_and_plan_again_shows_nothing_and_a_stale_plan_is_refused(
    cluster: Cluster, tmp_path: Path
) -> None:
    u = uuid.uuid4().hex[:6]
    a, b, old = f"plan-{u}-a", f"plan-{u}-b", f"plan-{u}-old"
    lines, secrets = tmp_path / "in.txt", tmp_path / "secrets.properties"
    lines.write_text("one\ntwo\n")
    secrets.write_text("pw=from-the-provider\n")
    files = tmp_path / "connectors"
    files.mkdir()
    (files / "a.yaml").write_text(
        f"name: {a}\nconfig:\n  connector.class: {SOURCE}\n  tasks.max: 1\n  file: {lines}\n  topic: {a}\n"
        f"  db.password: s3cret\n  ssl.key.password: '${{file:{secrets}:pw}}'\n  batch.size: 2000\n"
    )
    (files / "b.json").write_text(json.dumps({"name": b, "connector.class": SOURCE, "file": str(lines), "topic": b}))
    plan_file = tmp_path / "plan.json"
    async with (
        sidecar_with(cluster, sidecars_topic=f"{cluster.name}.plan-{u}.control-plane") as sidecar,
        httpx.AsyncClient(base_url=cluster.connect_url, timeout=30) as worker,
    ):
        url = ("--url", sidecar.url)
        try:
            legacy = {"connector.class": SOURCE, "file": str(lines), "topic": old}
            assert (await worker.put(f"/connectors/{old}/config", json=legacy)).status_code == 201
            prune = ("--prune", "--prune-matching", f"plan-{u}-.*")  # only this test's: the cluster is shared
            code, shown, err = await cli("plan", "-f", str(files), *url, *prune, "--out", str(plan_file))
            assert code == 0, err
            assert f"+ {a} (create)" in shown and f"- {old} (delete)" in shown, shown
            assert "    + db.password = [hidden]" in shown and "s3cret" not in shown
            assert shown.splitlines()[-1] == "Plan: 2 to create, 0 to update, 1 to delete, 0 unchanged."
            kept: dict[str, Any] = json.loads(plan_file.read_text())
            (step_a,) = [c for c in kept["connectors"] if c["name"] == a]
            assert isinstance(step_a["topics"]["reason"], str)  # KIP-158: what the worker would create, and why
            assert "connector.class" in [p["class_key"] for p in step_a["plugins"]["plugins"]]  # KIP-891
            code, applied, err = await cli("apply", str(plan_file), *url)
            assert (code, applied.splitlines()[-1]) == (0, "Applied: 3 change(s)."), err

            # what the connectors do next: they run and read their file; the pruned one is gone
            for name in (a, b):
                await eventually(partial(state, worker, name), lambda s: s == "RUNNING", what=f"{name} RUNNING")
            bootstrap = cluster.worker_property("bootstrap.servers")
            await eventually(lambda: read_to_end(bootstrap, a), lambda t: len(t.records) == 2, what="a's records")
            assert (await worker.get(f"/connectors/{old}")).status_code == 404
            stored = (
                await eventually(
                    lambda: worker.get(f"/connectors/{a}/config"), lambda r: r.status_code != 409, what="a config"
                )
            ).json()
            assert stored["tasks.max"] == "1" and stored["ssl.key.password"] == f"${{file:{secrets}:pw}}"

            # no false drift: secrets, references, numbers, the name the worker adds
            code, again, err = await cli("plan", "-f", str(files), *url, *prune, "--output", "json")
            assert code == 0, err
            plan: dict[str, Any] = json.loads(again)
            assert plan["summary"] == {"create": 0, "update": 0, "delete": 0, "unchanged": 2}, plan

            # a stale plan (over HTTP, as the CLI sends it): made, then the connector changed straight on the
            # worker; apply refuses it and changes nothing
            changed = {"name": a, "config": {**stored, "batch.size": "10"}}
            made = await sidecar.client.post(
                "/_sidecar/plan", json={"documents": [{"source": "a", "document": changed}]}
            )
            assert made.status_code == 200 and made.json()["summary"]["update"] == 1, made.text
            theirs = {**stored, "batch.size": "99"}
            assert (await worker.put(f"/connectors/{a}/config", json=theirs)).status_code == 200
            await eventually(
                lambda: sidecar.client.get(f"/connectors/{a}/config"),
                lambda r: r.json().get("batch.size") == "99",
                what="the sidecar's view has their change",
            )
            refused = await sidecar.client.post("/_sidecar/apply", json=made.json())
            assert refused.status_code == 409 and "changed since the plan" in refused.json()["message"], refused.text
            # (a 3.4.1 worker may answer 409 while its group rebalances after the PUT: asked again)
            after = await eventually(
                lambda: worker.get(f"/connectors/{a}/config"), lambda r: r.status_code != 409, what="a config"
            )
            assert after.json()["batch.size"] == "99"
        finally:
            for name in (a, b, old):
                await worker.delete(f"/connectors/{name}")


# what a typed reading of a file would change (3.10 to 3.1, on to true, 0755 to 493, 1.50 to 1.5; 1e-7 was
# refused): the worker must hold each exactly as the file writes it
EXACT = {
    "pin.version": "3.10",
    "flag.on": "on",
    "flag.off": "off",
    "file.mode": "0755",
    "ratio": "1.50",
    "tiny": "1e-7",
}


async def test_a_file_s_values_reach_the_worker_as_written_and_a_plan_again_shows_nothing(
    cluster: Cluster, tmp_path: Path
) -> None:
    u = uuid.uuid4().hex[:6]
    from_yaml, from_json = f"exact-{u}-yaml", f"exact-{u}-json"
    lines = tmp_path / "in.txt"
    lines.write_text("one\n")
    files = tmp_path / "connectors"
    files.mkdir()
    (files / "y.yaml").write_text(
        f"name: {from_yaml}\nconfig:\n  connector.class: {SOURCE}\n  file: {lines}\n  topic: {from_yaml}\n"
        "  pin.version: 3.10\n  flag.on: on\n  flag.off: off\n  file.mode: 0755\n  ratio: 1.50\n  tiny: 1e-7\n"
    )
    (files / "j.json").write_text(  # JSON's numbers as written; on, off and 0755 are strings in JSON
        f'{{"name": "{from_json}", "config": {{"connector.class": "{SOURCE}", "file": "{lines}", '
        f'"topic": "{from_json}", "pin.version": 3.10, "flag.on": "on", "flag.off": "off", "file.mode": "0755", '
        '"ratio": 1.50, "tiny": 1e-7, "thousand": 1E+3, "minus.zero": -0, "enabled": true}}'
    )
    file_text = {
        from_yaml: EXACT,
        from_json: {**EXACT, "thousand": "1E+3", "minus.zero": "-0", "enabled": "true"},
    }
    plan_file = tmp_path / "plan.json"
    async with (
        sidecar_with(cluster, sidecars_topic=f"{cluster.name}.exact-{u}.control-plane") as sidecar,
        httpx.AsyncClient(base_url=cluster.connect_url, timeout=30) as worker,
    ):
        url = ("--url", sidecar.url)
        try:
            code, shown, err = await cli("plan", "-f", str(files), *url, "--out", str(plan_file))
            assert code == 0, err
            assert shown.splitlines()[-1] == "Plan: 2 to create, 0 to update, 0 to delete, 0 unchanged.", shown
            assert "    + pin.version = 3.10" in shown and "    + tiny = 1e-7" in shown, shown
            code, applied, err = await cli("apply", str(plan_file), *url)
            assert (code, applied.splitlines()[-1]) == (0, "Applied: 2 change(s)."), err

            for name, values in file_text.items():  # the worker's own answer: each value the file's text
                stored = (
                    await eventually(
                        lambda n=name: worker.get(f"/connectors/{n}/config"),  # type: ignore[misc]
                        lambda r: r.status_code != 409,
                        what=f"{name}'s config",
                    )
                ).json()
                assert {k: stored.get(k) for k in values} == values, stored

            code, again, err = await cli("plan", "-f", str(files), *url, "--output", "json")
            assert code == 0, err
            plan: dict[str, Any] = json.loads(again)
            assert plan["summary"] == {"create": 0, "update": 0, "delete": 0, "unchanged": 2}, plan
        finally:
            for name in file_text:
                await worker.delete(f"/connectors/{name}")


async def test_a_keyed_plan_applies_through_another_sidecar_and_sees_a_secret_changed_meanwhile(
    cluster: Cluster, tmp_path: Path
) -> None:
    u = uuid.uuid4().hex[:6]
    name = f"plan-{u}-keyed"
    lines = tmp_path / "in.txt"
    lines.write_text("")
    settings: dict[str, Any] = {"sidecars_topic": f"{cluster.name}.plan-{u}.control-plane", "history_secret_key": "k"}
    config = {"connector.class": SOURCE, "tasks.max": "1", "file": str(lines), "topic": name, "db.password": "s3cret"}
    async with (
        sidecar_with(cluster, **settings) as one,
        sidecar_with(cluster, **settings) as two,
        sidecar_with(cluster, sidecars_topic=settings["sidecars_topic"]) as keyless,
        httpx.AsyncClient(base_url=cluster.connect_url, timeout=30) as worker,
    ):
        try:
            assert (await worker.put(f"/connectors/{name}/config", json=config)).status_code == 201
            stored = (
                await eventually(
                    lambda: worker.get(f"/connectors/{name}/config"), lambda r: r.status_code == 200, what="config"
                )
            ).json()
            wanted = {"documents": [{"source": "a", "document": {"name": name, "config": {**stored, "tasks.max": 2}}}]}

            async def plan_through(sidecar: Any) -> dict[str, Any]:
                await eventually(
                    lambda: sidecar.client.get(f"/connectors/{name}/config"),
                    lambda r: r.status_code == 200 and r.json() == stored,
                    what="the sidecar's view has the config",
                )
                made = await sidecar.client.post("/_sidecar/plan", json=wanted)
                assert made.status_code == 200 and made.json()["summary"]["update"] == 1, made.text
                return dict(made.json())

            plan = await plan_through(one)
            unkeyed = hashlib.sha256(json.dumps(stored, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
            assert unkeyed not in json.dumps(plan) and plan["connectors"][0]["seen"].startswith("hmac-sha256:")
            # another key (none: the process's own) refuses it; nothing is applied
            refused = await keyless.client.post("/_sidecar/apply", json=plan)
            assert refused.status_code == 409, refused.text
            # only the password changed, straight on the worker: the plan is stale
            stored = {**stored, "db.password": "rotated"}
            assert (await worker.put(f"/connectors/{name}/config", json=stored)).status_code == 200
            await plan_through(two)  # (the other sidecar's view has the change)
            refused = await two.client.post("/_sidecar/apply", json=plan)
            assert refused.status_code == 409 and "changed since the plan" in refused.json()["message"], refused.text
            # made again through one (the file's password against theirs: a secret's change, shown as one),
            # applied through two
            again = await plan_through(one)
            assert [c["name"] for c in again["connectors"][0]["changes"] if c.get("secret")] == ["db.password"]
            applied = await two.client.post("/_sidecar/apply", json=again)
            assert applied.status_code == 200 and applied.json()["applied"] == [{"name": name, "action": "update"}]
            after = await eventually(
                lambda: worker.get(f"/connectors/{name}/config"), lambda r: r.status_code != 409, what="the config"
            )
            assert (after.json()["tasks.max"], after.json()["db.password"]) == ("2", "s3cret")
        finally:
            await worker.delete(f"/connectors/{name}")


async def churn(worker: httpx.AsyncClient, prefix: str, stop: asyncio.Event) -> int:
    """A connector created and deleted straight on the worker, again and again, until ``stop``: each change
    makes the worker group rebalance under the apply. How many changes the worker took."""
    config = {"connector.class": SOURCE, "file": "/dev/null", "topic": f"{prefix}-t"}
    taken, i = 0, 0
    while not stop.is_set():
        name = f"{prefix}-{i % 2}"
        i += 1
        made = await worker.put(f"/connectors/{name}/config", json=config)
        gone = await worker.delete(f"/connectors/{name}")
        taken += (made.status_code < 300) + (gone.status_code < 300)
        await asyncio.sleep(0)  # the next change at once: the group is kept rebalancing
    return taken


async def gone(worker: httpx.AsyncClient, name: str) -> None:
    await eventually(
        lambda: worker.delete(f"/connectors/{name}"), lambda r: r.status_code != 409, what=f"{name} deleted"
    )


async def test_many_connectors_applied_together_while_the_worker_group_rebalances(
    cluster: Cluster, tmp_path: Path
) -> None:
    """40 connectors created by one apply, 8 at a time, while another connector is created and deleted
    straight on the worker all along: no step fails (the rebalance answers are retried), every connector
    then runs, a plan again lists the 40 as unchanged on one line, and an apply of the prune deletes them."""
    u = uuid.uuid4().hex[:6]
    names = [f"many-{u}-{i:02d}" for i in range(40)]
    lines = tmp_path / "in.txt"
    lines.write_text("one\n")
    files = tmp_path / "connectors"
    files.mkdir()
    (files / "all.json").write_text(
        json.dumps([{"name": n, "config": {"connector.class": SOURCE, "file": str(lines), "topic": n}} for n in names])
    )
    plan_file, prune_file = tmp_path / "plan.json", tmp_path / "prune.json"
    stop = asyncio.Event()
    async with (
        sidecar_with(cluster, sidecars_topic=f"{cluster.name}.many-{u}.control-plane") as sidecar,
        httpx.AsyncClient(base_url=cluster.connect_url, timeout=60) as worker,
    ):
        url = ("--url", sidecar.url)
        try:
            code, _, err = await cli("plan", "-f", str(files), *url, "--out", str(plan_file))
            assert code == 0, err
            churning = asyncio.create_task(churn(worker, f"churn-{u}", stop))
            try:
                code, out, err = await cli("apply", str(plan_file), *url, "--concurrency", "8", "--output", "json")
            finally:
                stop.set()
                changes = await churning
            assert out, err  # an apply that ran prints its lists; a refusal only its message
            applied: dict[str, Any] = json.loads(out)
            assert (code, applied["failed"], applied["not_tried"]) == (0, [], []), (out, err)
            assert sorted(d["name"] for d in applied["applied"]) == names
            assert changes > 0  # the worker group did rebalance under the apply

            # what the connectors do next: each runs
            def running(r: httpx.Response) -> bool:
                listed = r.json() if r.status_code == 200 else {}
                return all(
                    listed.get(n, {}).get("status", {}).get("connector", {}).get("state") == "RUNNING" for n in names
                )

            await eventually(
                lambda: worker.get("/connectors", params={"expand": "status"}),
                running,
                timeout_s=120,
                what="all RUNNING",
            )

            # a plan again: the 40 unchanged, on one line; then a plan of none of them, pruned, applied
            code, shown, err = await cli("plan", "-f", str(files), *url)
            assert code == 0, err
            assert shown.splitlines() == [
                f"= 40 unchanged: {', '.join(names)}",
                "Plan: 0 to create, 0 to update, 0 to delete, 40 unchanged.",
            ], shown
            (tmp_path / "none").mkdir()
            (tmp_path / "none" / "empty.json").write_text("[]")  # a file of no connectors
            prune = ("--prune", "--prune-matching", f"many-{u}-.*")
            code, _, err = await cli("plan", "-f", str(tmp_path / "none"), *url, *prune, "--out", str(prune_file))
            assert code == 0, err
            code, out, err = await cli("apply", str(prune_file), *url, "--concurrency", "8")
            assert (code, out.splitlines()[-1]) == (0, "Applied: 40 change(s)."), (out, err)
            listed = (await eventually(lambda: worker.get("/connectors"), lambda r: r.status_code == 200)).json()
            assert not [n for n in listed if n.startswith(f"many-{u}-")]
        finally:
            stop.set()
            listed = (await eventually(lambda: worker.get("/connectors"), lambda r: r.status_code == 200)).json()
            for name in [n for n in listed if n.startswith((f"many-{u}-", f"churn-{u}-"))]:
                await gone(worker, name)


async def test_an_apply_rides_out_a_worker_leaving_its_group(stack: Stack, tmp_path: Path) -> None:
    """A cluster of two workers of the newest release of the test's own; 40 connectors applied through a
    sidecar in front of the first while the second leaves the group (stopped): the group rebalances, the
    leader may change, and no step fails; then every connector runs on the worker left."""
    u = uuid.uuid4().hex[:6]
    names = [f"leave-{u}-{i:02d}" for i in range(40)]
    lines = tmp_path / "in.txt"
    lines.write_text("one\n")
    files = tmp_path / "connectors"
    files.mkdir()
    (files / "all.json").write_text(
        json.dumps([{"name": n, "config": {"connector.class": SOURCE, "file": str(lines), "topic": n}} for n in names])
    )
    plan_file = tmp_path / "plan.json"
    discovery = local_stack.quick_discovery(NEWEST)
    group = f"leave-{u}"
    started = []
    try:
        with files_under(tmp_path), warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)  # the Popen object goes, the worker runs on
            for i in range(2):
                started.append(local_stack.start_connect(f"{group}-{i}", NEWEST, stack.bootstrap, group, discovery))
        for proc in started:
            local_stack.wait_until(proc, partial(local_stack.connect_ready, proc.url), "answer on its REST port")
        first, second = started
        cluster = Cluster(group, NEWEST, first.url, first.extra["properties"])
        async with sidecar_with(cluster, sidecars_topic=f"{group}.control-plane") as sidecar:
            url = ("--url", sidecar.url)
            code, _, err = await cli("plan", "-f", str(files), *url, "--out", str(plan_file))
            assert code == 0, err
            applying = asyncio.create_task(cli("apply", str(plan_file), *url, "--concurrency", "8", "--output", "json"))
            await asyncio.to_thread(local_stack.stop, [second])  # leaves the group while the apply runs
            code, out, err = await applying
            assert out, err
            applied: dict[str, Any] = json.loads(out)
            assert (code, applied["failed"], applied["not_tried"]) == (0, [], []), (out, err)
            assert sorted(d["name"] for d in applied["applied"]) == names

            async with httpx.AsyncClient(base_url=first.url, timeout=60) as worker:

                def running(r: httpx.Response) -> bool:
                    listed = r.json() if r.status_code == 200 else {}
                    states = [listed.get(n, {}).get("status", {}).get("connector", {}).get("state") for n in names]
                    return states == ["RUNNING"] * len(names)

                await eventually(
                    lambda: worker.get("/connectors", params={"expand": "status"}),
                    running,
                    timeout_s=180,
                    what="all RUNNING on the worker left",
                )
    finally:
        local_stack.stop(started)
