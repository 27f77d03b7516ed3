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
def test_own_paths_match_what_a_route_of_the_sidecar_matches(path: str) -> None:
    own = own_paths(ROUTES)
    assert own is not None
    matched_by_route = any(
        r.matches({"type": "http", "path": path, "method": "GET", "root_path": ""})[0] is not Match.NONE
        for r in ROUTES
        if isinstance(r, Route) and not isinstance(r.endpoint, PassThrough)
    )
    assert (own.match(path) is not None) == matched_by_route


def test_a_route_that_is_not_a_plain_route_sends_everything_through_starlette() -> None:
    from starlette.routing import Mount

    assert own_paths([*ROUTES, Mount("/m", routes=[])]) is None
