"""What the cluster holds once the faults healed, read past the sidecars: each connector's config from the
worker, its target state and source offset from Connect's config and offsets topics, what its status records
say ran (the status topic keeps every state a worker wrote, with its time), and the restart requests the
worker's own request log shows. The decoding is pure (``target_states``, ``positions``, ``status_sightings``,
``restart_requests``), tested on hand-made records."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path

import httpx

from control_plane.codecs import ConnectorStatus, SourceOffset, TargetState, TaskStatus, decode_config, decode_offset
from control_plane.codecs.status import decode_status
from tests.support.kafka_topics import TopicRecord, read_to_end
from tests.support.waiting import eventually

from .cluster import Cluster
from .history import Clock, FinalState, Observation

STARTED = "STARTED"  # Connect's running target state, as written
# Connect's request log (RestServer's, at INFO): the time of the line and the request line
RESTART_LINE = re.compile(
    r"^\[(?P<at>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] INFO "
    r'.*"POST /connectors/(?P<name>[^/ ?]+)/(?:tasks/\d+/)?restart[ ?][^"]*" (?P<status>\d{3}) '
)
NOT_TAKEN = "409"  # the worker rebalancing: it did nothing (the sidecar's client sends it again, one attempt)


def target_states(records: Iterable[TopicRecord]) -> dict[str, str]:
    """Each connector's last target state in the config topic (RUNNING for Connect's STARTED)."""
    states: dict[str, str] = {}
    for r in records:
        decoded = decode_config(r.key, r.value)
        if isinstance(decoded, TargetState):
            state = decoded.effective
            states[decoded.connector] = "RUNNING" if state == STARTED else state
    return states


def positions(records: Iterable[TopicRecord]) -> dict[str, str | None]:
    """Each connector's last source offset ``position`` in the offsets topic (None: removed)."""
    found: dict[str, str | None] = {}
    for r in records:
        decoded = decode_offset(r.key, r.value)
        if isinstance(decoded, SourceOffset):
            found[decoded.connector] = str(decoded.offset.get("position"))
    return found


def status_sightings(records: Iterable[TopicRecord], clock: Clock) -> list[Observation]:
    """Every connector and task state in the status topic, at the time its record was written."""
    seen = []
    for r in records:
        decoded = decode_status(r.key, r.value)
        if isinstance(decoded, ConnectorStatus | TaskStatus):
            what = "connector" if isinstance(decoded, ConnectorStatus) else f"task {decoded.task}"
            at = clock.of_wall(r.timestamp / 1000)
            seen.append(
                Observation(
                    at, decoded.connector, decoded.state == "RUNNING", "status topic", f"{what} {decoded.state}"
                )
            )
    return seen


def restart_requests(lines: Iterable[str], connectors: Sequence[str], clock: Clock) -> dict[str, list[float]]:
    """When the worker received each restart request (of a connector, or of one of its tasks) of
    ``connectors`` that it did not refuse for a rebalance (409), from its log (written in the machine's local
    time)."""
    found: dict[str, list[float]] = {c: [] for c in connectors}
    for line in lines:
        match = RESTART_LINE.match(line)
        if match and match["name"] in found and match["status"] != NOT_TAKEN:
            wall = datetime.strptime(match["at"], "%Y-%m-%d %H:%M:%S,%f").timestamp()
            found[match["name"]].append(clock.of_wall(wall))
    return found


async def read_final(
    cluster: Cluster, connectors: Sequence[str], failing: Sequence[str], clock: Clock
) -> tuple[FinalState, list[Observation]]:
    configs: dict[str, dict[str, str] | None] = {}
    async with httpx.AsyncClient(base_url=cluster.worker_url, timeout=30) as worker:
        for name in connectors:
            answer = await eventually(
                lambda: worker.get(f"/connectors/{name}/config"),  # noqa: B023 - awaited at once
                lambda a: a.status_code in (200, 404),
                timeout_s=60,
                what=f"the worker's answer on {name}",
            )
            configs[name] = answer.json() if answer.status_code == 200 else None
    bootstrap = cluster.broker.bootstrap
    config_topic = await read_to_end(bootstrap, cluster.topic("configs"))
    offsets_topic = await read_to_end(bootstrap, cluster.topic("offsets"))
    status_topic = await read_to_end(bootstrap, cluster.topic("status"))
    log = Path(cluster.worker_log).read_text(errors="replace").splitlines()
    final = FinalState(
        configs,
        target_states(config_topic.records),
        positions(offsets_topic.records),
        restart_requests(log, failing, clock),
    )
    return final, status_sightings(status_topic.records, clock)
