"""The fault campaign's checker on small hand-made histories: each rule finds what it is for, and lets
pass what it must (overlapping writes in either order, an outcome never told, a fault on the sidecar itself)."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from control_plane.domain.auto_restart.schedule import Backoff
from tests.chaos.checker import (
    CONFIG,
    CONFIG_TOKEN,
    PATCH_KEY,
    TARGET_STATE,
    Limits,
    Violation,
    check,
    held_past_budget,
    lost_patches,
    lost_writes,
    ran_while_stopped,
    restarts_off_schedule,
    settled_at,
    summary,
)
from tests.chaos.history import Fault, FinalState, History, Observation, Op, Outcome, outcome_of

C = "c"


def op(
    id: str,
    kind: str,
    invoked: float,
    answered: float | None,
    status: int | None = 200,
    writes: Mapping[str, str] | None = None,
    sidecar: int = 0,
    sent: bool = True,
) -> Op:
    return Op(
        id, kind, C, sidecar, "PUT", f"/connectors/{C}", invoked, answered, status, outcome_of(status, sent=sent),
        writes if writes is not None else {CONFIG: id},
    )  # fmt: skip


def rules(found: list[Violation]) -> list[str]:
    return [v.rule for v in found]


@pytest.mark.parametrize(
    ("status", "sent", "outcome"),
    [
        pytest.param(200, True, Outcome.OK, id="2xx"),
        pytest.param(409, True, Outcome.FAIL, id="4xx"),
        pytest.param(504, True, Outcome.UNKNOWN, id="5xx"),
        pytest.param(500, True, Outcome.UNKNOWN, id="500"),
        pytest.param(503, True, Outcome.FAIL, id="the sidecar's refusal"),
        pytest.param(None, True, Outcome.UNKNOWN, id="no answer"),
        pytest.param(None, False, Outcome.FAIL, id="connection refused"),
    ],
)
def test_an_answer_tells_an_outcome(status: int | None, sent: bool, outcome: Outcome) -> None:
    assert outcome_of(status, sent=sent) is outcome


def test_the_last_acknowledged_write_is_kept() -> None:
    writes = [op("1", "put_config", 0, 1), op("2", "put_config", 2, 3)]
    assert lost_writes(CONFIG, C, writes, "2") == []


def test_an_acknowledged_write_reverted_by_an_earlier_one_is_lost() -> None:
    writes = [op("1", "put_config", 0, 1), op("2", "put_config", 2, 3)]
    assert rules(lost_writes(CONFIG, C, writes, "1")) == ["lost_write"]


def test_overlapping_writes_land_in_either_order() -> None:
    writes = [op("1", "put_config", 0, 3), op("2", "put_config", 1, 2)]
    assert lost_writes(CONFIG, C, writes, "1") == []
    assert lost_writes(CONFIG, C, writes, "2") == []


def test_a_write_answered_5xx_that_lands_after_a_later_acknowledged_write_loses_it() -> None:
    """The abandoned write: answered 504 at 2, another writer's PATCH sent at 3 and acknowledged, and the
    final config is the abandoned one's."""
    writes = [op("a", "put_config", 0, 2, status=504), op("b", "patch_config", 3, 4)]
    found = lost_writes(CONFIG, C, writes, "a")
    assert rules(found) == ["lost_write"] and "patch_config b" in found[0].evidence


def test_a_write_with_no_answer_may_land_at_any_time() -> None:
    writes = [op("a", "put_config", 0, None, status=None), op("b", "put_config", 3, 4)]
    assert lost_writes(CONFIG, C, writes, "a") == []


def test_a_refused_write_never_lands() -> None:
    writes = [op("a", "put_config", 0, 1, status=400)]
    assert rules(lost_writes(CONFIG, C, writes, "a")) == ["refused_write_landed"]


def test_an_acknowledged_create_of_a_connector_that_is_gone_is_lost() -> None:
    assert rules(lost_writes(CONFIG, C, [op("a", "create", 0, 1, status=201)], None)) == ["lost_write"]


def test_target_states_repeat_any_write_of_the_final_value_may_follow() -> None:
    stop = {TARGET_STATE: "STOPPED"}
    writes = [
        op("1", "stop", 0, 1, writes=stop),
        op("2", "resume", 2, 3, writes={TARGET_STATE: "RUNNING"}),
        op("3", "stop", 4, 5, writes=stop),
    ]
    assert lost_writes(TARGET_STATE, C, writes, "STOPPED") == []
    assert rules(lost_writes(TARGET_STATE, C, writes, "RUNNING")) == ["lost_write"]  # the last stop


def test_a_patch_key_is_kept_unless_a_put_may_have_replaced_it() -> None:
    patch = op("p", "patch_config", 0, 1)
    assert lost_patches(C, [patch], {CONFIG_TOKEN: "p", PATCH_KEY + "p": "p"}) == []
    assert rules(lost_patches(C, [patch], {CONFIG_TOKEN: "p"})) == ["lost_patch"]
    after = op("u", "put_config", 2, 3)
    assert lost_patches(C, [patch, after], {CONFIG_TOKEN: "u"}) == []
    before = op("u", "put_config", -2, -1)
    assert rules(lost_patches(C, [before, patch], {CONFIG_TOKEN: "p"})) == ["lost_patch"]
    applied = op("a", "apply", 2, 3)  # an apply's step writes the whole config, as a PUT
    assert lost_patches(C, [patch, applied], {CONFIG_TOKEN: "a"}) == []


def seen(at: float, running: bool = True) -> Observation:
    return Observation(at, C, running, "worker", "RUNNING" if running else "STOPPED")


def test_a_connector_created_stopped_never_runs_whatever_the_answer() -> None:
    create = op("c", "create", 0, 5, status=504, writes={CONFIG: "c", TARGET_STATE: "STOPPED"})
    assert rules(ran_while_stopped(C, [create], [seen(6)], settle_s=10)) == ["ran_while_stopped"]
    assert ran_while_stopped(C, [create], [seen(6, running=False)], settle_s=10) == []


def test_a_create_never_sent_or_refused_created_nothing() -> None:
    never_sent = op("c", "create", 0, None, status=None, sent=False, writes={CONFIG: "c", TARGET_STATE: "STOPPED"})
    refused = op("d", "create", 0, 1, status=503, writes={CONFIG: "d", TARGET_STATE: "STOPPED"})
    assert ran_while_stopped(C, [never_sent, refused], [seen(6)], settle_s=10) == []


def test_a_resume_lets_it_run() -> None:
    create = op("c", "create", 0, 1, status=201, writes={CONFIG: "c", TARGET_STATE: "PAUSED"})
    resume = op("r", "resume", 2, 3, status=202, writes={TARGET_STATE: "RUNNING"})
    assert ran_while_stopped(C, [create, resume], [seen(4)], settle_s=10) == []
    refused = op("r", "resume", 2, 3, status=404, writes={TARGET_STATE: "RUNNING"})
    assert rules(ran_while_stopped(C, [create, refused], [seen(4)], settle_s=10)) == ["ran_while_stopped"]


def test_an_acknowledged_stop_must_have_stopped_it_once_settled() -> None:
    stop = op("s", "stop", 0, 1, status=204, writes={TARGET_STATE: "STOPPED"})
    assert ran_while_stopped(C, [stop], [seen(5)], settle_s=10) == []  # still stopping
    assert rules(ran_while_stopped(C, [stop], [seen(12)], settle_s=10)) == ["ran_while_stopped"]
    unknown = op("s", "stop", 0, 1, status=500, writes={TARGET_STATE: "STOPPED"})
    assert ran_while_stopped(C, [unknown], [seen(12)], settle_s=10) == []
    paused = op("p", "pause", 0, 1, status=202, writes={TARGET_STATE: "PAUSED"})
    assert ran_while_stopped(C, [paused], [seen(12)], settle_s=10) == []  # a target state: lost_write's
    in_bulk = op("b", "bulk_stop", 0, 1, status=204, writes={TARGET_STATE: "STOPPED"})  # a bulk action's item
    assert rules(ran_while_stopped(C, [in_bulk], [seen(12)], settle_s=10)) == ["ran_while_stopped"]


def test_a_stall_of_the_worker_or_its_broker_does_not_count_towards_the_settle_time() -> None:
    stop = op("s", "stop", 1, 2, status=204, writes={TARGET_STATE: "STOPPED"})
    stall = Fault("worker_stall", "worker", 6, 13.5)
    assert settled_at(2, 10, [stall]) == pytest.approx(19.5)
    assert settled_at(2, 10, [stall, Fault("broker_stall", "broker", 15, 16)]) == pytest.approx(20.5)
    assert settled_at(2, 10, [Fault("sidecar_stall", "0", 6, 13.5), Fault("worker_stall", "worker", 30, 40)]) == 12
    assert ran_while_stopped(C, [stop], [seen(14), seen(19)], settle_s=10, faults=[stall]) == []
    assert rules(ran_while_stopped(C, [stop], [seen(20)], settle_s=10, faults=[stall])) == ["ran_while_stopped"]


def test_requests_held_past_the_budget() -> None:
    slow = op("1", "put_config", 0, 13)
    fast = op("2", "put_config", 0, 11)
    lost = op("3", "put_config", 0, None, status=None)
    refused = op("4", "put_config", 0, None, status=None, sent=False)
    history = History(ops=[slow, fast, lost, refused])
    assert [v.evidence.split(":")[0] for v in held_past_budget(history, 10, 2)] == [
        "answered after 13.00s",
        "no answer",
    ]


def test_a_request_to_a_sidecar_that_was_stopped_meanwhile_is_not_held_by_the_sidecar() -> None:
    slow = op("1", "put_config", 0, 30, sidecar=1)
    stalled = Fault("sidecar_stall", "1", 5, 12)
    elsewhere = Fault("sidecar_stall", "2", 5, 12)
    assert held_past_budget(History(ops=[slow], faults=[stalled]), 10, 2) == []
    assert rules(held_past_budget(History(ops=[slow], faults=[elsewhere]), 10, 2)) == ["held_past_budget"]


def test_restarts_on_schedule_and_off_it() -> None:
    backoff = Backoff(unit_s=1.0, max_restarts=3)
    # the first at once, then 2 s, then 6 s; a connector's and its task's requests within a second are one
    assert restarts_off_schedule({C: [10, 10.2, 12.1, 18.3]}, backoff, 0.5) == []
    early = restarts_off_schedule({C: [10, 11.2, 20]}, backoff, 0.5)
    assert rules(early) == ["restart_off_schedule"] and "due after 2s" in early[0].evidence
    storm = restarts_off_schedule({C: [float(t) for t in range(0, 40, 2)]}, backoff, 0.5)
    assert rules(storm) == ["restart_off_schedule", "restart_off_schedule"]
    assert "20 restarts, at most 3" in storm[0].evidence
    # sent during a stall of the worker, received as it ended: spaced from the stall's start
    stalled = [Fault("worker_stall", "worker", 8, 10.5)]  # ended over a second before it was received
    assert rules(restarts_off_schedule({C: [10, 12, 16]}, backoff, 0.5)) == ["restart_off_schedule"]
    assert restarts_off_schedule({C: [10, 12, 16]}, backoff, 0.5, [Fault("worker_stall", "worker", 9, 11.6)]) == []
    assert rules(restarts_off_schedule({C: [10, 12, 16]}, backoff, 0.5, stalled)) == ["restart_off_schedule"]


def test_the_whole_check_and_its_summary() -> None:
    ops = [
        op("setup", "create", 0, 0, status=201, writes={CONFIG: "setup", TARGET_STATE: "RUNNING"}, sidecar=-1),
        op("1", "put_config", 1, 2),
        op("2", "stop", 3, 4, status=204, writes={TARGET_STATE: "STOPPED"}),
    ]
    history = History(ops=ops, faults=[Fault("worker_stall", "worker", 1, 3)], observations=[seen(20)])
    final = FinalState({C: {CONFIG_TOKEN: "1"}}, {C: "STOPPED"}, {}, {"failing": [5.0]})
    found = check(history, final, Limits(budget_s=10, backoff=Backoff(1.0, max_restarts=3)))
    assert rules(found) == ["ran_while_stopped"]
    shown = summary(history, final, found)
    assert (shown["operations"], shown["faults_by_kind"], shown["violations"]) == (3, {"worker_stall": 1}, 1)
    assert shown["operations_by_kind"] == {"create ok": 1, "put_config ok": 1, "stop ok": 1}
