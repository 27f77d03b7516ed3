"""KIP-875's STOPPED state, every way (native on 3.5+, written to the config topic by the sidecar before).
The KIP's stopped-state test plan lines that apply: stop a running, a paused and a stopped connector; no
task configuration or status is shown for a stopped connector; pause and resume a stopped connector;
delete a stopped connector; an unknown one is 404. And a connector that had failed, stopped and resumed
once what made it fail is gone, runs again as 3.5+ brings it back (WorkerConnector: a FAILED connector
may go to STOPPED, and resuming starts it): failed by its own offsets topic (3.3+), and, on every version,
by a configuration the worker cannot start (written to the config topic as a worker writes it: validation
refuses it on the REST API), fixed while stopped."""

from __future__ import annotations

import time

from aiokafka import AIOKafkaProducer

from control_plane.codecs import ConnectorConfig, TargetState, TaskCommit, encode_config
from tests.support.connect_answers import states
from tests.support.harness import sidecar_with
from tests.support.kafka_topics import read_to_end
from tests.support.parity import Way, alter_topic, appending, create_topic, replay, run_every_way, since
from tests.support.waiting import eventually

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"


async def what_the_sidecar_wrote(w: Way, name: str) -> None:
    """On a worker without KIP-875: the empty task set, then the two-field target state; and a sidecar
    that reads from the worker (``read_from=upstream``) still shows the connector STOPPED."""
    config_topic = w.cluster.worker_property("config.storage.topic")
    commit_key, commit = encode_config(TaskCommit(name, 0))
    target_key, target = encode_config(TargetState.of(name, "STOPPED"))
    assert commit == b'{"tasks":0}' and target == b'{"state":"PAUSED","state.v2":"STOPPED"}'
    config_log = await read_to_end(w.stack.bootstrap, config_topic)
    assert config_log.with_key(commit_key)[-1] == (0, commit)
    assert config_log.with_key(target_key)[-1] == (0, target)
    async with sidecar_with(w.cluster, read_from="upstream") as upstream_reads:
        assert await states(upstream_reads.client, name) == ("STOPPED", [])


async def stop_pause_resume_delete(w: Way) -> None:
    running, paused = w.connector("stop-run"), w.connector("stop-paused")
    topic = w.name("stop-lines")
    lines = w.home / "in.txt"
    lines.write_text("a\nb\n")
    for name in (running, paused):
        config = {"connector.class": FILE_SOURCE, "tasks.max": "1", "file": str(lines), "topic": topic}
        await w.call("PUT", w.path(name, "/config"), json=config)
    for name in (running, paused):
        await w.until_states(name, "RUNNING", ["RUNNING"])  # tasks first: a connector paused early has none
    await w.call("PUT", w.path(paused, "/pause"))
    await w.until_states(paused, "PAUSED", ["PAUSED"])

    for name in (running, paused, running):  # a running, a paused, then an already stopped connector
        await w.call("PUT", w.path(name, "/stop"))
        await w.until_states(name, "STOPPED", [])
    for name in (running, paused):
        for suffix in ("/status", "/tasks", "", "/tasks/0/status"):
            await w.call("GET", w.path(name, suffix))
    w.note("expand=status, own", w.own((await w.call("GET", "/connectors?expand=status", record=False)).json()))
    if w.emulates_stop:
        await what_the_sidecar_wrote(w, running)

    # pausing a stopped connector: PAUSED without tasks; resuming it: RUNNING, lines flow
    await w.call("PUT", w.path(paused, "/pause"))
    await w.until_states(paused, "PAUSED", [])
    await w.call("GET", w.path(paused, "/status"))
    for name in (paused, running):
        await w.call("PUT", w.path(name, "/resume"))
        await w.until_states(name, "RUNNING", ["RUNNING"])
    with lines.open("a") as f:
        f.write("c\n")
    w.note("records", sorted(await w.values_at_least(topic, 6)))

    # a stopped connector can be deleted; an unknown one cannot be stopped
    for name in (running, paused):
        await w.call("PUT", w.path(name, "/stop"))
        await w.call("DELETE", w.path(name))
        await w.until(w.path(name), lambda r: r.status_code == 404, "deleted")
        # the worker answers a deleted connector's last status (UNASSIGNED, type unknown) until it has read
        # the status tombstone; what every way must answer is the settled 404
        await w.until(w.path(name, "/status"), lambda r: r.status_code == 404, "status deleted")
        await w.call("GET", w.path(name, "/status"))
    await w.call("PUT", w.path(w.name("stop-ghost"), "/stop"))


async def test_stop_running_paused_and_stopped_then_pause_resume_and_delete(ways: list[Way]) -> None:
    await run_every_way(ways, stop_pause_resume_delete)


async def failed_stopped_resumed(w: Way, at_once: bool = False) -> None:
    """A source whose own offsets topic is not compacted fails at start (KafkaOffsetBackingStore.start:
    cleanup.policy must be compact), on every version; the topic is fixed, the connector stopped and
    resumed: it runs and reads its (busy) file from the start. ``at_once``: through the sidecar, the resume
    follows the stop's answer without a read in between; the worker often has not applied the stop yet
    (domain.offsets.stop). A 3.4 worker then pre-empts the restart the sidecar sends first, and 4.3.1 loses the
    resume: when its herder has not applied the STOPPED before the resume's STARTED is read, it applies only
    the latest target state (DistributedHerder.processTargetStateChanges), and a FAILED WorkerConnector goes
    to STOPPED only, never to STARTED, so the connector stays FAILED (seen in CI). The sidecar gives KIP-875's
    answer on both; the worker asked directly is not asked that, as it loses the resume itself."""
    name, topic, offsets_topic = w.connector("failed"), w.name("failed-lines"), w.name("failed-offsets")
    await create_topic(w.stack.bootstrap, offsets_topic, {"cleanup.policy": "delete"})
    source = w.home / "busy.txt"
    async with appending(source):
        config = {
            "connector.class": FILE_SOURCE,
            "tasks.max": "1",
            "file": str(source),
            "topic": topic,
            "offsets.storage.topic": offsets_topic,
        }
        await w.call("PUT", w.path(name, "/config"), json=config)
        await w.until_states(name, "FAILED", [])
        await w.call("GET", w.path(name, "/status"))
        await alter_topic(w.stack.bootstrap, offsets_topic, {"cleanup.policy": "compact"})
        await w.call("PUT", w.path(name, "/stop"))
        if not at_once or not w.via_sidecar:
            await w.until_states(name, "STOPPED", [])
        if not at_once:
            await w.call("GET", w.path(name, "/status"))
        await w.call("PUT", w.path(name, "/resume"))
        await w.until_states(name, "RUNNING", ["RUNNING"])
        await w.call("GET", w.path(name, "/status"))
        w.note("records after the resume", replay(await w.values_at_least(topic, 1500), 0))
        await w.call("PUT", w.path(name, "/stop"))
        await w.until_states(name, "STOPPED", [])
        offsets = await eventually(
            lambda: w.client.get(w.path(name, "/offsets")),
            lambda r: r.status_code == 200 and bool(r.json()["offsets"]),
            what=f"{w.label}: offsets of {name}",
        )
        w.note("offsets committed to its own topic", [e["partition"] for e in offsets.json()["offsets"]])


async def test_a_failed_connector_stopped_and_resumed_runs_again(ways: list[Way]) -> None:
    # a connector's own offsets.storage.topic is KIP-618's (3.3): older workers ignore the key
    await run_every_way(since(ways, "3.3"), failed_stopped_resumed)


async def test_a_failed_connector_resumed_as_soon_as_it_is_stopped_runs_again(ways: list[Way]) -> None:
    await run_every_way(since(ways, "3.3"), lambda w: failed_stopped_resumed(w, at_once=True))


async def written_as_a_worker_writes_it(w: Way, name: str, config: dict[str, str]) -> None:
    """A connector configuration straight into the cluster's config topic (``KafkaConfigBackingStore
    .putConnectorConfig``'s record): the worker starts it as if a client had created it, unvalidated."""
    key, value = encode_config(ConnectorConfig(name, config))
    producer = AIOKafkaProducer(bootstrap_servers=w.stack.bootstrap)
    await producer.start()
    try:
        await producer.send_and_wait(w.cluster.worker_property("config.storage.topic"), value, key=key)
    finally:
        await producer.stop()


async def failed_stopped_fixed_resumed(w: Way) -> None:
    """A source whose transformation class is not installed fails at start on every version
    (``Worker.startConnector``: its ``ConnectorConfig`` cannot be built; the connector is FAILED, no task
    configs are generated); stopped, its configuration fixed (it starts STOPPED), resumed: it runs."""
    name, topic = w.connector("failed-config"), w.name("failed-config-lines")
    source = w.home / "fixed.txt"
    source.write_text("".join(f"{i}\n" for i in range(5)))
    fixed = {"connector.class": FILE_SOURCE, "tasks.max": "1", "file": str(source), "topic": topic}
    broken = {**fixed, "transforms": "gone", "transforms.gone.type": "org.example.NotInstalled"}
    await written_as_a_worker_writes_it(w, name, broken)
    await w.until_states(name, "FAILED", [])
    await w.call("GET", w.path(name, "/status"))
    # not compared: the status right after the stop. 4.3.1 keeps showing FAILED (no WorkerConnector was
    # created, so none moves to STOPPED) until the config changes; the sidecar shows STOPPED at once
    await w.call("PUT", w.path(name, "/stop"))
    await w.call("PUT", w.path(name, "/config"), json=fixed)
    await w.until(w.path(name, "/config"), lambda r: r.json() == {**fixed, "name": name}, "the fixed config")
    await w.until_states(name, "STOPPED", [])
    await w.call("GET", w.path(name, "/status"))
    await w.call("GET", w.path(name, "/tasks"))
    await w.call("PUT", w.path(name, "/resume"))
    await w.until_states(name, "RUNNING", ["RUNNING"])
    await w.call("GET", w.path(name, "/status"))
    w.note("records after the resume", sorted(await w.values_at_least(topic, 5)))


async def test_a_connector_failed_by_its_config_stopped_fixed_and_resumed_runs_again(ways: list[Way]) -> None:
    await run_every_way(ways, failed_stopped_fixed_resumed)


async def answers_about_a_stopped_connector(w: Way) -> None:
    """What the sidecar answers itself about a connector it stopped on an old worker (its info and task
    configs, from the view; a restart plan, from the worker's PAUSED): 4.3.1's content negotiation first
    (415, 406), then 4.3.1's contents (STOPPED, no tasks)."""
    name, topic = w.connector("stopped-answers"), w.name("stopped-answers-lines")
    source = w.home / "stopped.txt"
    source.write_text("a\n")
    config = {"connector.class": FILE_SOURCE, "tasks.max": "1", "file": str(source), "topic": topic}
    await w.call("PUT", w.path(name, "/config"), json=config)
    await w.until_states(name, "RUNNING", ["RUNNING"])
    await w.call("PUT", w.path(name, "/stop"))
    await w.until_states(name, "STOPPED", [])
    await w.call("POST", w.path(name, "/restart?onlyFailed=true&includeTasks=true"))
    started = time.monotonic()  # a task it no longer has: 409 "... no known leader URL ...", no retry changes it
    await w.call("POST", w.path(name, "/tasks/0/restart"), once=True)
    assert time.monotonic() - started < 1.5, f"{w.label}: a client's rebalance 409 is answered at once, not retried"
    await w.call("GET", w.path(name, "/status"))
    for headers in ({"Content-Type": "text/plain"}, {"Accept": "text/html"}):
        for suffix in ("", "/tasks"):
            await w.call("GET", w.path(name, suffix), headers=headers, label=f"GET {suffix or 'info'} {headers}")


async def test_what_the_sidecar_answers_of_a_connector_it_stopped_is_4_3_1s(ways: list[Way]) -> None:
    await run_every_way(ways, answers_about_a_stopped_connector)
