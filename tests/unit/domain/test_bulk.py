"""Bulk actions (domain/bulk/, rest/resources/bulk.py, bulk_cli.py): the selector read and matched, the
request's errors, the single request each action stands for, the per-connector access gate, the result's
shape with Connect's error per connector, and the CLI's rendering and exit statuses."""

from __future__ import annotations

import argparse
import asyncio
import io
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
import respx

from control_plane import bulk_cli
from control_plane.bulk_cli import body_of, render_bulk
from control_plane.bulk_cli import run as run_cli
from control_plane.domain.bulk import (
    BulkActions,
    BulkRequest,
    BulkResult,
    Candidate,
    ItemResult,
    OpenGate,
    matches,
    request_of,
    select,
    selector_of,
    single_request,
)
from control_plane.domain.errors import BadRequestError, Forbidden, NotFoundError, WorkerRefused
from control_plane.domain.outcomes import Answer, Done
from control_plane.domain.reads.states import ConnectorGauge, StateGauges
from control_plane.rest.request.principal import PrincipalGate
from control_plane.rest.resources.bulk import bulk_json
from control_plane.rules.access import Action, Principal, Reach, Role, classify
from control_plane.upstream import (
    REQUEST_DEADLINE,
    NoWorkerAvailable,
    UpstreamRequest,
    UpstreamResponse,
    UpstreamTimeout,
)
from control_plane.view import ClusterView

SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"
CANDIDATES = [
    Candidate("orders-a", "RUNNING", frozenset({"RUNNING"}), SOURCE, "source", frozenset({"orders"})),
    Candidate("orders-b", "RUNNING", frozenset({"FAILED", "RUNNING"}), SOURCE, "source"),
    Candidate("orders-sink", "PAUSED", frozenset({"PAUSED"}), SINK, "sink", frozenset({"orders"})),
    Candidate("billing", "FAILED", frozenset(), SINK, "sink"),
    Candidate("new", None, frozenset(), SOURCE, "source"),
]


def picked(selector: dict[str, Any]) -> tuple[str, ...]:
    return select(selector_of(selector), CANDIDATES).picked


@pytest.mark.parametrize(
    ("selector", "names"),
    [
        pytest.param({"pattern": "orders-.*"}, ("orders-a", "orders-b", "orders-sink"), id="pattern-whole-name"),
        pytest.param({"pattern": "orders"}, (), id="pattern-not-a-prefix"),
        pytest.param({"states": ["failed"]}, ("billing",), id="state-any-case"),
        pytest.param({"states": ["PAUSED", "FAILED"]}, ("billing", "orders-sink"), id="states-or"),
        pytest.param({"task_states": ["FAILED"]}, ("orders-b",), id="a-failed-task"),
        pytest.param({"classes": ["FileStreamSinkConnector"]}, ("billing", "orders-sink"), id="simple-class"),
        pytest.param({"classes": [SOURCE], "pattern": "orders-.*"}, ("orders-a", "orders-b"), id="class-and-pattern"),
        pytest.param({"types": ["sink"]}, ("billing", "orders-sink"), id="type"),
        pytest.param({"topic": "orders"}, ("orders-a", "orders-sink"), id="topic"),
        pytest.param({"topic": "orders", "types": ["source"]}, ("orders-a",), id="topic-and-type"),
        pytest.param({"pattern": ".*"}, ("billing", "new", "orders-a", "orders-b", "orders-sink"), id="all-by-name"),
    ],
)
def test_a_selector_picks_by_every_criterion(selector: dict[str, Any], names: tuple[str, ...]) -> None:
    assert picked(selector) == names


def test_named_connectors_keep_their_order_and_the_missing_ones_are_said() -> None:
    selection = select(selector_of({"names": ["orders-b", "gone", "billing", "orders-b"]}), CANDIDATES)
    assert selection.picked == ("orders-b", "billing") and selection.missing == ("gone",)
    narrowed = select(selector_of({"names": ["orders-b", "billing"], "states": ["FAILED"]}), CANDIDATES)
    assert narrowed.picked == ("billing",) and narrowed.missing == ()
    assert matches(selector_of({"names": ["x"]}), CANDIDATES[0])  # names choose the candidates, not match


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        pytest.param({}, "picks no connector", id="empty"),
        pytest.param([], "must be an object", id="not-an-object"),
        pytest.param({"pattern": "orders-("}, "is not a regular expression", id="bad-regex"),
        pytest.param({"pattern": 3}, "must be a regular expression", id="pattern-not-a-string"),
        pytest.param({"states": []}, "non-empty list of strings", id="empty-list"),
        pytest.param({"types": ["both"]}, "Unknown connector type", id="unknown-type"),
        pytest.param({"state": ["RUNNING"]}, "Unknown selector key", id="unknown-key"),
        pytest.param({"topic": ""}, "topic's name", id="empty-topic"),
    ],
)
def test_a_bad_selector_is_a_400_naming_what_is_wrong(selector: Any, message: str) -> None:
    with pytest.raises(BadRequestError, match=message):
        selector_of(selector)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        pytest.param({"action": "explode", "selector": {"pattern": ".*"}}, "Unknown action 'explode'", id="action"),
        pytest.param({"action": "pause"}, "names no selector", id="no-selector"),
        pytest.param({"action": "pause", "selector": {"pattern": ".*"}, "dry_run": "yes"}, "dry_run", id="flag"),
        pytest.param(
            {"action": "pause", "selector": {"pattern": ".*"}, "only_failed": True}, "options of the restart", id="opt"
        ),
        pytest.param({"action": "pause", "selector": {"pattern": ".*"}, "force": 1}, "Unknown key", id="key"),
        pytest.param([], "The body must be", id="not-an-object"),
    ],
)
def test_a_bad_request_is_a_400(body: Any, message: str) -> None:
    with pytest.raises(BadRequestError, match=message):
        request_of(body)


def test_each_action_stands_for_its_single_request() -> None:
    def single(action: str, **options: bool) -> tuple[str, str, bytes]:
        request = request_of({"action": action, "selector": {"names": ["a b/c"]}, **options})
        s = single_request(request, "a b/c")
        return s.method, s.path, s.query

    assert single("pause") == ("PUT", "/connectors/a%20b%2Fc/pause", b"")
    assert single("resume") == ("PUT", "/connectors/a%20b%2Fc/resume", b"")
    assert single("stop") == ("PUT", "/connectors/a%20b%2Fc/stop", b"")
    assert single("delete") == ("DELETE", "/connectors/a%20b%2Fc", b"")
    assert single("restart", only_failed=True, include_tasks=True) == (
        "POST",
        "/connectors/a%20b%2Fc/restart",
        b"includeTasks=true&onlyFailed=true",
    )
    assert single("auto-restart-off") == ("PUT", "/_sidecar/connectors/a%20b%2Fc/auto-restart", b"")


def test_the_bulk_request_itself_is_a_read_each_connector_its_own_request() -> None:
    assert classify("POST", "/_sidecar/bulk") == classify("POST", "/_sidecar/bulk/")
    assert (classify("POST", "/_sidecar/bulk").action, classify("POST", "/_sidecar/bulk").reach) == (
        Action.READ,
        Reach.SELECTION,
    )
    viewer = PrincipalGate(Principal("v", Role.VIEWER))
    refused = viewer.refusal("PUT", "/connectors/a/pause")
    assert isinstance(refused, Forbidden) and refused.message == "v (viewer) may not PUT /connectors/a/pause"
    operator = PrincipalGate(Principal("op", Role.OPERATOR))
    assert operator.refusal("PUT", "/connectors/a/stop") is None
    assert operator.refusal("PUT", "/_sidecar/connectors/a/auto-restart") is None
    assert isinstance(operator.refusal("DELETE", "/connectors/a"), Forbidden)
    team = PrincipalGate(Principal("team", Role.ADMIN, ("orders-*",)))
    assert team.sees("orders-a") and not team.sees("billing")
    hidden = team.refusal("PUT", "/connectors/billing/pause")
    assert isinstance(hidden, NotFoundError) and hidden.message == "Connector billing not found"
    assert team.refusal("PUT", "/connectors/orders-a/pause") is None


def result_of(items: list[ItemResult], **request: Any) -> dict[str, Any]:
    body = {"action": "pause", "selector": {"pattern": ".*"}, **request}
    return bulk_json(BulkResult(request_of(body), tuple(items)))


def test_the_result_has_each_connector_s_outcome_in_connect_s_shape_and_the_counts() -> None:
    result = result_of(
        [
            ItemResult("a", 202),
            ItemResult("b", error=Forbidden("op (operator) may not DELETE /connectors/b")),
            ItemResult("c", error=WorkerRefused(409, "Cannot complete request because of a conflicting operation")),
            ItemResult("d", error=NotFoundError("Connector d not found")),
            ItemResult("e", error=NoWorkerAvailable([UpstreamTimeout("w1", "read timeout")])),
        ]
    )
    assert result["action"] == "pause" and result["dry_run"] is False and result["selector"] == {"pattern": ".*"}
    assert result["counts"] == {"selected": 5, "done": 1, "refused": 3, "failed": 1}
    by_name = {item["name"]: item for item in result["connectors"]}
    assert by_name["a"] == {"name": "a", "result": "done", "status": 202}
    assert by_name["b"] == {
        "name": "b",
        "result": "refused",
        "status": 403,
        "error": {"error_code": 403, "message": "op (operator) may not DELETE /connectors/b"},
    }
    assert by_name["c"]["error"]["error_code"] == 409 and by_name["d"]["status"] == 404
    assert by_name["e"]["result"] == "failed" and by_name["e"]["error"]["error_code"] == 503
    dry = result_of([ItemResult("a"), ItemResult("b", error=Forbidden("no"))], dry_run=True)
    assert dry["counts"] == {"selected": 2, "done": 0, "refused": 1, "failed": 0}
    assert dry["connectors"][0] == {"name": "a", "result": "selected"}
    restart = bulk_json(
        BulkResult(BulkRequest("restart", selector_of({"names": ["a"]}), only_failed=True), (ItemResult("a", 202),))
    )
    assert (restart["include_tasks"], restart["only_failed"]) == (False, True)


def cli_args(*selector: str, action: str = "pause", dry_run: bool = False) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    bulk_cli.add_arguments(sub)
    argv = ["bulk", action, *selector, "--url", "http://sidecar:8084"] + (["--dry-run"] if dry_run else [])
    return parser.parse_args(argv)


def test_the_cli_sends_the_selector_and_exits_by_the_results() -> None:
    args = cli_args("--pattern", "orders-.*", "--state", "FAILED", "--state", "PAUSED", "--type", "sink")
    assert body_of(args) == {
        "action": "pause",
        "selector": {"pattern": "orders-.*", "states": ["FAILED", "PAUSED"], "types": ["sink"]},
        "dry_run": False,
    }
    answer = result_of([ItemResult("a", 202), ItemResult("b", error=Forbidden("no"))])
    with respx.mock(assert_all_called=True) as mock:
        mock.post("http://sidecar:8084/_sidecar/bulk").mock(return_value=httpx.Response(200, json=answer))
        out = io.StringIO()
        assert run_cli(args, out) == 1  # a connector refused
    assert out.getvalue().splitlines() == [
        "+ a (done 202)",
        "! b (refused 403): no",
        "Bulk pause: 2 selected, 1 done, 1 refused, 0 failed.",
    ]
    with respx.mock() as mock:
        mock.post("http://sidecar:8084/_sidecar/bulk").mock(
            return_value=httpx.Response(400, json={"error_code": 400, "message": "bad"})
        )
        assert run_cli(args, io.StringIO()) == 1
    assert run_cli(cli_args(), io.StringIO()) == 2  # no selector
    dry = result_of([ItemResult("a")], dry_run=True)
    assert (
        render_bulk(dry).splitlines()[-1] == "Bulk pause: 1 selected, would be acted on (dry run), 0 refused, 0 failed."
    )


class FakeRule:
    """The read rule's part ``BulkActions`` reads: a ready view of the given connectors."""

    def __init__(self, configs: dict[str, dict[str, str | None]]) -> None:
        state = ClusterView()
        state.connector_configs.update(configs)
        self.view = SimpleNamespace(ready=True, state=state)

    async def synced(self, tails: Any) -> bool:
        return True


class FakeHerder:
    """The single requests' herder calls: a worker that answers each forward after a moment, counting how
    many are under way at once and the deadline each was given."""

    def __init__(self, states: dict[str, str]) -> None:
        gauges = {n: ConnectorGauge(s, {}, ()) for n, s in states.items()}
        self.reads = SimpleNamespace(state_gauges=lambda: StateGauges(gauges, {}, {}, 1))
        self.topics = SimpleNamespace()
        self.offsets = SimpleNamespace(stop=self._stop)
        self.newer = SimpleNamespace()
        self.auto_restart = SimpleNamespace()
        self.sent: list[UpstreamRequest] = []
        self.deadlines: list[float | None] = []
        self.running = self.most = 0
        self.settled = 0

    async def _stop(self, name: str) -> Done:
        return Done()  # the sidecar stopped it (an old worker)

    async def forward(self, request: UpstreamRequest) -> UpstreamResponse:
        self.sent.append(request)
        self.deadlines.append(REQUEST_DEADLINE.get())
        self.running += 1
        self.most = max(self.most, self.running)
        await asyncio.sleep(0.01)
        self.running -= 1
        if "refuses" in request.path:
            return UpstreamResponse(409, [], b'{"error_code":409,"message":"rebalancing"}', "w1")
        return UpstreamResponse(202, [], b"", "w1")

    async def settle_write(self) -> None:
        self.settled += 1


async def test_each_connector_is_acted_on_through_its_single_request_a_few_at_a_time() -> None:
    names = [f"c{i:02d}" for i in range(20)] + ["refuses"]
    herder = FakeHerder(dict.fromkeys(names, "RUNNING"))
    rule = FakeRule({n: {"connector.class": SOURCE} for n in names})
    bulk_actions = BulkActions(herder, rule, 3, budget_s=30)  # type: ignore[arg-type]
    outcome = await bulk_actions.run(request_of({"action": "pause", "selector": {"pattern": ".*"}}), OpenGate())
    assert isinstance(outcome, Answer)
    items = {i.connector: i for i in outcome.value.items}
    assert herder.most == 3 and len(herder.sent) == 21 and herder.settled == 1
    assert all(r.retry_rebalance and r.method == "PUT" and r.path.endswith("/pause") for r in herder.sent)
    assert all(d is not None for d in herder.deadlines)  # each connector's own budget
    assert items["c00"].status == 202 and items["c00"].error is None
    refused = items["refuses"].error
    assert isinstance(refused, WorkerRefused) and (refused.status, refused.message) == (409, "rebalancing")

    stopped = await bulk_actions.run(request_of({"action": "stop", "selector": {"names": ["c01", "gone"]}}), OpenGate())
    assert isinstance(stopped, Answer)
    assert [(i.connector, i.status) for i in stopped.value.items] == [("c01", 204), ("gone", None)]
    assert isinstance(stopped.value.items[1].error, NotFoundError)

    class NoDeletes(OpenGate):
        def refusal(self, method: str, path: str) -> Forbidden | None:
            return Forbidden("no") if method == "DELETE" else None

    herder.sent.clear()
    deleted = await bulk_actions.run(request_of({"action": "delete", "selector": {"names": ["c02"]}}), NoDeletes())
    assert isinstance(deleted, Answer) and deleted.value.items[0].refused_by_gate and herder.sent == []
