"""The checker: pure rules over a campaign's history and the final state (docs/chaos.md, "The checks").

Time is the campaign's clock. A write's effect happens at some point between its invocation and its end; a
write whose outcome is told (any answer, a 5xx included) ends at its answer: a write sent after that answer
must take effect after it (the sidecar keeps the connector's fence until the outcome is known, so an
abandoned write can never land after another writer's acknowledged one). A write with no answer at all (a
timeout, a broken connection) may take effect at any time after its invocation. A refused write (4xx, or a
connection refused) never takes effect.

The rules:

- ``lost_write``: in each register of a connector (its config, read through the token every config write
  puts in ``campaign.write``; its target state; its source offset), every acknowledged write is the final
  value, or a write of the final value (not refused, not itself) may follow it: one with no answer, or one
  answered after the acknowledged write was invoked. Overlapping writes may land in either order.
- ``lost_patch``: every acknowledged PATCH's own key (``campaign.patch.<op>``) is in the final config,
  unless a full config write (PUT, not refused) may follow the PATCH and so replaced it.
- ``refused_write_landed``: no final value is only explained by a refused write.
- ``ran_while_stopped``: a connector created STOPPED or PAUSED (whatever the answer, but a refusal: a
  create never sent, or refused, created nothing) never runs, nor one
  acknowledged stopped once ``settle_s`` of the worker's time passed after the answer (the worker stops it
  after the write, as Connect does; a stalled worker, or one whose broker stalls, applies nothing, so a
  stall's time does not count, as a native stop followed by a stall shows the connector running until the
  stall ends), unless a resume (not refused) invoked before the sighting may follow the create or stop.
  A pause is Connect's to apply to the tasks: its acknowledgement is checked as a target state only.
- ``held_past_budget``: every request is answered within the request budget and ``slack_s``, but for one
  sent to a sidecar that was itself stopped or killed while it was under way (no sidecar can answer then).
- ``restart_off_schedule``: the restart requests the worker received for a failing connector (those within a
  second are one attempt) number at most the schedule's limit and are spaced at least as the schedule says;
  one received just after a stall of the worker may have been sent during the stall, and is spaced from then.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from control_plane.domain.auto_restart.schedule import Backoff

from .history import Fault, FinalState, History, Observation, Op, Outcome

CONFIG_TOKEN = "campaign.write"
PATCH_KEY = "campaign.patch."
HOLDING_STATES = ("STOPPED", "PAUSED")
FULL_CONFIG_WRITES = ("put_config", "create", "apply")
STOPS = ("stop", "bulk_stop")
CONFIG, TARGET_STATE, OFFSET = "config", "target state", "offset"
SIDECAR_FAULTS = ("sidecar_kill", "sidecar_stall")
ONE_ATTEMPT_S = 1.0  # restart requests this close together are one attempt (a connector's and its tasks')


@dataclass(frozen=True)
class Violation:
    rule: str
    connector: str
    evidence: str


@dataclass(frozen=True)
class Limits:
    """What the sidecars were set to: their request budget and auto-restart schedule; the slack a request
    may take beyond the budget, and how long a worker may take to stop a connector after a stop's answer."""

    budget_s: float
    backoff: Backoff
    slack_s: float = 2.0
    settle_s: float = 10.0
    schedule_tolerance_s: float = 1.0


def may_follow(later: Op, earlier: Op) -> bool:
    """Whether ``later``'s effect may come after ``earlier``'s: it had no answer, or it was answered after
    ``earlier`` was invoked."""
    return later.outcome is not Outcome.FAIL and (later.answered is None or later.answered > earlier.invoked)


def lost_writes(register: str, connector: str, ops: Sequence[Op], final: str | None) -> list[Violation]:
    """``lost_write`` and ``refused_write_landed`` over the writes of one register and its final value."""
    writes = [o for o in ops if register in o.writes]
    holders = [w for w in writes if w.value(register) == final]
    kept = [w for w in holders if w.outcome is not Outcome.FAIL]
    found: list[Violation] = []
    if holders and not kept:
        refused = ", ".join(f"{w.id} ({w.status})" for w in holders)
        found.append(Violation("refused_write_landed", connector, f"{register} is {final!r}, written by {refused}"))
    for w in writes:
        if w.outcome is Outcome.OK and w.value(register) != final and not any(may_follow(f, w) for f in kept):
            found.append(
                Violation(
                    "lost_write",
                    connector,
                    f"{register}: {w.kind} {w.id} ({w.value(register)!r}) answered {w.status} at {w.answered:.2f}s "
                    f"(sent at {w.invoked:.2f}s through sidecar {w.sidecar}); final {final!r}"
                    + (f", last written by {_when(kept[-1])}" if kept else ", written by no write"),
                )
            )
    return found


def lost_patches(connector: str, ops: Sequence[Op], final: dict[str, str] | None) -> list[Violation]:
    if final is None:
        return []  # no connector: lost_write says so
    wipers = [o for o in ops if o.kind in FULL_CONFIG_WRITES]
    found = []
    for p in ops:
        if p.kind != "patch_config" or p.outcome is not Outcome.OK or final.get(PATCH_KEY + p.id) == p.id:
            continue
        if not any(may_follow(u, p) for u in wipers):
            found.append(Violation("lost_patch", connector, f"the key of PATCH {_when(p)} is not in the final config"))
    return found


STALLS_OF_THE_WORKER = frozenset({"worker_stall", "broker_stall"})


def settled_at(start: float, settle_s: float, faults: Iterable[Fault]) -> float:
    """When ``settle_s`` of the worker's own time has passed since ``start``: the time of a stall of the
    worker or its broker does not count."""
    at, left = start, settle_s
    for f in sorted((f for f in faults if f.kind in STALLS_OF_THE_WORKER and f.end > start), key=lambda f: f.start):
        if f.start >= at + left:
            break
        left -= max(0.0, f.start - at)
        at = max(at, f.end)
    return at + left


def ran_while_stopped(
    connector: str,
    ops: Sequence[Op],
    observations: Iterable[Observation],
    settle_s: float,
    faults: Sequence[Fault] = (),
) -> list[Violation]:
    starters = [o for o in ops if o.outcome is not Outcome.FAIL and o.value(TARGET_STATE) == "RUNNING"]
    holds: list[tuple[Op, float]] = [
        (o, o.invoked)
        for o in ops
        if o.kind == "create" and o.outcome is not Outcome.FAIL and o.value(TARGET_STATE) in HOLDING_STATES
    ]
    holds += [
        (o, settled_at(o.answered, settle_s, faults))
        for o in ops
        if o.kind in STOPS and o.outcome is Outcome.OK and o.answered is not None
    ]
    found = []
    for seen in observations:
        if not seen.running:
            continue
        for hold, since in holds:
            if seen.at < since:
                continue
            if any(r.invoked < seen.at and may_follow(r, hold) for r in starters):
                continue
            found.append(
                Violation(
                    "ran_while_stopped",
                    connector,
                    f"RUNNING at {seen.at:.2f}s ({seen.source}: {seen.detail}) after "
                    f"{_when(hold)} ({hold.value(TARGET_STATE)}), no resume since",
                )
            )
            break
    return found[:1] + (
        [] if len(found) <= 1 else [Violation("ran_while_stopped", connector, f"and {len(found) - 1} sightings more")]
    )


def held_past_budget(history: History, budget_s: float, slack_s: float) -> list[Violation]:
    found = []
    for o in history.ops:
        if o.sidecar < 0 or (o.outcome is Outcome.FAIL and o.answered is None):
            continue  # straight to the worker (the campaign's set-up), or never sent: the sidecar was not listening
        end = o.answered
        if _sidecar_fault_during(history, o):
            continue
        if end is None:
            found.append(Violation("held_past_budget", o.connector, f"no answer: {_when(o)}: {o.answer}"))
        elif end - o.invoked > budget_s + slack_s:
            found.append(
                Violation("held_past_budget", o.connector, f"answered after {end - o.invoked:.2f}s: {_when(o)}")
            )
    return found


def sent_no_earlier_than(received: float, faults: Iterable[Fault]) -> float:
    """The earliest time a restart the worker received at ``received`` may have been sent: a request sent
    while the worker was stalled is received when the stall ends, so one received within a second after a
    stall of the worker may have been sent at any time during it."""
    for f in faults:
        if f.kind in STALLS_OF_THE_WORKER and f.end <= received <= f.end + ONE_ATTEMPT_S:
            return min(received, f.start)
    return received


def restarts_off_schedule(
    restarts: dict[str, list[float]], backoff: Backoff, tolerance_s: float, faults: Sequence[Fault] = ()
) -> list[Violation]:
    found = []
    for connector, times in restarts.items():
        attempts: list[float] = []
        for t in sorted(times):
            if not attempts or t - attempts[-1] > ONE_ATTEMPT_S:
                attempts.append(t)
        if backoff.max_restarts is not None and len(attempts) > backoff.max_restarts:
            found.append(
                Violation(
                    "restart_off_schedule",
                    connector,
                    f"{len(attempts)} restarts, at most {backoff.max_restarts} allowed: at "
                    + ", ".join(f"{t:.1f}s" for t in attempts[:10])
                    + (" ..." if len(attempts) > 10 else ""),
                )
            )
        gaps = [(k, attempts[k] - sent_no_earlier_than(attempts[k - 1], faults)) for k in range(1, len(attempts))]
        early = [(k, gap) for k, gap in gaps if gap < backoff.delay_s(k) - tolerance_s]
        if early:
            k, gap = early[0]
            found.append(
                Violation(
                    "restart_off_schedule",
                    connector,
                    f"restart {k + 1} came {gap:.2f}s after the one before, due after {backoff.delay_s(k):g}s"
                    + (f" ({len(early)} early in all)" if len(early) > 1 else ""),
                )
            )
    return found


def check(history: History, final: FinalState, limits: Limits) -> list[Violation]:
    """Every rule over the whole history."""
    by_connector: dict[str, list[Op]] = {}
    for o in history.ops:
        by_connector.setdefault(o.connector, []).append(o)
    found: list[Violation] = []
    for connector, ops in sorted(by_connector.items()):
        config = final.configs.get(connector)
        found += lost_writes(CONFIG, connector, ops, None if config is None else config.get(CONFIG_TOKEN))
        found += lost_patches(connector, ops, config)
        if config is not None:  # else its create was lost or never happened: the config's rule says which
            found += lost_writes(TARGET_STATE, connector, ops, final.target_states.get(connector, "RUNNING"))
            found += lost_writes(OFFSET, connector, ops, final.positions.get(connector))
        seen = [s for s in history.observations if s.connector == connector]
        found += ran_while_stopped(connector, ops, seen, limits.settle_s, history.faults)
    found += held_past_budget(history, limits.budget_s, limits.slack_s)
    found += restarts_off_schedule(final.restarts, limits.backoff, limits.schedule_tolerance_s, history.faults)
    return found


def summary(history: History, final: FinalState, violations: Sequence[Violation]) -> dict[str, Any]:
    """The campaign's figures: operations by kind and outcome, faults by kind, violations by rule and each."""
    return {
        "operations": len(history.ops),
        "operations_by_kind": dict(sorted(Counter(f"{o.kind} {o.outcome.value}" for o in history.ops).items())),
        "statuses": dict(sorted(Counter(str(o.status) for o in history.ops).items())),
        "faults": len(history.faults),
        "faults_by_kind": dict(sorted(Counter(f.kind for f in history.faults).items())),
        "observations": len(history.observations),
        "restart_requests": {c: len(t) for c, t in final.restarts.items()},
        "violations": len(violations),
        "violations_by_rule": dict(sorted(Counter(v.rule for v in violations).items())),
        "violation_list": [asdict(v) for v in violations],
    }


def _sidecar_fault_during(history: History, o: Op) -> bool:
    end = o.answered if o.answered is not None else float("inf")
    return any(
        f.kind in SIDECAR_FAULTS and f.target == str(o.sidecar) and f.start < end and f.end > o.invoked
        for f in history.faults
    )


def _when(o: Op) -> str:
    answered = f"answered {o.status} at {o.answered:.2f}s" if o.answered is not None else "no answer"
    return f"{o.kind} {o.id} sent at {o.invoked:.2f}s through sidecar {o.sidecar}, {answered}"
