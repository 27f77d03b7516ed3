"""KIP-558 topic tracking from the view, on both Connect versions: a FileStreamSource that wrote to two
topics and a FileStreamSink reading them; topics appear, reset clears them, new records make them
reappear, deleting the connector clears them; the switches of the worker answer 403 as it does."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from .conftest import InProcess
from .stack import Cluster
from .waiting import eventually

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"


async def topics_of(client: httpx.AsyncClient, name: str) -> list[str]:
    answer = await client.get(f"/connectors/{name}/topics")
    assert answer.status_code == 200, answer.text
    return sorted(answer.json()[name]["topics"])


async def both_show(sidecar: httpx.AsyncClient, worker: httpx.AsyncClient, name: str, expected: list[str]) -> None:
    await eventually(lambda: topics_of(sidecar, name), lambda t: t == expected, what=f"sidecar shows {name} {expected}")
    await eventually(lambda: topics_of(worker, name), lambda t: t == expected, what=f"worker shows {name} {expected}")
    answer = await sidecar.get(f"/connectors/{name}/topics")
    assert answer.headers.get("x-sidecar-source") == "view"


async def test_topics_appear_reset_reappear_and_go_with_the_connector(
    cluster: Cluster, sidecar: httpx.AsyncClient, worker: httpx.AsyncClient, unique: str, tmp_path: Path
) -> None:
    source, sink = f"track-src-{cluster.name}-{unique}", f"track-sink-{cluster.name}-{unique}"
    first, second = f"track-a-{cluster.name}-{unique}", f"track-b-{cluster.name}-{unique}"
    lines = tmp_path / "in.txt"
    lines.write_text("a1\na2\n")
    source_config = {"connector.class": FILE_SOURCE, "file": str(lines), "topic": first}
    assert (await sidecar.put(f"/connectors/{source}/config", json=source_config)).status_code == 201
    await both_show(sidecar, worker, source, [first])
    # the same source now writes a second topic: both stay active
    assert (
        await sidecar.put(f"/connectors/{source}/config", json={**source_config, "topic": second})
    ).status_code == 200
    await eventually(
        lambda: sidecar.get(f"/connectors/{source}/status"),
        lambda r: r.status_code == 200 and [t["state"] for t in r.json()["tasks"]] == ["RUNNING"],
        what="source task running again",
    )
    with lines.open("a") as f:
        f.write("b1\n")
    await both_show(sidecar, worker, source, sorted([first, second]))

    sink_config = {"connector.class": FILE_SINK, "file": str(tmp_path / "out.txt"), "topics": f"{first},{second}"}
    assert (await sidecar.put(f"/connectors/{sink}/config", json=sink_config)).status_code == 201
    await both_show(sidecar, worker, sink, sorted([first, second]))

    # beyond the KIP: who uses a topic, and per pair the task and when it was discovered
    users = await sidecar.get(f"/_sidecar/topics/{first}/connectors")
    assert users.status_code == 200
    assert users.json() == {"topic": first, "connectors": sorted([sink, source])}
    usage = (await sidecar.get(f"/_sidecar/connectors/{sink}/topics")).json()
    assert usage["connector"] == sink
    assert [t["topic"] for t in usage["topics"]] == sorted([first, second])
    assert all(t["task"] == 0 and t["discover_timestamp"] > 1_600_000_000_000 for t in usage["topics"])

    reset = await sidecar.put(f"/connectors/{source}/topics/reset")
    assert reset.status_code == 202 and reset.content == b""
    await both_show(sidecar, worker, source, [])
    assert (await sidecar.get(f"/_sidecar/topics/{first}/connectors")).json()["connectors"] == [sink]

    with lines.open("a") as f:
        f.write("b2\n")
    await both_show(sidecar, worker, source, [second])

    for name in (source, sink):
        assert (await sidecar.delete(f"/connectors/{name}")).status_code == 204
        await both_show(sidecar, worker, name, [])
    assert (await sidecar.get(f"/_sidecar/topics/{second}/connectors")).json()["connectors"] == []


async def test_unknown_connector_answers_like_the_worker(
    sidecar: httpx.AsyncClient, worker: httpx.AsyncClient, unique: str
) -> None:
    name = f"never-{unique}"
    via, direct = await sidecar.get(f"/connectors/{name}/topics"), await worker.get(f"/connectors/{name}/topics")
    assert (via.status_code, via.json()) == (direct.status_code, direct.json()) == (200, {name: {"topics": []}})
    via_reset = await sidecar.put(f"/connectors/{name}/topics/reset")
    direct_reset = await worker.put(f"/connectors/{name}/topics/reset")
    assert via_reset.status_code == direct_reset.status_code == 202
    assert via_reset.content == direct_reset.content


@pytest.fixture
async def switched_off(in_process: InProcess) -> list[httpx.AsyncClient]:
    """A sidecar whose settings say tracking on but reset off, and one with tracking off."""
    return [await in_process(topic_tracking_allow_reset=False), await in_process(topic_tracking_enable=False)]


async def test_tracking_switches_answer_403_as_the_worker_does(switched_off: list[httpx.AsyncClient]) -> None:
    no_reset, no_tracking = switched_off
    assert (await no_reset.get("/connectors/x/topics")).status_code == 200
    refused = await no_reset.put("/connectors/x/topics/reset")
    assert refused.status_code == 403
    assert refused.json() == {"error_code": 403, "message": "Topic tracking reset is disabled."}
    for method, path in (("GET", "/connectors/x/topics"), ("PUT", "/connectors/x/topics/reset")):
        answer = await no_tracking.request(method, path)
        assert answer.status_code == 403
        assert answer.json() == {"error_code": 403, "message": "Topic tracking is disabled."}
