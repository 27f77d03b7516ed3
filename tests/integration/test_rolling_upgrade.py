"""A Connect cluster in the middle of a rolling upgrade: a 3.4.1 worker and a 4.4.0 worker in one group (the
same group.id and internal topics), a sidecar in front of each, each given its own worker only (its
worker's properties file, as in a Kubernetes pod). The features are decided by every live worker of the
group: while the 3.4.1 worker is in it, both sidecars answer the same capabilities, 3.4.1's (no KIP-875
stop natively: the sidecar's emulation), and ``GET /`` shows 3.4.1 on both; once it has left the group the
features turn native and ``GET /`` shows 4.4.0, without a restart of the sidecar. The old worker leaves in
the middle of an emulated stop: the stop acknowledged, the connector stays STOPPED on the 4.4.0 worker.

Both workers configure a config provider (``FileConfigProvider``, KIP-297), as the sidecars read in their
properties: while the emulation answers, a sink whose consumer group is a provider reference has its
offsets read from the group the workers resolve, as the 4.4.0 worker reads them itself.

The workers are this module's own (deploy/local/stack.py's ``start_connect``, from the stack's jars,
against the stack's broker): the shared stack's clusters keep one worker each.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
import uuid
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.deploy_local import files_under, local_stack
from tests.support.harness import RunningSidecar, sidecar_with
from tests.support.kafka_topics import produce
from tests.support.stack import Cluster, Stack
from tests.support.waiting import eventually

NEW, OLD = local_stack.NEW_VERSION, local_stack.OLD_VERSION  # 4.4.0, 3.4.1
FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"
FILE_PROVIDER = {
    "config.providers": "file",
    "config.providers.file.class": "org.apache.kafka.common.config.provider.FileConfigProvider",
}
LEFT_S = 30.0  # the bound on the features turning native once the old worker has stopped


@dataclass(frozen=True)
class Upgrading:
    group: str
    new: Cluster  # the 4.4.0 worker
    old: Cluster  # the 3.4.1 worker, in the same group
    old_worker: local_stack.Proc
    provided: Path  # a properties file both workers' FileConfigProvider reads


@pytest.fixture(scope="module")
def upgrading(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Upgrading]:
    home: Path = tmp_path_factory.mktemp("rolling-upgrade")
    group = f"rolling-{uuid.uuid4().hex[:8]}"
    provided = home / "provided.properties"
    provided.write_text(f"group={group}-sink-group\n")
    # the configs and logs under ``home``; the Popen objects go, the workers run on (stopped below)
    with files_under(home), warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        new = local_stack.start_connect(
            group, NEW, stack.bootstrap, properties={**local_stack.quick_discovery(NEW), **FILE_PROVIDER}
        )
        old = local_stack.start_connect(f"{group}-old", OLD, stack.bootstrap, cluster=group, properties=FILE_PROVIDER)
    try:
        for proc in (new, old):
            ready = functools.partial(local_stack.connect_ready, proc.url)
            local_stack.wait_until(proc, ready, "answer GET / and GET /connectors")
        yield Upgrading(
            group,
            Cluster("new", NEW, new.url, new.extra["properties"]),
            Cluster("old", OLD, old.url, old.extra["properties"]),
            old,
            provided,
        )
    finally:
        local_stack.stop([new, old])


async def capabilities(sidecar: RunningSidecar) -> dict[str, Any]:
    answer = await sidecar.client.get("/_sidecar/capabilities")
    assert answer.status_code == 200, answer.text
    return answer.json()  # type: ignore[no-any-return]


def in_front_of(cluster: Cluster) -> contextlib.AbstractAsyncContextManager[RunningSidecar]:
    """A sidecar given ``cluster``'s worker only: the workers' own version on GET /, read again every second."""
    return sidecar_with(cluster, advertised_version="worker", capability_refresh_s=1.0)


async def running_source(sidecar: RunningSidecar, name: str) -> None:
    """A FileStreamSource connector (reading nothing) created through ``sidecar``, once its task runs."""
    config = {"connector.class": FILE_SOURCE, "topic": name, "file": "/dev/null", "tasks.max": "1"}
    created = await sidecar.client.post("/connectors", json={"name": name, "config": config})
    assert created.status_code == 201, created.text
    await eventually(
        lambda: sidecar.client.get(f"/connectors/{name}/status"),
        lambda r: r.status_code == 200 and [t["state"] for t in r.json()["tasks"]] == ["RUNNING"],
        timeout_s=30,
        what=f"{name}'s task running",
    )


def modes(shown: dict[str, Any]) -> dict[str, str]:
    return {name: feature["mode"] for name, feature in shown["features"].items()}


async def test_a_sinks_group_given_as_a_provider_reference_is_read_as_the_workers_resolve_it(
    stack: Stack, upgrading: Upgrading, tmp_path: Path
) -> None:
    """While the 3.4.1 worker is in the group the sidecar reads offsets itself (KIP-875 emulated): a sink's
    ``consumer.override.group.id`` given as ``${file:...}`` is resolved as the workers resolve it (with the
    providers of the worker's properties), and the answer is the 4.4.0 worker's own, read directly. Read as
    written, the group would be one nobody consumes in: no offsets."""
    name = f"provided-{uuid.uuid4().hex[:6]}"
    config = {
        "connector.class": FILE_SINK,
        "topics": name,
        "file": str(tmp_path / "sunk.txt"),
        "tasks.max": "1",
        "consumer.override.group.id": f"${{file:{upgrading.provided}:group}}",
    }
    async with (
        in_front_of(upgrading.old) as on_old,
        httpx.AsyncClient(base_url=upgrading.new.connect_url, timeout=30) as newest,
    ):
        shown = await eventually(
            functools.partial(capabilities, on_old),
            lambda c: len(c["worker_versions"]) == 2,
            timeout_s=20,
            what="both workers of the group deciding",
        )
        assert modes(shown)["stop_and_offsets_read"] == "emulated"
        created = await on_old.client.post("/connectors", json={"name": name, "config": config})
        assert created.status_code == 201, created.text
        try:
            await produce(stack.bootstrap, name, ["a", "b", "c"])
            expected = {
                "offsets": [{"partition": {"kafka_topic": name, "kafka_partition": 0}, "offset": {"kafka_offset": 3}}]
            }
            direct = await eventually(
                lambda: newest.get(f"/connectors/{name}/offsets"),
                lambda r: r.status_code == 200 and r.json() == expected,
                timeout_s=60,
                what="the sink's three records committed, as the 4.4.0 worker reads them",
            )
            via = await on_old.client.get(f"/connectors/{name}/offsets")
            assert (via.status_code, via.json()) == (200, direct.json())
        finally:
            await on_old.client.delete(f"/connectors/{name}")


async def test_the_features_follow_every_live_worker_of_the_group(upgrading: Upgrading) -> None:
    new, old = upgrading.new, upgrading.old
    both = {new.connect_url: NEW, old.connect_url: OLD}
    async with httpx.AsyncClient(timeout=30) as client:
        own_root = (await client.get(new.connect_url + "/")).json()  # the 4.4.0 worker's own GET /
    assert own_root["version"] == NEW
    async with in_front_of(new) as on_new:
        async with in_front_of(old) as on_old:
            shown = [
                await eventually(
                    functools.partial(capabilities, sidecar),
                    lambda c: c["worker_versions"] == both,
                    timeout_s=20,
                    what="both workers of the group deciding",
                )
                for sidecar in (on_new, on_old)
            ]
            for each in shown:
                assert (each["worker_version"], each["group"], each["unknown"]) == (OLD, upgrading.group, None)
                assert each["advertised_version"] == OLD
            assert modes(shown[0])["stop_and_offsets_read"] == "emulated"  # 3.4.1 has no KIP-875 stop
            assert shown[0]["features"] == shown[1]["features"]  # one cluster, one decision
            roots = [(await sidecar.client.get("/")).json() for sidecar in (on_new, on_old)]
            assert [root["version"] for root in roots] == [OLD, OLD]
            assert roots[0] == {**own_root, "version": OLD}  # the 4.4.0 worker's answer, with the cluster's version
        # the old worker leaves the group (its pod and sidecar gone) while the sidecar in front of 4.4.0 is
        # in the middle of an emulated stop (the cluster's features are still 3.4.1's); the sidecar runs on
        name = f"upgraded-{uuid.uuid4().hex[:6]}"
        await running_source(on_new, name)
        stopping = time.monotonic()
        stop = asyncio.create_task(on_new.client.put(f"/connectors/{name}/stop"))
        await asyncio.to_thread(local_stack.stop, [upgrading.old_worker])
        stopped = time.monotonic()
        answer = await stop
        assert (answer.status_code, answer.content) == (204, b""), answer.text
        upgraded = await eventually(
            functools.partial(capabilities, on_new),
            lambda c: c["worker_version"] == NEW,
            timeout_s=LEFT_S,
            what="the features decided by the 4.4.0 worker alone",
        )
        native = time.monotonic()
        assert (upgraded["worker_versions"], upgraded["unknown"]) == ({new.connect_url: NEW}, None)
        assert modes(upgraded)["stop_and_offsets_read"] == "native"
        assert modes(upgraded)["offsets_alter_reset"] == "native"
        assert (await on_new.client.get("/")).json() == own_root
        # the acknowledged stop holds: the 4.4.0 worker, alone now, has the connector STOPPED without tasks
        async with httpx.AsyncClient(base_url=new.connect_url, timeout=30) as worker:
            await eventually(
                lambda: worker.get(f"/connectors/{name}/status"),
                lambda r: (
                    r.status_code == 200 and (r.json()["connector"]["state"], r.json()["tasks"]) == ("STOPPED", [])
                ),
                timeout_s=LEFT_S,
                what="the connector STOPPED on the 4.4.0 worker",
            )
            await worker.delete(f"/connectors/{name}")
        print(
            f"the 3.4.1 worker stopped in {stopped - stopping:.1f} s; "
            f"the features native {native - stopped:.1f} s after, {native - stopping:.1f} s after the stop began"
        )
