"""Several sidecars of the code under test in front of one cluster, as the Kubernetes layouts run them
(a sidecar per worker pod, or replicas behind one Service): concurrent writes of one connector spread
across them hold, on every Connect version. Connect 4.3.1 itself, sent the same PATCHes directly, keeps
only about half (DistributedHerder.patchConnectorConfig reads the config it patches before validating,
and writes after): the sidecars serialize them under the connector's fence. A sidecar that dies holding a
fence, even killed in the middle of a write, holds up the others' writes of that connector for its lease
only, and leaves what it acknowledged."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any

import httpx
import pytest

from control_plane.codecs import OffsetKey
from control_plane.codecs.fence import FenceClaim, encode_fence
from tests.support import sidecar_process
from tests.support.connect_answers import until_states
from tests.support.harness import InProcess, sidecar_with
from tests.support.holding_proxy import HoldingProxy
from tests.support.kafka_topics import produce_record
from tests.support.paths import ROOT
from tests.support.stack import Cluster, Stack
from tests.support.waiting import eventually

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
PATCHES = 60
FAULTS = ROOT / "tests" / "support" / "faults"  # a held write, for a sidecar process a test kills
LEASE_S = 2.0  # the fence lease of a sidecar a test kills: what the next write waits for, at most


async def test_concurrent_patches_through_two_sidecars_all_hold(
    cluster: Cluster, sidecar: httpx.AsyncClient, in_process: InProcess, worker: httpx.AsyncClient, unique: str
) -> None:
    other = await in_process()
    name = f"patched-{unique}"
    created = await sidecar.post(
        "/connectors",
        json={
            "name": name,
            "config": {"connector.class": FILE_SOURCE, "topic": f"patched-{unique}", "file": "/dev/null"},
            "initial_state": "PAUSED",
        },
    )
    assert created.status_code == 201, created.text
    try:
        through = [sidecar, other]
        answers = await asyncio.gather(
            *(through[i % 2].patch(f"/connectors/{name}/config", json={f"key.{i}": str(i)}) for i in range(PATCHES))
        )
        assert [a.status_code for a in answers] == [200] * PATCHES, [a.text for a in answers if a.status_code != 200]
        for i, answer in enumerate(answers):  # each answer shows its own patch applied
            assert answer.json()["config"][f"key.{i}"] == str(i)
        kept = (await worker.get(f"/connectors/{name}/config")).json()
        lost = [i for i in range(PATCHES) if kept.get(f"key.{i}") != str(i)]
        assert lost == [], f"{len(lost)} of {PATCHES} acknowledged patches lost"
        # and through the other sidecar, the same config
        assert (await other.get(f"/connectors/{name}/config")).json() == kept
        one, two = [(await s.get("/_sidecar/cluster")).json() for s in through]
        assert one["sidecar"] != two["sidecar"]
        assert [f for f in one["fences"] + two["fences"] if f["connector"] == name] == []  # every fence given back
    finally:
        await sidecar.delete(f"/connectors/{name}")


async def test_a_sidecar_that_died_holding_a_fence_delays_writes_by_its_lease_only(stack: Stack, unique: str) -> None:
    """A claim nobody renews or releases, as a sidecar killed in the middle of a write leaves it: the next
    write of that connector waits for the lease's end, then goes through. The fence does not depend on the
    Connect version: the oldest cluster of the stack (its PATCH emulated)."""
    cluster = list(stack.clusters.values())[-1]
    async with sidecar_with(cluster) as running:
        await dead_holder_delays(cluster, stack, running.client, unique)


async def dead_holder_delays(cluster: Cluster, stack: Stack, sidecar: httpx.AsyncClient, unique: str) -> None:
    name = f"orphaned-{unique}"
    config = {"connector.class": FILE_SOURCE, "topic": f"orphaned-{unique}", "file": "/dev/null"}
    created = await sidecar.post("/connectors", json={"name": name, "config": config, "initial_state": "PAUSED"})
    assert created.status_code == 201, created.text
    try:
        topic = f"{cluster.worker_property('group.id')}.control-plane"
        lease_ms = 3000
        await produce_record(stack.bootstrap, topic, *encode_fence(FenceClaim(name, "dead", "killed:8084/x", lease_ms)))
        started = time.monotonic()
        await eventually(
            lambda: sidecar.get("/_sidecar/cluster"),
            lambda a: [(f["connector"], f["sidecar"]) for f in a.json()["fences"]] == [(name, "killed:8084/x")],
            timeout_s=2,
            what="the dead holder's fence shown",
        )
        patched = await sidecar.patch(f"/connectors/{name}/config", json={"after": "the lease"})
        waited = time.monotonic() - started
        assert patched.status_code == 200, patched.text
        assert 1.0 < waited < lease_ms / 1000 + 5, waited  # it waited, and not much beyond the lease
        assert patched.json()["config"]["after"] == "the lease"
        assert (await sidecar.get("/_sidecar/cluster")).json()["fences"] == []
    finally:
        await sidecar.delete(f"/connectors/{name}")


async def test_a_write_through_one_sidecar_shows_through_another_at_once(
    cluster: Cluster, sidecar: httpx.AsyncClient, in_process: InProcess, unique: str
) -> None:
    """Read-your-writes across sidecars: the read that follows an acknowledged write, through another
    sidecar, shows it (no retry, no wait in between), and is not marked stale. A new connector on every
    sidecar (``view_read_sync=missing``, the default); every change with ``always``."""
    default, strict = await in_process(), await in_process(view_read_sync="always")
    names = [f"seen-{unique}-{i}" for i in range(5)]
    try:
        for i, name in enumerate(names):
            config = {"connector.class": FILE_SOURCE, "topic": f"seen-{unique}", "file": "/dev/null", "n": "0"}
            created = await sidecar.post(
                "/connectors", json={"name": name, "config": config, "initial_state": "PAUSED"}
            )
            assert created.status_code == 201, created.text
            for other in (default, strict):
                shown = await other.get(f"/connectors/{name}/config")
                assert (shown.status_code, shown.json().get("n"), shown.headers.get("x-sidecar-stale")) == (
                    200,
                    "0",
                    None,
                )
            changed = await sidecar.put(f"/connectors/{name}/config", json={**config, "n": str(i + 1)})
            assert changed.status_code == 200, changed.text
            assert (await strict.get(f"/connectors/{name}/config")).json()["n"] == str(i + 1)
            assert name in (await strict.get("/connectors")).json()
            deleted = await default.delete(f"/connectors/{name}")
            assert deleted.status_code == 204, deleted.text
            assert name not in (await strict.get("/connectors")).json()
    finally:
        for name in names:
            await sidecar.delete(f"/connectors/{name}")


async def test_where_every_sidecar_waits_out_the_window_a_write_shows_through_another_at_once(
    cluster: Cluster, in_process: InProcess, unique: str
) -> None:
    """``always`` on every sidecar of a cluster (the Kubernetes layouts): a read answers from a view fresh
    within the window, without a round trip of its own, and still shows every write acknowledged through
    another sidecar, since each write is answered only a window after it is done. The two sidecars here
    share a sidecars' topic of their own, so that no other sidecar of the stack (which does not wait) is
    among them."""
    private = {"view_read_sync": "always", "sidecars_topic": f"sidecars-{unique}", "presence_interval_s": 0.5}
    one, two = await in_process(**private), await in_process(**private)

    def both_wait(answer: httpx.Response) -> bool:
        return len(answer.json()["sidecars"]) == 2 and answer.json()["least_write_wait_ms"] == 25.0

    for each in (one, two):  # both know both, and that both wait 25 ms: the window holds
        await eventually(lambda: each.get("/_sidecar/cluster"), both_wait, what="the window held")  # noqa: B023
    names = [f"window-{unique}-{i}" for i in range(10)]
    try:
        for i, name in enumerate(names):
            writer, reader = (one, two) if i % 2 else (two, one)
            config = {"connector.class": FILE_SOURCE, "topic": f"window-{unique}", "file": "/dev/null", "n": "0"}
            created = await writer.post("/connectors", json={"name": name, "config": config, "initial_state": "PAUSED"})
            assert created.status_code == 201, created.text
            assert name in (await reader.get("/connectors")).json()
            changed = await writer.put(f"/connectors/{name}/config", json={**config, "n": str(i + 1)})
            assert changed.status_code == 200, changed.text
            shown = await reader.get(f"/connectors/{name}/config")
            assert (shown.json()["n"], shown.headers.get("x-sidecar-stale")) == (str(i + 1), None)
            deleted = await reader.delete(f"/connectors/{name}")
            assert deleted.status_code == 204, deleted.text
            assert name not in (await writer.get("/connectors")).json()
    finally:
        for name in names:
            await one.delete(f"/connectors/{name}")


async def test_every_sidecar_knows_every_live_sidecar_and_forgets_one_that_stops(stack: Stack) -> None:
    """The newest cluster of the stack: presence does not depend on the Connect version."""
    cluster = stack.newest
    async with sidecar_with(cluster) as running:
        await presence_shown(cluster, running.client)


async def presence_shown(cluster: Cluster, sidecar: httpx.AsyncClient) -> None:
    def ids(answer: httpx.Response) -> set[str]:
        return {s["id"] for s in answer.json()["sidecars"]}

    me = (await sidecar.get("/_sidecar/cluster")).json()["sidecar"]
    async with sidecar_with(cluster, presence_interval_s=0.5) as other:
        them = (await other.client.get("/_sidecar/cluster")).json()["sidecar"]

        def shown(answer: httpx.Response) -> dict[str, Any]:
            return next((s for s in answer.json()["sidecars"] if s["id"] == them), {})

        both = await eventually(
            lambda: sidecar.get("/_sidecar/cluster"),
            lambda a: me in ids(a) and bool(shown(a).get("workers")),
            timeout_s=10,
            what="both sidecars listed, the other with its worker",
        )
        assert shown(both)["workers"] == {cluster.connect_url.rstrip("/"): cluster.version}
        assert set(shown(both)["view_lag"]) >= {"config", "status"}
    # stopped: its leave is read at once, long before three intervals
    await eventually(
        lambda: sidecar.get("/_sidecar/cluster"),
        lambda a: them not in ids(a) and me in ids(a),
        timeout_s=1.4,
        what="the stopped sidecar forgotten",
    )


async def test_a_sidecar_killed_holding_a_fence_mid_write_leaves_its_acknowledged_writes_only(
    stack: Stack, unique: str, tmp_path: Path
) -> None:
    """A real sidecar process, SIGKILLed in the middle of an emulated PATCH, the connector's fence held:
    its config PUT is under way (held by a proxy in front of the worker, so it never lands). Through another
    sidecar the next write of that connector waits out the dead holder's lease, then goes through; what the
    killed sidecar acknowledged before holds, and nothing of the interrupted write is left."""
    # one cluster whose writes the sidecar emulates (3.4.1) is enough: each run waits out a lease
    cluster = stack.clusters["old"]
    async with (
        sidecar_with(cluster) as running,
        httpx.AsyncClient(base_url=cluster.connect_url, timeout=60) as worker,
    ):
        await killed_mid_write(cluster, running.client, worker, unique, tmp_path)


async def killed_mid_write(
    cluster: Cluster, survivor: httpx.AsyncClient, worker: httpx.AsyncClient, unique: str, tmp_path: Path
) -> None:
    name = f"killed-{unique}"
    lease_s = 2.0
    async with HoldingProxy(cluster.connect_url) as proxy:
        doomed = sidecar_process.serve(
            ["--worker-properties", cluster.properties, "--connect-url", proxy.url],
            tmp_path / "doomed.log",
            name="doomed",
            env={"CONTROL_PLANE_FENCE_LEASE_MS": str(round(lease_s * 1000))},
        )
        try:
            await asyncio.to_thread(doomed.wait_answering, "/readyz", 60)
            async with httpx.AsyncClient(base_url=doomed.url, timeout=30) as client:
                # acknowledged before the kill: a create STOPPED, a PATCH, an offsets alter (all emulated)
                config = {"connector.class": FILE_SOURCE, "topic": f"killed-{unique}", "file": "/dev/null"}
                created = await client.post(
                    "/connectors", json={"name": name, "config": config, "initial_state": "STOPPED"}
                )
                assert created.status_code == 201, created.text
                patched = await client.patch(f"/connectors/{name}/config", json={"kept": "before the kill"})
                assert patched.status_code == 200, patched.text
                partition = {"filename": "/dev/null"}
                offsets = {"offsets": [{"partition": partition, "offset": {"position": 7}}]}
                altered = await client.patch(f"/connectors/{name}/offsets", json=offsets)
                assert altered.status_code == 200, altered.text

                proxy.hold = lambda line: line.startswith(f"PUT /connectors/{name}/config ".encode())
                interrupted = asyncio.create_task(client.patch(f"/connectors/{name}/config", json={"lost": "killed"}))
                await asyncio.wait_for(proxy.holding.wait(), 10)  # its fence taken, the config checked
                own = (await survivor.get("/_sidecar/cluster")).json()["sidecar"]

                def holders(answer: httpx.Response) -> list[str]:
                    return [f["sidecar"] for f in answer.json()["fences"] if f["connector"] == name]

                shown = await eventually(
                    lambda: survivor.get("/_sidecar/cluster"),
                    lambda a: len(holders(a)) == 1,
                    timeout_s=10,
                    what="the fence held by the sidecar about to be killed, shown by the other",
                )
                assert holders(shown)[0] != own
                doomed.kill()
                killed = time.monotonic()
                with pytest.raises(httpx.TransportError):
                    await interrupted

            # the next write of the connector: an emulated stop (the config topic alone, so that nothing but
            # the fence can hold it: a rebalance of the shared worker can hold a write that reaches it)
            stopped = await survivor.put(f"/connectors/{name}/stop")
            waited = time.monotonic() - killed
            assert stopped.status_code == 204, stopped.text
            assert 0.5 < waited < lease_s + 3, waited  # it waited for the lease, and not much beyond
            after = await survivor.patch(f"/connectors/{name}/config", json={"after": "the kill"})
            assert after.status_code == 200, after.text

            def answered(path: str) -> Awaitable[httpx.Response]:
                return eventually(lambda: worker.get(path), lambda a: a.status_code == 200, timeout_s=30, what=path)

            kept = (await answered(f"/connectors/{name}/config")).json()
            assert (kept.get("kept"), kept.get("after"), kept.get("lost")) == ("before the kill", "the kill", None)
            assert (await answered(f"/connectors/{name}/tasks")).json() == []
            assert (await survivor.get(f"/connectors/{name}/status")).json()["connector"]["state"] == "STOPPED"
            read = (await survivor.get(f"/connectors/{name}/offsets")).json()
            assert read == {"offsets": [{"partition": partition, "offset": {"position": 7}}]}, read
            assert holders(await survivor.get("/_sidecar/cluster")) == []  # given back; the dead one's over
            assert proxy.held == [f"PUT /connectors/{name}/config HTTP/1.1".encode()]
        finally:
            doomed.kill()
            await worker.delete(f"/connectors/{name}")


async def killed_holding(
    cluster: Cluster, tmp_path: Path, key: str, send: Callable[[httpx.AsyncClient], Coroutine[Any, Any, httpx.Response]]
) -> float:
    """A sidecar process of the code under test whose write of the record ``key`` is held
    (``tests/support/faults``), SIGKILLed once ``send`` reached it; its lease is ``LEASE_S``. Returns when
    it was killed (``time.monotonic``)."""
    held = tmp_path / "held"
    doomed = sidecar_process.serve(
        ["--worker-properties", cluster.properties],
        tmp_path / "doomed.log",
        name="doomed",
        env={
            "CONTROL_PLANE_FENCE_LEASE_MS": str(round(LEASE_S * 1000)),
            "PYTHONPATH": str(FAULTS),
            "SIDECAR_TEST_HOLD_KEY": key,
            "SIDECAR_TEST_HELD_FILE": str(held),
        },
    )
    try:
        await asyncio.to_thread(doomed.wait_answering, "/readyz", 60)
        async with httpx.AsyncClient(base_url=doomed.url, timeout=30) as client:
            interrupted = asyncio.create_task(send(client))
            await eventually(lambda: asyncio.sleep(0, held.exists()), bool, timeout_s=10, what="the write held")
            doomed.kill()
            killed = time.monotonic()
            with pytest.raises(httpx.TransportError):
                await interrupted
        return killed
    finally:
        doomed.kill()


async def test_a_sidecar_killed_between_the_two_records_of_an_emulated_stop_leaves_the_next_stop_to_finish_it(
    stack: Stack, unique: str, tmp_path: Path
) -> None:
    """A real sidecar process, SIGKILLed in the middle of an emulated stop (3.4.1): its STOPPED target state
    written, its empty set of tasks never (the write held in the process, ``tests/support/faults``), the
    fence held. The stop was never acknowledged; the connector is paused with its task, and shown so. Through
    another sidecar the next stop of the connector waits out the dead holder's lease, finishes it (STOPPED,
    no tasks), and a resume then runs the connector again."""
    cluster = stack.clusters["old"]
    name = f"killed-stop-{unique}"
    async with (
        sidecar_with(cluster) as running,
        httpx.AsyncClient(base_url=cluster.connect_url, timeout=60) as worker,
    ):
        survivor = running.client
        config = {"connector.class": FILE_SOURCE, "topic": name, "file": "/dev/null", "tasks.max": "1"}
        created = await survivor.post("/connectors", json={"name": name, "config": config})
        assert created.status_code == 201, created.text

        await until_states(survivor, name, "RUNNING", ["RUNNING"])
        try:
            killed = await killed_holding(
                cluster, tmp_path, f"commit-{name}", lambda c: c.put(f"/connectors/{name}/stop")
            )
            # half-written: its target state in the config topic, its empty set of tasks not; the old worker
            # pauses the connector and its task, and the task is shown as long as it is configured
            await until_states(survivor, name, "STOPPED", ["PAUSED"])
            await until_states(worker, name, "PAUSED", ["PAUSED"])
            stopped = await survivor.put(f"/connectors/{name}/stop")
            waited = time.monotonic() - killed
            assert stopped.status_code == 204, stopped.text
            assert waited < LEASE_S + 3, waited  # the dead holder's lease, and not much beyond
            status = (await survivor.get(f"/connectors/{name}/status")).json()
            assert (status["connector"]["state"], status["tasks"]) == ("STOPPED", [])
            assert (await survivor.get("/_sidecar/cluster")).json()["fences"] == []
            resumed = await survivor.put(f"/connectors/{name}/resume")
            assert resumed.status_code == 202, resumed.text
            await until_states(survivor, name, "RUNNING", ["RUNNING"])  # running again after the resume
        finally:
            await worker.delete(f"/connectors/{name}")


async def test_a_sidecar_killed_in_the_middle_of_an_emulated_alter_leaves_the_next_alter_to_the_others(
    stack: Stack, unique: str, tmp_path: Path
) -> None:
    """A real sidecar process, SIGKILLed in the middle of an emulated offsets alter (3.4.1) of two source
    partitions: the first record acknowledged by Kafka, the second never sent (``tests/support/faults``), the
    fence held. The alter was never acknowledged; what it wrote is what a 3.5+ worker's alter cut off at the
    same record leaves (offsets-topic records are written one by one, in a transaction only on an
    exactly-once cluster). Through another sidecar the next alter waits out the dead holder's lease and
    writes both; the fence is given back."""
    cluster = stack.clusters["old"]
    name = f"killed-alter-{unique}"
    first, second = {"filename": str(tmp_path / "a.txt")}, {"filename": str(tmp_path / "b.txt")}

    def body(a: int, b: int) -> dict[str, Any]:
        return {
            "offsets": [
                {"partition": first, "offset": {"position": a}},
                {"partition": second, "offset": {"position": b}},
            ]
        }

    async def positions(client: httpx.AsyncClient) -> dict[str, int]:
        read = (await client.get(f"/connectors/{name}/offsets")).json()["offsets"]
        return {o["partition"]["filename"]: o["offset"]["position"] for o in read}

    async with (
        sidecar_with(cluster) as running,
        httpx.AsyncClient(base_url=cluster.connect_url, timeout=60) as worker,
    ):
        survivor = running.client
        config = {"connector.class": FILE_SOURCE, "topic": name, "file": first["filename"], "tasks.max": "1"}
        created = await survivor.post("/connectors", json={"name": name, "config": config, "initial_state": "STOPPED"})
        assert created.status_code == 201, created.text
        altered = await survivor.patch(f"/connectors/{name}/offsets", json=body(1, 2))
        assert altered.status_code == 200, altered.text
        try:
            key = OffsetKey(name, second).to_bytes().decode()
            killed = await killed_holding(
                cluster, tmp_path, key, lambda c: c.patch(f"/connectors/{name}/offsets", json=body(5, 6))
            )
            assert await positions(survivor) == {first["filename"]: 5, second["filename"]: 2}
            again = await survivor.patch(f"/connectors/{name}/offsets", json=body(7, 8))
            waited = time.monotonic() - killed
            assert again.status_code == 200, again.text
            assert waited < LEASE_S + 3, waited  # the dead holder's lease, and not much beyond
            assert await positions(survivor) == {first["filename"]: 7, second["filename"]: 8}
            assert (await survivor.get("/_sidecar/cluster")).json()["fences"] == []
        finally:
            await worker.delete(f"/connectors/{name}")
