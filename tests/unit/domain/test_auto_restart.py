"""Auto-restart (domain/auto_restart/): Strimzi's schedule, what is due when, and one restart per failure
among several sidecars, over the sidecars' topic in memory."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from unittest.mock import ANY

import pytest

from control_plane.codecs.auto_restart import (
    AttemptError,
    RestartBudget,
    RestartPolicy,
    RestartState,
    decode_budget,
    decode_policy,
    decode_state,
    encode_budget,
    encode_policy,
    encode_state,
)
from control_plane.codecs.presence import SidecarPresence, decode_presence, encode_presence
from control_plane.codecs.results import Malformed, Tombstone, UnknownKey
from control_plane.domain.auto_restart import (
    NO_TOPIC,
    AutoRestart,
    AutoRestarter,
    Backoff,
    Budget,
    Selection,
    Step,
    next_step,
)
from control_plane.domain.auto_restart.schedule import attempted, first_waiting_first, given_up
from control_plane.domain.cluster.acting import OneActor, restarts, restarts_chosen
from control_plane.domain.cluster.fence import ConnectorFence
from control_plane.domain.errors import NotFoundError, Unsupported, WorkerRefused
from control_plane.domain.outcomes import Refusal
from control_plane.rest.resources.auto_restart import overview_json, restarts_json
from control_plane.storage.errors import WriteFailed
from control_plane.upstream import NoWorkerAvailable
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
    refusal: Exception | None = None  # what the workers answer a restart with (None: they take it)

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
        if self.refusal is not None:
            raise self.refusal


UNBOUNDED = Budget(0)


def sidecars(
    cluster: Cluster,
    topic: FakeSidecarsTopic,
    count: int,
    *,
    each_first: bool = False,
    budget: Budget = UNBOUNDED,
    **backoff: float,
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
                budget=budget,
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


REFUSED = WorkerRefused(500, "Failed to start connector: c")  # a 3.4.1 or 4.3.1 worker, the class gone


class CannotRecord(FakeSidecarsTopic):
    """The sidecars' topic, where the records whose key starts with ``failing`` cannot be written."""

    failing: bytes | None = None

    async def write(self, key: bytes, value: bytes | None) -> None:
        if self.failing is not None and key.startswith(self.failing):
            raise WriteFailed("the sidecars' topic has no leader")
        await super().write(key, value)


def records_of(topic: FakeSidecarsTopic, prefix: bytes) -> list[bytes | None]:
    return [value for key, value, _ in topic.records if key.startswith(prefix)]


def test_an_older_record_decodes_and_a_new_one_reads_back_with_its_refusal_and_reason() -> None:
    older = b'{"count": 2, "last_ms": 1000, "next_ms": 7000, "sidecar": "s0", "tasks": {"0": 2}, "gave_up": false}'
    assert decode_state(b"restart-state-c", older) == RestartState("c", 2, 1000, 7000, "s0", {0: 2})
    refused = RestartState("c", 3, 1000, None, "s0", {}, True, AttemptError(500, "Failed"), "3 restarts")
    assert decode_state(*encode_state(refused)) == refused
    unanswered = RestartState("c", 1, 1000, 3000, "s0", last_error=AttemptError(None, "timed out"))
    assert decode_state(*encode_state(unanswered)) == unanswered
    for bad in (b'"oops"', b'{"status": "500", "message": "m"}', b'{"status": 500}'):
        body = older[:-1] + b', "last_error": ' + bad + b"}"
        assert isinstance(decode_state(b"restart-state-c", body), Malformed)
    budget = RestartBudget("s0", (1000, 2000))
    assert decode_budget(*encode_budget(budget)) == budget
    assert isinstance(decode_budget(b"restart-budget-s0", b'{"times_ms": ["x"]}'), Malformed)
    assert isinstance(decode_budget(b"restart-state-c", older), UnknownKey)


def test_an_attempt_counts_whatever_the_answer_and_giving_up_says_why() -> None:
    backoff = Backoff(unit_s=1, max_restarts=2)
    first = attempted(None, "c", "s0", (0,), AttemptError(500, "Failed to start connector: c"), backoff, 1000)
    assert (first.count, first.next_ms, first.tasks, first.last_error) == (1, 3000, {0: 1}, AttemptError(500, ANY))
    second = attempted(first, "c", "s1", (0,), None, backoff, 3000)
    assert (second.count, second.next_ms, second.sidecar, second.last_error) == (2, 9000, "s1", None)
    done = given_up(attempted(second, "c", "s1", (), AttemptError(500, "Failed"), backoff, 9000), backoff)
    assert done.gave_up and done.next_ms is None
    assert done.gave_up_reason == (
        "3 restarts of at most 2 (AUTO_RESTART_MAX_RESTARTS) and it still fails; the worker refused the last one "
        "(500: Failed)"
    )


def test_the_budget_has_room_for_first_restarts_first_then_the_longest_waiting() -> None:
    assert Budget(2, 60).room(1) == 1 and Budget(2, 60).room(5) == 0 and Budget(0).room(1000) is None
    waiting = [("b", RestartState("b", 1, 0, 5000, "s")), ("z", None), ("a", RestartState("a", 1, 0, 9000, "s"))]
    assert first_waiting_first(waiting) == ["z", "b", "a"]


def test_an_older_presence_is_ready_and_restarts_chosen_ones_as_it_restarts_any() -> None:
    older = b'{"url": null, "version": "0.1", "interval_ms": 5000, "auto_restart": true}'
    presence = decode_presence(b"sidecar-old", older)
    assert isinstance(presence, SidecarPresence)
    assert presence.ready and presence.restarts_chosen()
    now = SidecarPresence("s", None, "1", 5000, auto_restart=False, auto_restart_chosen=True, ready=False)
    assert decode_presence(*encode_presence(now)) == now


def test_the_actor_is_the_first_ready_and_willing_sidecar() -> None:
    table = SidecarTable()
    actor = OneActor(table, "c", restarts, now_ms=lambda: 1000, fallback=restarts_chosen)
    assert actor.acting_sidecar() is None  # nobody can
    table.apply(SidecarPresence("a", None, "1", 60_000, auto_restart=False, auto_restart_chosen=True), 1000)
    assert actor.acting_sidecar() == "a"  # AUTO_RESTART off: only the connectors an operator chose, nobody else
    table.apply(SidecarPresence("b", None, "1", 60_000, auto_restart=True, auto_restart_chosen=True, ready=False), 1000)
    assert actor.acting_sidecar() == "a"  # willing, not ready
    table.apply(SidecarPresence("c", None, "1", 60_000, auto_restart=True, auto_restart_chosen=True), 1000)
    assert actor.acting_sidecar() == "c" and actor.acting()  # AUTO_RESTART on, first of those ready
    table.apply(SidecarPresence("b", None, "1", 60_000, auto_restart=True, auto_restart_chosen=True), 1000)
    assert actor.acting_sidecar() == "b" and not actor.acting()


async def test_a_refused_restart_is_counted_backed_off_and_given_up_with_its_reason() -> None:
    cluster = Cluster(statuses={"c": status("FAILED", "FAILED", "RUNNING")}, refusal=REFUSED)
    topic = FakeSidecarsTopic(lambda: cluster.now)
    (one,) = sidecars(cluster, topic, 1, max=3)
    for _ in range(300):  # 30 s of passes every 0.1 s: the storm a refusal made
        await one.check()
        cluster.now += 100
    await cluster.read()
    assert len(cluster.plans) == 3  # at once, 2 s and 8 s after; given up 12 s after the third
    assert [one.counts[o] for o in ("refused", "restarted", "gave_up", "failed")] == [3, 0, 1, 0]
    report = restarts_json(one.report_of("c"))
    assert (report["restarts"], report["gave_up"], report["next_restart_ms"]) == (3, True, None)
    assert report["last_error"] == {"status": 500, "message": "Failed to start connector: c"}
    assert "3 restarts of at most 3" in report["gave_up_reason"] and "(500: Failed" in report["gave_up_reason"]
    assert report["tasks"] == {"0": {"restarts": 3}}
    # each attempt recorded before it is made and once answered, and giving up: nothing more
    assert len(records_of(topic, b"restart-state-")) == 7


async def test_a_worker_that_does_not_answer_is_an_attempt_without_a_status() -> None:
    cluster = Cluster(statuses={"c": status("FAILED")}, refusal=NoWorkerAvailable([]))
    topic = FakeSidecarsTopic(lambda: cluster.now)
    (one,) = sidecars(cluster, topic, 1)
    await one.check()
    await one.check()
    await cluster.read()
    shown = one.report_of("c")
    assert len(cluster.plans) == 1 and shown.restarts == 1 and shown.last_error is not None
    assert shown.last_error.status is None and one.counts["refused"] == 1


async def test_an_attempt_that_cannot_be_recorded_is_not_made() -> None:
    cluster = Cluster(statuses={"c": status("FAILED")})
    topic = CannotRecord(lambda: cluster.now)
    topic.failing = b"restart-state-"
    (one,) = sidecars(cluster, topic, 1)
    for _ in range(19):
        await one.check()
        cluster.now += 100
    assert cluster.plans == []  # never a restart the next sidecar to act would not know of
    assert one.counts["failed"] >= 1
    topic.failing = None
    for _ in range(11):  # passes wait at most the schedule's unit (1 s) once the topic is back
        await one.check()
        cluster.now += 100
    await cluster.read()
    assert len(cluster.plans) == 1 and one.report_of("c").restarts == 1  # recorded, counting on


async def test_a_topic_that_cannot_be_written_backs_the_passes_off() -> None:
    cluster = Cluster(statuses={"c": status("FAILED")})
    topic = CannotRecord(lambda: cluster.now)
    (one,) = sidecars(cluster, topic, 1, budget=Budget(5, 60))
    topic.failing = b"restart-"  # neither the budget's record nor the attempt's: nothing is sent
    for _ in range(100):  # 10 s of passes every 0.1 s
        await one.check()
        cluster.now += 100
    assert cluster.plans == []
    assert one.counts["failed"] == 0  # the budget's record failed first: no fence taken, no restart
    topic.failing = None
    for _ in range(11):  # passes wait at most the schedule's unit (1 s) once the topic is back
        await one.check()
        cluster.now += 100
    assert len(cluster.plans) == 1


async def test_the_clusters_budget_holds_back_what_does_not_fit_and_holds_across_sidecars() -> None:
    statuses = {c: status("FAILED", name=c) for c in ("a", "b", "c")}
    cluster = Cluster(statuses=statuses)
    topic = FakeSidecarsTopic(lambda: cluster.now)
    first, second = sidecars(cluster, topic, 2, budget=Budget(2, 60))
    await first.check()
    await cluster.read()
    assert sorted(p.name for p in cluster.plans) == ["a", "b"]
    use = first.budget_use()
    assert (use.spent, use.held_back) == (2, ("c",)) and second.budget_use() == use  # every sidecar sees it
    assert second.report_of("c").held_back and not second.report_of("a").held_back
    overview = overview_json(second.overview())
    assert overview["budget"] == {"restarts": 2, "window_s": 60, "spent": 2, "held_back": ["c"]}
    (table,) = {id(t): t for t in cluster.tables}.values()
    table.apply(SidecarPresence("s0", None, "0", 1), int(cluster.now))  # the first one leaves: the second acts
    cluster.now += 10_000
    await second.check()
    assert len(cluster.plans) == 2  # the first one's restarts count still
    cluster.now += 50_001  # out of the window: room for the held one, and for a's and b's second
    await second.check()
    await cluster.read()
    assert sorted(p.name for p in cluster.plans[2:]) == ["a", "c"]  # first restarts first, then the longest due
    assert second.report_of("c").restarts == 1 and second.report_of("b").held_back
