"""The route table's matcher (``rest.routing.router``): which requests the sidecar answers (its Connect routes as
Jersey matches them, its own paths as Starlette does), which go through to the workers unchanged, and the
labels the request metrics count them under."""

from __future__ import annotations

from typing import Any

import pytest

from control_plane.rest.request.exchange import Exchange
from control_plane.rest.routing.router import ROUTER, Router
from control_plane.rest.routing.routes import ROUTES, Route


async def _unread() -> Any:
    raise AssertionError("the body is not read to route a request")


def exchange(method: str, path: bytes) -> Exchange:
    return Exchange(method, path, b"", [], _unread)


@pytest.mark.parametrize(
    ("method", "path", "resource"),
    [
        pytest.param("GET", b"/connectors", "/connectors", id="listing"),
        pytest.param("GET", b"/connectors/", "/connectors", id="listing-slash"),
        pytest.param("POST", b"/connectors", "/connectors", id="create"),
        pytest.param("GET", b"/connectors/c/status", "/connectors/{connector}/status", id="status"),
        pytest.param("GET", b"/connectors/c;v=1/status;x", "/connectors/{connector}/status", id="matrix"),
        pytest.param("HEAD", b"/connectors/c/status", "/connectors/{connector}/status", id="head"),
        pytest.param("DELETE", b"/connectors/c/status", "/connectors/{connector}/status", id="jerseys-405"),
        pytest.param("OPTIONS", b"/connectors/c/config", "/connectors/{connector}/config", id="jerseys-options"),
        pytest.param("DELETE", b"/connectors/c/offsets", "/connectors/{connector}/offsets", id="offsets-reset"),
        pytest.param(
            "GET", b"/connectors/c/tasks/0/status", "/connectors/{connector}/tasks/{task:int}/status", id="task"
        ),
        pytest.param("GET", b"/healthz", "/healthz", id="own"),
        pytest.param("GET", b"/_sidecar/topics/t/connectors", "/_sidecar/topics/{topic}/connectors", id="own-param"),
    ],
)
def test_what_the_sidecar_answers(method: str, path: bytes, resource: str) -> None:
    target = ROUTER.target(exchange(method, path))
    assert target.resource is not None and target.resource.path == resource


@pytest.mark.parametrize(
    ("method", "path"),
    [
        pytest.param("GET", b"/connectors/c", id="connector"),
        pytest.param("DELETE", b"/connectors/c", id="delete"),
        pytest.param("PUT", b"/connectors/c/pause", id="pause"),
        pytest.param("GET", b"/connectors/c/tasks", id="tasks"),
        pytest.param("POST", b"/connectors/c/tasks", id="internal"),
        pytest.param("GET", b"/connectors/c/status/x", id="deeper"),
        pytest.param("GET", b"/connectors/c/stat%75s", id="encoded-literal"),
        pytest.param("GET", b"/_sidecar/nope", id="own-prefix-unknown"),
        pytest.param("POST", b"/_sidecar/info", id="own-path-other-method"),
        pytest.param("GET", b"/_sidecar/topics/a%2Fb/connectors", id="own-path-encoded-slash"),
        pytest.param("GET", b"/healthz/", id="own-path-slash"),
        pytest.param("PROPFIND", b"/connectors/c", id="unknown-method"),
    ],
)
def test_what_goes_through_to_the_workers(method: str, path: bytes) -> None:
    assert ROUTER.target(exchange(method, path)).resource is None


def test_a_connect_resource_has_the_methods_of_its_rows_and_reads_the_entity_of_those_with_a_body() -> None:
    by_path = {resource.path: resource for resource in ROUTER.resources}
    config = by_path["/connectors/{connector}/config"]
    assert config.resource_methods == {"GET", "PUT", "PATCH"}  # type: ignore[union-attr]
    assert config.reads_entity == {"PUT", "PATCH"}  # type: ignore[union-attr]
    assert "/connectors/{connector}/pause" not in by_path  # no handler: the workers answer it whole


def test_every_route_with_a_handler_is_reached_by_its_own_path() -> None:
    example = {"connector": "c-1", "task:int": "0", "pluginName": "FileStreamSource", "logger": "org.x", "topic": "t-1"}
    for route in ROUTES:
        path = "/".join(example.get(s[1:-1], s) if s.startswith("{") else s for s in route.path.split("/")) or "/"
        target = ROUTER.target(exchange(route.method, path.encode()))
        if route.handler is None:
            assert target.resource is None, route
        else:
            assert target.handler is route.handler, route
        assert target.label == route.path.replace(":int}", "}"), route


def test_the_targets_kept_are_bounded() -> None:
    router = Router()
    for n in range(5000):
        router.target(exchange("GET", f"/connectors/c{n}/status".encode()))
    assert len(router._targets) <= 4096


def test_a_route_table_of_ones_own_builds_its_own_matcher() -> None:
    async def handler(request: Any) -> Any:
        raise AssertionError

    router = Router([Route("GET", "/x/{y}", "an x", handler=handler, tag="sidecar")])
    target = router.target(exchange("GET", b"/x/1"))
    assert target.handler is handler and target.params == {"y": "1"}
    assert router.target(exchange("GET", b"/connectors")).resource is None


@pytest.mark.parametrize(
    ("path", "method", "handler"),
    [
        pytest.param("/connectors/c/status/", "GET", "connector_status", id="status-slash"),
        pytest.param("/connectors/", "GET", "list_connectors", id="list-slash"),
        pytest.param("/connectors/c/tasks/0/status/", "GET", "task_status", id="task-status-slash"),
        pytest.param("/connectors/c/offsets/", "PATCH", "connector_offsets", id="offsets-slash"),
        pytest.param("/connectors/c/stop/", "PUT", "stop_connector", id="stop-slash"),
        pytest.param("/connectors/c/status/x", "GET", None, id="deeper-goes-through"),
        pytest.param("/connectors/c/config/", "PUT", "put_or_patch_config", id="config-put-slash"),
        pytest.param("/connectors/c/status", "DELETE", "405", id="no-such-method-answered-405-here"),
        pytest.param("/connectors/c/stat%75s", "GET", None, id="encoded-literal-is-not-the-route"),
    ],
)
def test_the_sidecars_own_routes_match_with_a_trailing_slash_as_the_workers_resources_do(
    path: str, method: str, handler: str | None
) -> None:
    """Jersey matches ``/connectors/{c}/status/`` to the same resource as ``/status`` (checked on 3.4.1
    and 4.3.1): the sidecar must answer both the same way. None: the request goes through to the worker;
    ``405``: the resource's own refusal answers (the resource lacks the method)."""

    async def nothing() -> Any:
        raise AssertionError("not read")

    target = ROUTER.target(Exchange(method, path.encode(), b"", [], nothing))
    if handler is None:
        assert target.resource is None
    elif handler == "405":
        assert target.resource is not None and target.handler is None
    else:
        assert target.handler is not None and target.handler.__name__ == handler
