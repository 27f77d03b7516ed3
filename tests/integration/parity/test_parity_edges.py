"""Edge cases of the reads, every way, answer for answer: connectors named with spaces, unicode, a semicolon
and an (encoded) slash; a config of almost a MiB (the config topic's records are limited by the broker's
``message.max.bytes`` and the worker producer's ``max.request.size``, both 1 MB by default) and one beyond;
a connector with hundreds of tasks (a FileStreamSink gives each of ``tasks.max`` tasks a config); each
read one by one and in the ``?expand=status,info`` lists."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from aiokafka import AIOKafkaProducer

from control_plane.codecs import Tombstone, encode_config
from control_plane.codecs.config import ConfigKey, ConfigKind
from tests.support.kafka_topics import group_members
from tests.support.parity import Way, run_every_way, since
from tests.support.waiting import eventually

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"
EXPANDS = ("?expand=status", "?expand=info", "?expand=status&expand=info")

pytestmark = pytest.mark.timeout(400)


async def listed(w: Way, name: str, ok: Any, what: str, timeout_s: float = 90) -> None:
    """Until ``ok`` holds for ``name``'s entry of ``GET /connectors?expand=status`` (a name whose path a
    worker refuses can only be watched there)."""

    def entry_ok(answer: httpx.Response) -> bool:
        entry = answer.json().get(name) if answer.status_code == 200 else None
        return entry is not None and bool(ok(entry["status"]))

    await w.until("/connectors?expand=status", entry_ok, what, timeout_s)


async def record_listings(w: Way) -> None:
    for query in EXPANDS:
        w.note(f"GET /connectors{query}, own", w.own((await w.call("GET", f"/connectors{query}", record=False)).json()))


async def delete_by_tombstone(w: Way, name: str) -> None:
    """Delete a connector the way a worker does, by its config tombstone (4.4.0 refuses any path with an
    encoded slash, DELETE included)."""
    key, value = encode_config(Tombstone(ConfigKey(ConfigKind.CONNECTOR, name)))
    producer = AIOKafkaProducer(bootstrap_servers=w.stack.bootstrap)
    await producer.start()
    try:
        await producer.send_and_wait(w.cluster.worker_property("config.storage.topic"), value, key=key)
    finally:
        await producer.stop()


def addressless(page: bytes) -> bytes:
    return re.sub(rb"<td>https?://[^/<]*/", b"<td>http://ADDRESS/", page)


async def odd_names(w: Way) -> None:
    names = [w.connector("with space"), w.connector("caf\u00e9-\u6f22\u5b57"), w.connector("semi;colon")]
    slash = w.connector("sl/ash")
    for raw in [*names, slash]:
        config = {"connector.class": "FileStreamSource", "topic": w.name("edge"), "file": "/dev/null"}
        await w.call("POST", "/connectors", json={"name": raw, "config": config})
    for raw in [*names, slash]:
        await listed(w, raw, lambda s: [t["state"] for t in s["tasks"]] == ["RUNNING"], f"{raw!r} running")
    for raw in names:
        for suffix in ("", "/status", "/config", "/tasks", "/tasks/0/status", "/topics"):
            await w.call("GET", w.path(raw, suffix))
    await record_listings(w)
    # an encoded slash: Jetty 12 (4.x) refuses the path (400 "Ambiguous URI path separator"), Jetty 9
    # (3.x) serves it; the sidecar's own routes answer as the newest worker's on every version (jetty_uri)
    via = await w.client.get(w.path(slash, "/status"))
    newest = next(iter(w.stack.clusters.values()))  # newest first
    async with httpx.AsyncClient(base_url=newest.connect_url, timeout=30) as worker:
        direct = await worker.get(w.path(slash, "/status"))
    # Jetty 12.0.39's page names the request's URI with the Host it was sent to: each way's own address
    assert (via.status_code, addressless(via.content)) == (direct.status_code, addressless(direct.content))
    for raw in names:
        await w.call("DELETE", w.path(raw))
    await delete_by_tombstone(w, slash)
    await w.until("/connectors", lambda r: slash not in r.json(), f"{slash!r} deleted")


async def test_names_with_spaces_unicode_and_encoded_slashes(ways: list[Way]) -> None:
    await run_every_way(ways, odd_names)


def padded(w: Way, size: int) -> dict[str, str]:
    chunk = 64 * 1024
    config = {"connector.class": FILE_SOURCE, "tasks.max": "1", "file": "/dev/null", "topic": w.name("big")}
    config |= {f"padding.{i:03d}": "x" * chunk for i in range(size // chunk)}
    return config


async def large_configs(w: Way) -> None:
    name = w.connector("big-config")
    await w.call("PUT", w.path(name, "/config"), json=padded(w, 14 * 64 * 1024))  # 896 KiB of values
    await w.until_states(name, "RUNNING", ["RUNNING"])
    for suffix in ("", "/config", "/status", "/tasks"):
        await w.call("GET", w.path(name, suffix))
    await record_listings(w)
    too_big = w.connector("too-big-config")
    refused = await w.call("PUT", w.path(too_big, "/config"), json=padded(w, 20 * 64 * 1024), record=False)
    w.note("PUT 1.25 MiB of config values", refused.status_code)
    await w.call("GET", w.path(too_big, "/config"))
    await w.call("DELETE", w.path(name))


async def test_a_config_of_almost_a_mib_and_one_beyond(ways: list[Way]) -> None:
    # a 2.8 worker's config producer writes a 1.25 MiB record that 3.x and 4.x refuse (500): the worker's own
    await run_every_way(since(ways, "3.0"), large_configs)


TASKS = 200


async def many_tasks(w: Way) -> None:
    name = w.connector("many-tasks")
    config = {
        "connector.class": FILE_SINK,
        "tasks.max": str(TASKS),
        "file": str(w.home / "out.txt"),
        "topics.regex": f"never-{w.tag}",  # no partition to share: the tasks only join the group
    }
    await w.call("PUT", w.path(name, "/config"), json=config)
    await w.until_states(name, "RUNNING", ["RUNNING"] * TASKS, timeout_s=240)
    # the tasks RUNNING, their consumers may still be joining the group; a 3.4.1 consumer closed while its
    # JoinGroup is pending waits out its 30 s close timeout, eight tasks at a time, and its worker's herder
    # with them (well past the request budget): the scenario starts from a settled group on every way
    await eventually(
        lambda: group_members(w.stack.bootstrap, f"connect-{name}"),
        lambda found: found == ("Stable", TASKS),
        timeout_s=240,
        what=f"{w.label}: the group of {name} stable with {TASKS} members",
    )
    for suffix in ("", "/status", "/tasks", f"/tasks/{TASKS - 1}/status", f"/tasks/{TASKS}/status"):
        await w.call("GET", w.path(name, suffix))
    await record_listings(w)
    await w.call("PUT", w.path(name, "/stop"))
    await w.until_states(name, "STOPPED", [], timeout_s=240)
    for suffix in ("", "/status", "/tasks"):
        answer = await w.call("GET", w.path(name, suffix))
        if w.emulates_stop:  # the 3.4 herder applies the stop of 200 tasks seconds after its answer: the view answers
            assert answer.headers.get("x-sidecar-source") == "view", (suffix, dict(answer.headers))
    await w.call("DELETE", w.path(name))


async def test_a_connector_with_hundreds_of_tasks(ways: list[Way]) -> None:
    await run_every_way(ways, many_tasks)
