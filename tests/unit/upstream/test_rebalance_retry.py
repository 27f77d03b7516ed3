"""Connect's 409 during a rebalance (HerderRequestHandler.completeOrForwardRequest) is retried with a
bounded backoff inside the operations the sidecar composes; any other 409 is final and returned at once. A
client's request passed through gets the worker's 409 at once: the client's own backoff decides."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest
import respx

from control_plane.upstream import ConnectUpstream, UpstreamRequest
from control_plane.upstream.client import REBALANCE_409_PREFIXES

STALE = (
    "Cannot complete request momentarily due to stale configuration (typically caused by a concurrent config change)"
)
# The full messages of Connect's HerderRequestHandler / DistributedHerder for each prefix.
REBALANCE_MESSAGES = [
    pytest.param(STALE, id="stale-configuration"),
    pytest.param(
        "Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway.",
        id="no-known-leader",
    ),
    pytest.param(
        "Cannot complete request because of a conflicting operation (e.g. worker rebalance)",
        id="conflicting-operation",
    ),
    pytest.param(
        "Request cannot be completed because a rebalance is expected",
        id="rebalance-expected",
    ),
]

CONNECTOR = {"name": "foo", "config": {"connector.class": "FileStreamSource", "tasks.max": "1"}}


def conflict(message: str) -> httpx.Response:
    return httpx.Response(409, json={"error_code": 409, "message": message})


def test_every_prefix_has_a_message_here() -> None:
    messages = [str(p.values[0]) for p in REBALANCE_MESSAGES]
    assert all(any(m.startswith(prefix) for m in messages) for prefix in REBALANCE_409_PREFIXES)


POST = UpstreamRequest("POST", "/connectors", headers=((b"content-type", b"application/json"),), body=b"{}")


async def composed(make_upstream: Callable[..., ConnectUpstream], request: UpstreamRequest, **overrides: object):
    upstream = make_upstream(**overrides)
    try:
        return await upstream.forward(request), upstream.rebalance_retries
    finally:
        await upstream.aclose()


@pytest.mark.parametrize("message", REBALANCE_MESSAGES)
async def test_a_clients_request_gets_the_rebalance_409_at_once(router: respx.MockRouter, serve, message: str) -> None:
    route = router.post(path="/connectors/foo/tasks/0/restart").mock(
        side_effect=[conflict(message), httpx.Response(204)]
    )
    async with serve() as running:
        response = await running.client.post("/connectors/foo/tasks/0/restart")
        retries = running.runtime.upstream.rebalance_retries
    assert (response.status_code, response.json()) == (409, {"error_code": 409, "message": message})
    assert (route.call_count, retries) == (1, 0)


@pytest.mark.parametrize("message", REBALANCE_MESSAGES)
async def test_rebalance_409_then_success_gives_success(router: respx.MockRouter, make_upstream, message: str) -> None:
    created = {**CONNECTOR, "tasks": [], "type": "source"}
    route = router.post(path="/connectors").mock(side_effect=[conflict(message), httpx.Response(201, json=created)])
    response, retries = await composed(make_upstream, POST)
    assert response.status == 201
    assert response.json() == created
    assert route.call_count == 2
    assert retries == 1
    # the same request, sent again
    first, second = (call.request for call in route.calls)
    assert first.content == second.content
    assert first.url == second.url


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE"])
async def test_rebalance_409_retried_for_any_method(router: respx.MockRouter, make_upstream, method: str) -> None:
    route = router.route(method=method, path="/connectors/foo").mock(
        side_effect=[conflict(STALE), conflict(STALE), httpx.Response(200, json={})]
    )
    response, _ = await composed(make_upstream, UpstreamRequest(method, "/connectors/foo"))
    assert response.status == 200
    assert route.call_count == 3


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({"error_code": 409, "message": "Connector foo already exists"}, id="already-exists"),
        pytest.param(
            {"error_code": 409, "message": "Cannot restart connector foo because it is not running"},
            id="other-message",
        ),
        pytest.param({"error_code": 409, "message": f"Error: {STALE}"}, id="prefix-not-at-start"),
        pytest.param({"error_code": 409, "message": None}, id="null-message"),
        pytest.param({"error_code": 409}, id="no-message"),
        pytest.param([STALE], id="json-list"),
        pytest.param(STALE, id="json-string"),
    ],
)
async def test_other_409_returned_at_once(router: respx.MockRouter, make_upstream, body: object) -> None:
    route = router.post(path="/connectors").respond(409, json=body)
    response, retries = await composed(make_upstream, POST)
    assert response.status == 409
    assert response.json() == body
    assert route.call_count == 1
    assert retries == 0


async def test_non_json_409_returned_at_once(router: respx.MockRouter, make_upstream) -> None:
    route = router.post(path="/connectors").respond(409, text=STALE)
    response, _ = await composed(make_upstream, POST)
    assert response.status == 409
    assert response.body == STALE.encode()
    assert route.call_count == 1


@pytest.mark.parametrize("retry_max", [1, 2, 3, 5])
async def test_retries_are_bounded_and_last_409_returned(
    router: respx.MockRouter, make_upstream, retry_max: int
) -> None:
    answers = [conflict(f"{STALE} #{n}") for n in range(1, retry_max + 2)]
    route = router.post(path="/connectors").mock(side_effect=answers)
    response, retries = await composed(make_upstream, POST, rebalance_retry_max=retry_max)
    assert response.status == 409
    assert response.json() == {"error_code": 409, "message": f"{STALE} #{retry_max + 1}"}
    assert route.call_count == retry_max + 1
    assert retries == retry_max


async def test_no_retry_when_retry_max_is_zero(router: respx.MockRouter, make_upstream) -> None:
    route = router.post(path="/connectors").mock(side_effect=[conflict(STALE), httpx.Response(201, json={})])
    response, _ = await composed(make_upstream, POST, rebalance_retry_max=0)
    assert response.status == 409
    assert route.call_count == 1


async def test_retry_ending_in_a_final_error_returns_it(router: respx.MockRouter, make_upstream) -> None:
    route = router.post(path="/connectors").mock(
        side_effect=[conflict(STALE), conflict("Connector foo already exists")]
    )
    response, _ = await composed(make_upstream, POST)
    assert response.status == 409
    assert response.json() == {"error_code": 409, "message": "Connector foo already exists"}
    assert route.call_count == 2


async def test_retry_keeps_the_answers_headers(router: respx.MockRouter, make_upstream) -> None:
    router.post(path="/connectors").mock(
        side_effect=[
            conflict(STALE),
            httpx.Response(201, json={}, headers={"Location": "http://w1:8083/connectors/foo", "X-Final": "1"}),
        ]
    )
    response, _ = await composed(make_upstream, POST)
    assert response.status == 201
    headers = {name.lower(): value for name, value in response.headers}
    assert headers[b"location"] == b"http://w1:8083/connectors/foo"
    assert headers[b"x-final"] == b"1"


# -- on the upstream client directly


@pytest.mark.parametrize(
    ("answers", "status", "attempts"),
    [
        pytest.param([httpx.Response(200, json=[])], 200, 1, id="first-time"),
        pytest.param([conflict(STALE), httpx.Response(200, json=[])], 200, 2, id="one-retry"),
        pytest.param([conflict(STALE)] * 4, 409, 4, id="retries-run-out"),
    ],
)
async def test_upstream_reports_its_attempts(
    router: respx.MockRouter, make_upstream, answers: list[httpx.Response], status: int, attempts: int
) -> None:
    route = router.get(path="/connectors").mock(side_effect=answers)
    upstream = make_upstream(rebalance_retry_max=3)
    try:
        response = await upstream.forward(UpstreamRequest("GET", "/connectors"))
    finally:
        await upstream.aclose()
    assert response.status == status
    assert response.attempts == attempts
    assert route.call_count == attempts
    assert upstream.rebalance_retries == attempts - 1


async def test_upstream_needs_a_worker() -> None:
    with pytest.raises(ValueError, match="at least one worker"):
        ConnectUpstream([])
