"""Unit tests: the real app and the real upstream client, with respx standing in for the Connect workers.

Fixtures: ``router`` (the workers, a ``respx.MockRouter``), ``fake_transport`` (that router under
``ConnectUpstream``, through the transport interface production's transports implement:
``tests.support.fake_workers``), ``make_upstream`` and ``serve`` (the app inside its lifespan, with an
``httpx.AsyncClient`` on the ASGI transport), each over ``tests.support.asgi_app``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from typing import Any

import pytest
import respx

from control_plane.settings import ENV_PREFIX
from control_plane.upstream import ConnectUpstream
from tests.support import asgi_app
from tests.support.asgi_app import Running, root_answer
from tests.support.fake_workers import FakeWorkers, fake_workers


@pytest.fixture(autouse=True)
def _no_control_plane_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The developer's own CONTROL_PLANE_* variables must not leak into the settings under test."""
    for name in list(os.environ):
        if name.startswith(ENV_PREFIX):
            monkeypatch.delenv(name)


@pytest.fixture
def router() -> respx.MockRouter:
    """The workers. Its first route, named ``root``, answers ``GET /`` on every worker (the capability
    detector's call) with Connect 4.3.1, ahead of any route a test adds; change it through
    ``serve(version=...)`` or ``router["root"]``."""
    workers = respx.MockRouter(assert_all_called=False)
    workers.get(path="/", name="root").respond(200, json=root_answer("4.3.1"))
    return workers


@pytest.fixture
def fake_transport(router: respx.MockRouter) -> FakeWorkers:
    return fake_workers(router)


@pytest.fixture
def make_upstream(router: respx.MockRouter) -> Callable[..., ConnectUpstream]:
    """``make_upstream(**overrides)``: a ``ConnectUpstream`` on w1 and w2 over the fake workers; the
    caller closes it (``await upstream.aclose()``)."""

    def make(**overrides: Any) -> ConnectUpstream:
        return asgi_app.make_upstream(router, **overrides)

    return make


@pytest.fixture
def serve(router: respx.MockRouter) -> Callable[..., contextlib.AbstractAsyncContextManager[Running]]:
    """``async with serve(version=..., settings=..., **upstream_overrides) as running``."""

    def start(**kwargs: Any) -> contextlib.AbstractAsyncContextManager[Running]:
        return asgi_app.serve(router, **kwargs)

    return start
