"""The sidecar's own endpoints (/healthz, /metrics) and the route templates that label the metrics."""

from __future__ import annotations

import httpx
import pytest
import respx

from control_plane.rest.routing.router import route_template
from control_plane.upstream import UpstreamRequest
from tests.support.metrics_text import samples

STALE = (
    "Cannot complete request momentarily due to stale configuration (typically caused by a concurrent config change)"
)


def requests_total(text: str) -> dict[tuple[str, str, str], float]:
    return {
        (labels["route"], labels["method"], labels["status"]): value
        for key, value in samples(text, "http_requests_total").items()
        for labels in [dict(key)]
    }


async def test_healthz(serve) -> None:
    async with serve() as running:
        response = await running.client.get("/healthz")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {"status": "ok"}


async def test_healthz_does_not_need_a_worker(router: respx.MockRouter, serve) -> None:
    router["root"].mock(side_effect=httpx.ConnectError)
    route = router.route().respond(500)
    async with serve() as running:
        response = await running.client.get("/healthz")
    assert response.status_code == 200
    assert route.call_count == 0


async def test_metrics_label_requests_by_route_template(router: respx.MockRouter, serve) -> None:
    router.get(path__regex=r"^/connectors/[^/]+/status$").respond(200, json={"name": "abc"})
    router.get(path="/connectors/missing/status").respond(404, json={"error_code": 404, "message": "not found"})
    async with serve() as running:
        for name in ("abc", "def", "abc"):
            assert (await running.client.get(f"/connectors/{name}/status")).status_code == 200
        await running.client.get("/healthz")
        response = await running.client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    counted = requests_total(response.text)
    assert counted[("/connectors/{connector}/status", "GET", "200")] == 3.0
    assert counted[("/healthz", "GET", "200")] == 1.0
    assert not any("abc" in route or "def" in route for route, _, _ in counted)
    durations = samples(response.text, "http_request_duration_seconds_count")
    assert durations[(("method", "GET"), ("route", "/connectors/{connector}/status"), ("status", "200"))] == 3.0


async def test_metrics_count_the_status_the_client_got(router: respx.MockRouter, serve) -> None:
    router.route(host="w1").mock(side_effect=httpx.ReadTimeout)
    router.route(host="w2").respond(200, json={})
    async with serve() as running:
        assert (await running.client.post("/connectors/abc/restart")).status_code == 504
        text = (await running.client.get("/metrics")).text
    assert requests_total(text)[("/connectors/{connector}/restart", "POST", "504")] == 1.0


async def test_metrics_count_rebalance_retries(router: respx.MockRouter, serve) -> None:
    router.post(path="/connectors").mock(
        side_effect=[
            httpx.Response(409, json={"error_code": 409, "message": STALE}),
            httpx.Response(201, json={}),
        ]
    )
    async with serve() as running:  # an operation the sidecar composes retries it (a client's gets the 409)
        assert (await running.runtime.upstream.forward(UpstreamRequest("POST", "/connectors"))).status == 201
        text = (await running.client.get("/metrics")).text
    assert samples(text, "upstream_rebalance_retries_total") == {(): 1.0}


async def test_metrics_count_upstream_errors(router: respx.MockRouter, serve) -> None:
    router.route(host="w1").mock(side_effect=httpx.ReadTimeout)
    async with serve() as running:
        assert (await running.client.post("/connectors/abc/restart")).status_code == 504
        text = (await running.client.get("/metrics")).text
    errors = samples(text, "upstream_errors_total")
    assert sum(errors.values()) == 1.0
    assert dict(next(iter(errors)))["worker"] == "http://w1:8083"


async def test_metrics_show_which_workers_answered(serve) -> None:
    async with serve(version="4.3.1") as running:
        assert await running.runtime.herder.capabilities.wait_detected(1.0)
        text = (await running.client.get("/metrics")).text
    detected = samples(text, "upstream_worker_version_detected")
    assert detected == {(("worker", "http://w1:8083"),): 1.0, (("worker", "http://w2:8083"),): 1.0}


@pytest.mark.parametrize(
    ("path", "template"),
    [
        pytest.param("/", "/", id="root"),
        pytest.param("", "/", id="empty"),
        pytest.param("/connectors", "/connectors", id="connectors"),
        pytest.param("/connectors/", "/connectors", id="connectors-slash"),
        pytest.param("/connectors/abc", "/connectors/{connector}", id="connector"),
        pytest.param("/connectors/abc/config", "/connectors/{connector}/config", id="config"),
        pytest.param("/connectors/abc/status", "/connectors/{connector}/status", id="status"),
        pytest.param("/connectors/abc/restart", "/connectors/{connector}/restart", id="restart"),
        pytest.param("/connectors/abc/pause", "/connectors/{connector}/pause", id="pause"),
        pytest.param("/connectors/abc/resume", "/connectors/{connector}/resume", id="resume"),
        pytest.param("/connectors/abc/stop", "/connectors/{connector}/stop", id="stop"),
        pytest.param("/connectors/abc/topics", "/connectors/{connector}/topics", id="topics"),
        pytest.param("/connectors/abc/topics/reset", "/connectors/{connector}/topics/reset", id="topics-reset"),
        pytest.param("/connectors/abc/offsets", "/connectors/{connector}/offsets", id="offsets"),
        pytest.param("/connectors/abc/tasks", "/connectors/{connector}/tasks", id="tasks"),
        pytest.param("/connectors/abc/tasks/0/status", "/connectors/{connector}/tasks/{task}/status", id="task-status"),
        pytest.param(
            "/connectors/abc/tasks/12/restart", "/connectors/{connector}/tasks/{task}/restart", id="task-restart"
        ),
        pytest.param("/connectors/abc/tasks/0", "/connectors/{connector}/tasks/{task}", id="task"),
        pytest.param("/connectors/abc/tasks-config", "/connectors/{connector}/tasks-config", id="tasks-config"),
        pytest.param("/connectors/abc/fence", "/connectors/{connector}/fence", id="fence"),
        pytest.param("/connectors/abc/whatever", "/connectors/{connector}/{other}", id="unknown-suffix"),
        pytest.param("/connectors/my conn/status", "/connectors/{connector}/status", id="decoded-space"),
        pytest.param("/connectors/status/status", "/connectors/{connector}/status", id="connector-named-status"),
        pytest.param("/connector-plugins", "/connector-plugins", id="plugins"),
        pytest.param(
            "/connector-plugins/FileStreamSource/config", "/connector-plugins/{pluginName}/config", id="plugin-config"
        ),
        pytest.param(
            "/connector-plugins/org.apache.kafka.connect.file.FileStreamSourceConnector/config/validate",
            "/connector-plugins/{pluginName}/config/validate",
            id="plugin-validate",
        ),
        pytest.param("/connector-plugins/x/unknown", "/connector-plugins/{pluginName}", id="plugin-unknown"),
        pytest.param("/admin/loggers", "/admin/loggers", id="loggers"),
        pytest.param("/admin/loggers/org.apache.kafka.connect", "/admin/loggers/{logger}", id="logger"),
        pytest.param("/health", "/health", id="health"),
        pytest.param("/healthz", "/healthz", id="healthz"),
        pytest.param("/readyz", "/readyz", id="readyz"),
        pytest.param("/metrics", "/metrics", id="metrics"),
        pytest.param("/_sidecar/capabilities", "/_sidecar/capabilities", id="sidecar-capabilities"),
        pytest.param("/_sidecar/info", "/_sidecar/info", id="sidecar-info"),
        pytest.param(
            "/_sidecar/topic-creation/preview", "/_sidecar/topic-creation/preview", id="sidecar-topic-creation-preview"
        ),
        pytest.param(
            "/_sidecar/connectors/abc/topic-creation",
            "/_sidecar/connectors/{connector}/topic-creation",
            id="sidecar-connector-topic-creation",
        ),
        pytest.param("/admin", "{other}", id="admin"),
        pytest.param("/favicon.ico", "{other}", id="unknown"),
        pytest.param("/some/random/path/123", "{other}", id="unknown-deep"),
    ],
)
def test_route_template(path: str, template: str) -> None:
    assert route_template(path) == template


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("/_sidecar/connectors/abc", id="under-prefix"),
        pytest.param("/_sidecar-abc123", id="prefix-of-a-word"),
        pytest.param("/_sidecar/info/abc123", id="below-a-real-route"),
    ],
)
def test_route_template_bounded_under_sidecar_prefix(path: str) -> None:
    assert "abc" not in route_template(path)


async def test_unknown_sidecar_path_is_proxied_to_the_worker(router: respx.MockRouter, serve) -> None:
    route = router.route(host="w1").respond(404, json={"error_code": 404, "message": "HTTP 404 Not Found"})
    async with serve() as running:
        response = await running.client.get("/_sidecar/nope")
    assert response.status_code == 404
    assert route.call_count == 1


@pytest.mark.parametrize(
    ("body", "message"),
    [
        pytest.param(b"{", "Not JSON", id="not-json"),
        pytest.param(b'{"topics": ["t"]}', 'The body must be {"config"', id="no-config"),
        pytest.param(b'{"config": {}, "topics": []}', "Name one or more topics", id="no-topics"),
        pytest.param(b'{"config": {}, "topics": [""]}', "Name one or more topics", id="empty-topic"),
    ],
)
async def test_a_topic_creation_preview_needs_a_config_and_topics(
    router: respx.MockRouter, serve, body: bytes, message: str
) -> None:
    async with serve() as running:
        response = await running.client.post("/_sidecar/topic-creation/preview", content=body)
    assert response.status_code == 400
    assert response.json()["error_code"] == 400 and response.json()["message"].startswith(message)
    async with serve() as running:
        response = await running.client.get("/_sidecar/connectors/c/topic-creation")
    assert response.status_code == 400 and "Name one or more topics" in response.json()["message"]
