"""KIP-875's endpoints at the HTTP layer, with respx workers: forwarded where the workers have them (a
PATCH only once its body passed the sidecar's checks), done by the sidecar where they do not."""

from __future__ import annotations

import pytest
import respx

from control_plane.domain.offsets.request import NO_OFFSETS
from control_plane.settings import load_settings
from tests.support.asgi_app import CONNECT_URLS

JSON = {"content-type": "application/json"}
GOOD = b'{"offsets":[{"partition":{"filename":"/f"},"offset":{"position":0}}]}'


@pytest.mark.parametrize(
    ("method", "path", "body", "status"),
    [
        pytest.param("PUT", "/connectors/c/stop", b"", 204, id="stop"),
        pytest.param("GET", "/connectors/c/offsets", b"", 200, id="read"),
        pytest.param("PATCH", "/connectors/c/offsets", GOOD, 200, id="alter"),
        pytest.param("DELETE", "/connectors/c/offsets", b"", 200, id="reset"),
    ],
)
async def test_native_workers_get_the_request_unchanged(
    router: respx.MockRouter, serve, method: str, path: str, body: bytes, status: int
) -> None:
    route = router.route(method=method, path=path).respond(status, json={"message": "from the worker"})
    async with serve(version="4.3.1") as running:
        answer = await running.client.request(method, path, content=body, headers={"content-type": "application/json"})
    assert answer.status_code == status
    assert route.call_count == 1 and route.calls.last.request.content == body


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        pytest.param(b'{"offsets":[]}', 400, NO_OFFSETS, id="empty"),
        pytest.param(
            b'{"offsets":[{"partition":"x","offset":null}]}',
            500,  # Connect's JSON binding cannot read it: 500 there too
            "offsets[0].partition must be an object, not a string",
            id="partition",
        ),
    ],
)
async def test_a_malformed_alter_is_answered_as_connect_does_where_the_sidecar_alters(
    router: respx.MockRouter, serve, body: bytes, status: int, message: str
) -> None:
    """Where the sidecar alters offsets (before 3.6), it reads the body first, as ConnectorsResource does;
    a worker that alters them gets the same bytes and answers itself."""
    route = router.route(method="PATCH").respond(418, json={"error_code": 418, "message": "the worker's"})
    async with serve(version="3.4.1") as running:
        answer = await running.client.patch("/connectors/c/offsets", content=body, headers=JSON)
    assert (answer.status_code, answer.json()) == (status, {"error_code": status, "message": message})
    assert route.call_count == 0
    async with serve(version="4.3.1") as running:
        answer = await running.client.patch("/connectors/c/offsets", content=body, headers=JSON)
    assert answer.status_code == 418
    assert route.call_count == 1 and route.calls.last.request.content == body


@pytest.mark.parametrize(
    ("method", "path"),
    [
        pytest.param("PUT", "/connectors/c/stop", id="stop"),
        pytest.param("GET", "/connectors/c/offsets", id="read"),
        pytest.param("DELETE", "/connectors/c/offsets", id="reset"),
        pytest.param("PATCH", "/connectors/c/offsets", id="alter"),
    ],
)
async def test_old_workers_without_the_internal_topics_get_a_503_that_says_why(
    router: respx.MockRouter, serve, method: str, path: str
) -> None:
    route = router.route(path=path).respond(404, json={"error_code": 404, "message": "HTTP 404 Not Found"})
    async with serve(version="3.4.1") as running:
        answer = await running.client.request(method, path, content=GOOD if method == "PATCH" else b"", headers=JSON)
    assert answer.status_code == 503
    assert "need" in answer.json()["message"] and "not configured" in answer.json()["message"]
    assert route.call_count == 0


async def test_a_forced_native_mode_forwards_to_an_old_worker(router: respx.MockRouter, serve) -> None:
    route = router.route(path="/connectors/c/stop").respond(
        404, json={"error_code": 404, "message": "HTTP 404 Not Found"}
    )
    settings = load_settings(connect_urls=CONNECT_URLS, feature_stop_and_offsets_read="native")
    async with serve(version="3.4.1", settings=settings) as running:
        answer = await running.client.put("/connectors/c/stop")
    assert answer.status_code == 404 and route.call_count == 1


async def test_before_any_worker_reports_its_version_the_request_goes_through(router: respx.MockRouter, serve) -> None:
    router["root"].respond(500)
    route = router.route(path="/connectors/c/offsets").respond(200, json={"offsets": []})
    settings = load_settings(connect_urls=CONNECT_URLS, upstream_connect_timeout_s=0.2)
    async with serve(settings=settings) as running:
        answer = await running.client.get("/connectors/c/offsets")
    assert (answer.status_code, answer.json()) == (200, {"offsets": []})
    assert route.call_count == 1
