"""Lag and freshness (``domain.lag``): ``GET /_sidecar/lag``, every connector's (the sinks' last refresh, the
sources' newest commits), and ``GET /_sidecar/connectors/{c}/lag``, one connector's per partition. Parse, one
domain call, render."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from ...domain.errors import ViewNotReady
from ...domain.lag import Lags
from ..entities.responses import json_response
from ..request.runtime import herder


def _lags(request: Request) -> Lags:
    lags = herder(request).lags
    if lags is None:
        raise ViewNotReady("Lag and freshness need the sidecar's view (READ_FROM=upstream without one has none)")
    return lags


async def overview(request: Request) -> Response:
    return json_response(_lags(request).overview())


async def connector(request: Request) -> Response:
    return json_response(_lags(request).of(request.path_params["connector"]))
