"""Auto-restart (domain/auto_restart/): Strimzi's schedule, what is due when, and one restart per failure
among several sidecars, over the sidecars' topic in memory."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pytest

from control_plane.codecs.auto_restart import (
    RestartPolicy,
    RestartState,
    decode_policy,
    decode_state,
    encode_policy,
    encode_state,
)
from control_plane.codecs.presence import SidecarPresence
from control_plane.codecs.results import Malformed, Tombstone, UnknownKey
from control_plane.domain.auto_restart import NO_TOPIC, AutoRestart, AutoRestarter, Backoff, Selection, Step, next_step
from control_plane.domain.cluster.acting import OneActor, restarts
from control_plane.domain.cluster.fence import ConnectorFence
from control_plane.domain.errors import NotFoundError, Unsupported
from control_plane.domain.outcomes import Refusal
from control_plane.rest.resources.auto_restart import restarts_json
from control_plane.view import ConnectorStateView, StateEntry
from control_plane.view.sidecars import SidecarTable
from tests.support.fakes import FakeSidecarReader, FakeSidecarsTopic


def entry(state: str) -> StateEntry:
    return StateEntry(state, "w:8083", "trace" if state == "FAILED" else None, None, 1)


def status(connector: str, *tasks: str, name: str = "c") -> ConnectorStateView:
    return ConnectorStateView(name, entry(connector), tuple((i, entry(t)) for i, t in enumerate(tasks)), "source")


def test_the_default_schedule_is_strimzis() -> None:
    backoff = Backoff()
    assert [backoff.delay_s(n) / 60 for n in range(10)] == [0, 2, 6, 12, 20, 30, 42, 56, 60, 60]
    assert Backoff(unit_s=1, cap_s=5).delay_s(3) == 5


def test_the_records_read_back_as_written() -> None:
    state = RestartState("c", 2, 1000, 7000, "s0", {0: 2, 3: 1}, False)
    assert decode_state(*encode_state(state)) == state
    assert decode_state(*encode_state(Tombstone("c"))) == Tombstone("c")
    assert decode_policy(*encode_policy(RestartPolicy("c", False))) == RestartPolicy("c", False)
    assert decode_policy(*encode_policy(Tombstone("c"))) == Tombstone("c")
    assert isinstance(decode_state(b"restart-state-c", b'{"count": -1}'), Malformed)
    assert isinstance(decode_policy(b"restart-policy-c", b'{"enabled": "yes"}'), Malformed)
    assert isinstance(decode_state(b"fence-c", b"{}"), UnknownKey)


@pytest.mark.parametrize(
    ("now", "current", "target", "state", "expected"),
    [
        (0, status("RUNNING", "RUNNING"), "STARTED", None, None),
        (0, status("RUNNING", "FAILED"), "STARTED", None, Step.RESTART),
        (0, status("FAILED"), None, None, Step.RESTART),
        (0, status("RUNNING", "FAILED"), "PAUSED", None, None),  # an operator's choice
        (0, status("STOPPED"), "STOPPED", None, None),
        (1999, status("FAILED"), "STARTED", RestartState("c", 1, 0, 2000, "s"), None),  # not due yet
        (2000, status("FAILED"), "STARTED", RestartState("c", 1, 0, 2000, "s"), Step.RESTART),
        (9000, status("FAILED"), "STARTED", RestartState("c", 3, 0, 9000, "s"), Step.GIVE_UP),  # 3 of 3
        (9000, status("FAILED"), "STARTED", RestartState("c", 3, 0, None, "s", gave_up=True), None),
        (1999, status("RUNNING", "RUNNING"), "STARTED", RestartState("c", 1, 0, 2000, "s"), None),
        (2000, status("RUNNING", "RUNNING"), "STARTED", RestartState("c", 1, 0, 2000, "s"), Step.RESET),
        (2000, status("RUNNING", "UNASSIGNED"), "STARTED", RestartState("c", 1, 0, 2000, "s"), None),
        (0, None, None, RestartState("c", 1, 0, 2000, "s"), Step.RESET),  # deleted
    ],
)
def test_what_is_due(
    now: float, current: ConnectorStateView | None, target: str | None, state: RestartState | None, expected: Step
) -> None:
    assert next_step(current, target, True, state, Backoff(unit_s=1, max_restarts=3), now) == expected


def test_not_chosen_is_never_restarted() -> None:
    assert next_step(status("FAILED"), "STARTED", False, None, Backoff(), 0) is None
    chosen = Selection(True, re.compile("orders-.*"))
    assert chosen.covers("orders-1", None) and not chosen.covers("payments", None)
    assert chosen.covers("payments", True) and not chosen.covers("orders-1", False)  # the connector's choice wins
    assert not Selection().covers("c", None)  # off unless enabled


@dataclass(frozen=True)
class Restarted:
    """What the workers were asked to restart: the connector's instance or not, and which tasks."""

    name: str
    restarts_connector: bool
    tasks: tuple[int, ...]


@dataclass
class Cluster:
    """What every sidecar's view shows, and what the workers were asked to restart."""

    statuses: dict[str, ConnectorStateView] = field(default_factory=dict)
    targets: dict[str, str] = field(default_factory=dict)
    plans: list[Restarted] = field(default_factory=list)
    now: float = 1_000_000.0
    readers: list[FakeSidecarReader] = field(default_factory=list)  # each sidecar's tail of the sidecars' topic
    tables: list[SidecarTable] = field(default_factory=list)  # each sidecar's table of presences

    async def read(self) -> None:
        """Every sidecar's view reads the sidecars' topic (a real tail reads it as it is written)."""
        for reader in self.readers:
            await reader.read_to_end("sidecars", 1)

    def status(self, connector: str) -> ConnectorStateView | None:
        return self.statuses.get(connector)

    def target_state(self, connector: str) -> str | None:
        return self.targets.get(connector, "STARTED")

    def failing(self) -> list[str]:
        return [c for c, s in self.statuses.items() if "FAILED" in (s.connector.state, *(t.state for _, t in s.tasks))]

    def ready(self) -> bool:
        return True

    def config(self, connector: str) -> Mapping[str, str | None] | None:
        return {"connector.class": "X"} if connector in self.statuses else None

    async def restart_instances(self, connector: str, *, connector_instance: bool, tasks: Sequence[int]) -> None:
        await asyncio.sleep(0.001)
        self.plans.append(Restarted(connector, connector_instance, tuple(tasks)))


def sidecars(
    cluster: Cluster, topic: FakeSidecarsTopic, count: int, *, each_first: bool = False, **backoff: float
) -> list[AutoRestarter]:
    """``count`` sidecars on one topic; ``each_first``: each believes it is the first (they disagree)."""
    shared = SidecarTable()
    made = []
    for i in range(count):
        table = SidecarTable() if each_first else shared
        table.apply(SidecarPresence(f"s{i}", None, "0", 60_000, auto_restart=True), int(cluster.now))
        cluster.tables.append(table)
        reader = topic.reader()
        fence = ConnectorFence(
            topic, reader, sidecar=f"s{i}", lease_s=5, wait_s=5, read_timeout_s=1, now_ms=lambda: cluster.now
        )
        cluster.readers.append(reader)
        made.append(
            AutoRestarter(
                cluster,
                reader.auto_restarts,
                OneActor(table, f"s{i}", restarts, now_ms=lambda: cluster.now),
                fence,
                topic,
                reader,
                cluster,
                backoff=Backoff(unit_s=backoff.get("unit_s", 1.0), max_restarts=int(backoff.get("max", 0)) or None),
                selection=Selection(True),
                interval_s=0.05,
                read_timeout_s=1,
                now_ms=lambda: cluster.now,
            )
        )
    return made


async def test_one_sidecar_restarts_what_failed_once_per_due_time() -> None:
    cluster = Cluster(statuses={"c": status("RUNNING", "RUNNING", "FAILED")})
    topic = FakeSidecarsTopic(lambda: cluster.now)
    first, second = sidecars(cluster, topic, 2)
    assert first.acting() and not second.acting()
    await asyncio.gather(first.check(), second.check())
    await first.check()
    assert [(p.restarts_connector, p.tasks) for p in cluster.plans] == [(False, (1,))]  # the failed task only
    await cluster.read()
    shown = restarts_json(second.report_of("c"))  # every sidecar reads the same record
    assert (shown["restarts"], shown["by_sidecar"], shown["tasks"]) == (1, "s0", {"1": {"restarts": 1}})
    assert shown["next_restart_ms"] == cluster.now + 2000  # 1 s unit: 2 s after the first
    cluster.now += 1999
    await first.check()
    assert len(cluster.plans) == 1
    cluster.now += 1
    await first.check()
    await cluster.read()
    assert len(cluster.plans) == 2 and first.report_of("c").restarts == 2
    assert first.counts["restarted"] == 2 and second.counts["restarted"] == 0


async def test_sidecars_that_both_think_they_act_restart_once() -> None:
    cluster = Cluster(statuses={"c": status("FAILED")})
    topic = FakeSidecarsTopic(lambda: cluster.now)
    both = sidecars(cluster, topic, 2, each_first=True)
    assert all(s.acting() for s in both)
    await asyncio.gather(*(s.check() for s in both))
    assert len(cluster.plans) == 1 and cluster.plans[0].restarts_connector


async def test_it_gives_up_after_the_count_and_starts_over_once_healthy() -> None:
    cluster = Cluster(statuses={"c": status("RUNNING", "FAILED")})
    topic = FakeSidecarsTopic(lambda: cluster.now)
    (one,) = sidecars(cluster, topic, 1, max=2)
    for _ in range(4):
        await one.check()
        cluster.now += 10_000
    assert len(cluster.plans) == 2
    await cluster.read()
    report = one.report_of("c")
    assert (report.gave_up, report.next_restart_ms, dict(one.gave_up())) == (True, None, {"c": 2})
    cluster.statuses["c"] = status("RUNNING", "RUNNING")  # restarted by hand
    await one.check()
    await cluster.read()
    assert one.report_of("c").restarts == 0 and one.counts["reset"] == 1


async def test_paused_or_not_chosen_connectors_are_left_alone_and_a_choice_is_shared() -> None:
    cluster = Cluster(statuses={"p": status("FAILED", name="p"), "c": status("FAILED")}, targets={"p": "PAUSED"})
    topic = FakeSidecarsTopic(lambda: cluster.now)
    first, second = sidecars(cluster, topic, 2)
    shown = await second.choose("c", False)  # through another sidecar
    assert (shown.enabled, shown.chosen_by) == (False, "connector")
    await first.check()
    assert cluster.plans == []
    assert (await first.choose("c", None)).chosen_by == "settings"
    await first.check()
    assert [p.name for p in cluster.plans] == ["c"]
    with pytest.raises(NotFoundError, match="Connector nobody not found"):
        first.report_of("nobody")


async def test_a_sidecar_that_cannot_restart_is_passed_over() -> None:
    cluster = Cluster(statuses={"c": status("FAILED")})
    topic = FakeSidecarsTopic(lambda: cluster.now)
    (one,) = sidecars(cluster, topic, 1)
    (table,) = cluster.tables  # an older release, first by id, that does not restart
    table.apply(SidecarPresence("a-older", None, "0", 60_000), int(cluster.now))
    assert one.acting() and one.overview().acting_sidecar == "s0"
    await one.check()
    assert len(cluster.plans) == 1


async def test_without_the_sidecars_topic_every_request_says_so() -> None:
    feature = AutoRestart(None)
    for refused in (feature.overview(), feature.report("c"), await feature.choose("c", True)):
        assert isinstance(refused, Refusal) and isinstance(refused.error, Unsupported)
        assert refused.error.message == NO_TOPIC
