"""The dispatch layer sends to the pass-through exactly the requests no route of the sidecar matches:
``own_paths`` agrees with Starlette's own matching for every route, on paths of every kind."""

from __future__ import annotations

import pytest
from starlette.routing import Match, Route

from control_plane.rest.app import ROUTES
from control_plane.rest.dispatch import own_paths
from control_plane.rest.proxy import PassThrough

PATHS = [
    "/",
    "/connectors",
    "/connectors/",
    "/connectors/c",
    "/connectors/c/",
    "/connectors/c/status",
    "/connectors/c/status/",
    "/connectors/c/status/x",
    "/connectors/c/config",
    "/connectors/c/tasks",
    "/connectors/c/tasks/0/status",
    "/connectors/c/tasks/0/status/",
    "/connectors/c/tasks/0/restart",
    "/connectors/c/restart",
    "/connectors/c/offsets",
    "/connectors/c/offsets/reset",
    "/connectors/c/topics/reset",
    "/connectors/c/stop/",
    "/connector-plugins",
    "/connector-plugins/p/config/validate",
    "/connector-plugins/p/config/validate/",
    "/admin/loggers",
    "/healthz",
    "/metrics/",
    "/_sidecar/info",
    "/_sidecar/topics/t/connectors",
    "/_sidecar/nope",
    "//connectors",
]


@pytest.mark.parametrize("path", PATHS)
def test_own_paths_match_at_least_what_a_route_of_the_sidecar_matches(path: str) -> None:
    """Wider than the routes is only slower (Starlette's routing then passes it through), never wrong."""
    own = own_paths(ROUTES)
    assert own is not None
    scope = {"type": "http", "path": path, "raw_path": path.encode(), "method": "GET", "root_path": ""}
    matched_by_route = any(
        r.matches(scope)[0] is not Match.NONE
        for r in ROUTES
        if not (isinstance(r, Route) and isinstance(r.endpoint, PassThrough))
    )
    if matched_by_route:
        assert own.match(path) is not None


@pytest.mark.parametrize("path", ["/connectors/c", "/connectors/c/pause", "/connectors/c/tasks", "/_sidecar/nope"])
def test_paths_only_the_workers_answer_take_the_short_path(path: str) -> None:
    own = own_paths(ROUTES)
    assert own is not None and own.match(path) is None


def test_a_route_that_is_not_a_plain_route_sends_everything_through_starlette() -> None:
    from starlette.routing import Mount

    assert own_paths([*ROUTES, Mount("/m", routes=[])]) is None
