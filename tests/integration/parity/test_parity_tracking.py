"""KIP-558 topic tracking, every way (from the view where the sidecar serves it): a FileStreamSource that
wrote to two topics and a FileStreamSink reading them; topics appear, reset clears them, new records make
them reappear, deleting the connector clears them; an unknown connector has none and resets fine. Beyond
the KIP, through a sidecar: who uses a topic, and per pair the task and when it was discovered."""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable

import httpx

from tests.support.parity import Way, run_every_way
from tests.support.waiting import eventually

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"


def topics_are(name: str, expected: list[str]) -> Callable[[httpx.Response], bool]:
    def ok(answer: httpx.Response) -> bool:
        return answer.status_code == 200 and sorted(answer.json()[name]["topics"]) == expected

    return ok


async def shows(w: Way, name: str, expected: list[str]) -> None:
    await w.until(w.path(name, "/topics"), topics_are(name, sorted(expected)), f"{name} shows {expected}")
    await w.call("GET", w.path(name, "/topics"))


async def topics_appear_reset_reappear_and_go(w: Way) -> None:
    source, sink = w.connector("track-src"), w.connector("track-sink")
    first, second = w.name("track-a"), w.name("track-b")
    lines = w.home / "in.txt"
    lines.write_text("a1\na2\n")
    source_config = {"connector.class": FILE_SOURCE, "file": str(lines), "topic": first}
    await w.call("PUT", w.path(source, "/config"), json=source_config)
    await shows(w, source, [first])
    # the same source now writes a second topic: both stay active. RUNNING does not tell the reconfigured
    # task from the one before it, which may still read a line into the first topic (and commit past it):
    # a line more at each look, until one reaches the second topic
    await w.call("PUT", w.path(source, "/config"), json={**source_config, "topic": second})
    await w.until_states(source, "RUNNING", ["RUNNING"])

    written = itertools.count()

    def written_then_asked() -> Awaitable[httpx.Response]:
        with lines.open("a") as f:
            f.write(f"b1-{next(written)}\n")
        return w.client.get(w.path(source, "/topics"))

    expected = sorted([first, second])
    await eventually(written_then_asked, topics_are(source, expected), timeout_s=90, what=f"{w.label}: {expected}")
    await shows(w, source, expected)

    sink_config = {"connector.class": FILE_SINK, "file": str(w.home / "out.txt"), "topics": f"{first},{second}"}
    await w.call("PUT", w.path(sink, "/config"), json=sink_config)
    await shows(w, sink, [first, second])
    # the reset below must not race a line still unread: the last one written above may be read after it and
    # make the second topic reappear. The sink has every line once the source has produced them all
    out = w.home / "out.txt"

    async def sunk() -> set[str]:
        return set(out.read_text().split()) if out.exists() else set()

    await eventually(
        sunk,
        lambda got: got >= set(lines.read_text().split()),
        timeout_s=90,
        what=f"{w.label}: every line through the sink",
    )
    if w.via_sidecar:  # beyond the KIP: the sidecar's own endpoints
        users = await w.client.get(f"/_sidecar/topics/{first}/connectors")
        assert users.json() == {"topic": first, "connectors": sorted([sink, source]), "earlier_configs": []}
        usage = (await w.client.get(f"/_sidecar/connectors/{sink}/topics")).json()
        assert [t["topic"] for t in usage["topics"]] == sorted([first, second])
        assert all(t["task"] == 0 and t["discover_timestamp"] > 1_600_000_000_000 for t in usage["topics"])

    await w.call("PUT", w.path(source, "/topics/reset"))
    await shows(w, source, [])
    with lines.open("a") as f:
        f.write("b2\n")
    await shows(w, source, [second])

    for name in (source, sink):
        await w.call("DELETE", w.path(name))
        await shows(w, name, [])
    if w.via_sidecar:
        assert (await w.client.get(f"/_sidecar/topics/{second}/connectors")).json()["connectors"] == []

    ghost = w.name("never")
    await w.call("GET", w.path(ghost, "/topics"))
    await w.call("PUT", w.path(ghost, "/topics/reset"))


async def test_topics_appear_reset_reappear_and_go_with_the_connector(ways: list[Way]) -> None:
    await run_every_way(ways, topics_appear_reset_reappear_and_go)
