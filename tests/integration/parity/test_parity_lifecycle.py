"""A FileStream connector's whole life, every way: create (and create again: 409), read it every way Connect
shows it, pause, resume, restart, delete; the records reach Kafka and the sink's file."""

from __future__ import annotations

from tests.support.parity import Way, lines_of, run_every_way

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"


async def source_lifecycle(w: Way) -> None:
    name, topic = w.connector("life-src"), w.name("life-lines")
    source = w.home / "in.txt"
    source.write_text("first line\nsecond line\n")
    config = {"connector.class": FILE_SOURCE, "tasks.max": "1", "file": str(source), "topic": topic}
    created = await w.call("POST", "/connectors", json={"name": name, "config": config})
    w.note("location", created.headers.get("location", "").rsplit("/", 1)[-1])
    await w.call("POST", "/connectors", json={"name": name, "config": config})  # 409, already exists
    await w.until_states(name, "RUNNING", ["RUNNING"])
    for suffix in ("/status", "", "/config", "/tasks", "/tasks/0/status", "/tasks/1/status"):
        await w.call("GET", w.path(name, suffix))
    w.note("GET /connectors, own", w.own((await w.call("GET", "/connectors", record=False)).json()))
    for query in ("?expand=status", "?expand=info", "?expand=status&expand=info"):
        expanded = await w.call("GET", f"/connectors{query}", record=False)
        w.note(f"GET /connectors{query}, own", w.own(expanded.json()))
    w.note("records", await w.values_at_least(topic, 2))

    await w.call("PUT", w.path(name, "/pause"))
    await w.until_states(name, "PAUSED", ["PAUSED"])
    await w.call("GET", w.path(name, "/status"))
    await w.call("PUT", w.path(name, "/resume"))
    await w.until_states(name, "RUNNING", ["RUNNING"])
    with source.open("a") as f:
        f.write("third line\n")
    w.note("records after resume", await w.values_at_least(topic, 3))

    await w.call("POST", w.path(name, "/restart"))
    restarted = await w.call("POST", w.path(name, "/restart"), params={"includeTasks": "true"}, record=False)
    w.note(
        "restart with tasks",
        (restarted.status_code, restarted.json()["connector"]["state"] in {"RUNNING", "RESTARTING"}),
    )
    await w.call("POST", w.path(name, "/tasks/0/restart"))
    await w.until_states(name, "RUNNING", ["RUNNING"])

    await w.call("DELETE", w.path(name))
    await w.until(w.path(name), lambda r: r.status_code == 404, "deleted")
    for suffix in ("", "/status", "/config"):
        await w.call("GET", w.path(name, suffix))


async def test_source_connector_lifecycle(ways: list[Way]) -> None:
    await run_every_way(ways, source_lifecycle)


async def sink_lifecycle(w: Way) -> None:
    topic = w.name("sinkin")
    source_file, sink_file = w.home / "in.txt", w.home / "out.txt"
    source_file.write_text("alpha\nbeta\n")
    source, sink = w.connector("life-feed"), w.connector("life-sink")
    for name, config in (
        (source, {"connector.class": FILE_SOURCE, "tasks.max": "1", "file": str(source_file), "topic": topic}),
        (sink, {"connector.class": FILE_SINK, "tasks.max": "1", "file": str(sink_file), "topics": topic}),
    ):
        await w.call("PUT", w.path(name, "/config"), json=config)
    await w.until_states(sink, "RUNNING", ["RUNNING"])
    await w.until(w.path(sink, "/status"), lambda _: lines_of(sink_file) == ["alpha", "beta"], "the sink's file")
    for suffix in ("/status", "", "/tasks"):
        await w.call("GET", w.path(sink, suffix))
    for name in (source, sink):
        await w.call("DELETE", w.path(name))


async def test_sink_connector_writes_what_the_source_produced(ways: list[Way]) -> None:
    await run_every_way(ways, sink_lifecycle)
