"""Read endpoints that the view can answer: Connect's shapes and codes, from the view or the workers.

``answer_read`` is the one rule: the view answers once ready (unless ``read_from=upstream``); else
the request goes through to a worker, and when no worker answers the view answers anyway, marked
stale with its age. Handlers here only translate.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import orjson
from starlette.requests import Request
from starlette.responses import Response

from ..errors import ControlPlaneError, NotFoundError
from ..features.topics import TopicTracking
from ..settings import FeatureMode
from ..sidecar import Sidecar
from ..upstream import NoWorkerAvailable
from ..view import ClusterView
from . import render
from .errors import error_response
from .proxy import proxy

STALE_HEADER = "x-sidecar-stale"
AGE_HEADER = "x-sidecar-view-age-seconds"


def json_response(data: object, status: int = 200) -> Response:
    return Response(orjson.dumps(data), status_code=status, media_type="application/json")


def _from_view(sidecar: Sidecar, build: Callable[[ClusterView], Response], stale: bool) -> Response:
    assert sidecar.view is not None
    try:
        response = build(sidecar.view.state)
    except ControlPlaneError as err:
        response = error_response(err)
    response.headers["x-sidecar-source"] = "view"
    if stale:
        age = sidecar.view_age_s()
        response.headers[STALE_HEADER] = "true"
        response.headers[AGE_HEADER] = f"{age:.3f}" if age is not None else "unknown"
        response.headers["warning"] = '110 - "Response is Stale"'
    return response


async def answer_read(
    request: Request, build: Callable[[ClusterView], Response], *, view_knows_better: bool = False
) -> Response:
    """``view_knows_better``: the view answers once ready even with ``read_from=upstream``, because
    the worker's own answer would be wrong (a connector the sidecar stopped on a pre-3.5 worker)."""
    sidecar: Sidecar = request.app.state.sidecar
    if sidecar.reads_from_view() or (view_knows_better and sidecar.view_ready):
        return _from_view(sidecar, build, stale=sidecar.view_is_stale())
    try:
        return await proxy(request)
    except NoWorkerAvailable:
        if not sidecar.view_ready:
            raise
        return _from_view(sidecar, build, stale=True)


def _stop_emulated(request: Request) -> bool:
    """The workers cannot stop connectors (KIP-875 before 3.5): the sidecar's stopped ones are shown
    as 3.5+ shows them (``ClusterView.connector_state``)."""
    sidecar: Sidecar = request.app.state.sidecar
    return not sidecar.capabilities.is_native("stop_and_offsets_read")


def _stopped_by_sidecar(request: Request, names: Iterable[str]) -> bool:
    sidecar: Sidecar = request.app.state.sidecar
    if not _stop_emulated(request) or not sidecar.view_ready:
        return False
    assert sidecar.view is not None
    return any(sidecar.view.state.target_state(name) == "STOPPED" for name in names)


async def list_connectors(request: Request) -> Response:
    expansions = request.query_params.getlist("expand")
    overlay = _stop_emulated(request)

    def build(view: ClusterView) -> Response:
        if "expand" not in request.query_params:
            return json_response(list(view.connectors()))
        out: dict[str, dict[str, object]] = {}
        for name in view.connectors():
            expanded: dict[str, object] = {}
            status = view.connector_state(name, stopped_overlay=overlay) if "status" in expansions else None
            info = view.connector_info(name) if "info" in expansions else None
            # ConnectorsResource.listConnectors leaves out a connector it cannot expand
            if ("status" in expansions and status is None) or ("info" in expansions and info is None):
                continue
            if status is not None:
                expanded["status"] = render.connector_state_json(status)
            if info is not None:
                expanded["info"] = render.connector_info_json(info)
            out[name] = expanded
        return json_response(out)

    sidecar: Sidecar = request.app.state.sidecar
    names = sidecar.view.state.connectors() if sidecar.view is not None else ()
    stopped = "status" in expansions and _stopped_by_sidecar(request, names)
    return await answer_read(request, build, view_knows_better=stopped)


async def connector_status(request: Request) -> Response:
    name = request.path_params["connector"]
    overlay = _stop_emulated(request)

    def build(view: ClusterView) -> Response:
        state = view.connector_state(name, stopped_overlay=overlay)
        if state is None:
            raise NotFoundError(f"No status found for connector {name}")  # AbstractHerder.connectorStatus
        return json_response(render.connector_state_json(state))

    return await answer_read(request, build, view_knows_better=_stopped_by_sidecar(request, [name]))


async def connector_config(request: Request) -> Response:
    name = request.path_params["connector"]

    def build(view: ClusterView) -> Response:
        config = view.connector_config(name)
        if config is None:
            raise NotFoundError(f"Connector {name} not found")  # DistributedHerder.connectorConfig
        return json_response(dict(config))

    return await answer_read(request, build)


async def task_status(request: Request) -> Response:
    name = request.path_params["connector"]
    try:
        task = int(request.path_params["task"])
    except ValueError:
        return await proxy(request)  # not an int: the worker's own 404

    overlay = _stop_emulated(request)

    def build(view: ClusterView) -> Response:
        state = view.task_state(name, task, stopped_overlay=overlay)
        if state is None:
            raise NotFoundError(f"No status found for task {name}-{task}")  # AbstractHerder.taskStatus
        return json_response(render.state_json(state, task))

    return await answer_read(request, build, view_knows_better=_stopped_by_sidecar(request, [name]))


def _tracking(request: Request) -> TopicTracking | None:
    sidecar: Sidecar = request.app.state.sidecar
    if sidecar.topic_tracking is None or sidecar.settings.feature_topic_tracking is FeatureMode.NATIVE:
        return None
    return sidecar.topic_tracking


async def connector_topics(request: Request) -> Response:
    name = request.path_params["connector"]
    tracking = _tracking(request)
    if tracking is None:
        return await proxy(request)
    return await answer_read(
        request, lambda _: json_response(render.active_topics_json(name, tracking.active_topics(name)))
    )


async def reset_connector_topics(request: Request) -> Response:
    name = request.path_params["connector"]
    sidecar: Sidecar = request.app.state.sidecar
    tracking = _tracking(request)
    if tracking is None or not sidecar.reads_from_view():
        return await proxy(request)
    tracking.reset(name)  # tombstones go out in the background, as the worker's reset does
    return Response(status_code=202)


async def topic_connectors(request: Request) -> Response:
    """Beyond the KIP: the connectors whose active topics include this topic."""
    topic = request.path_params["topic"]
    sidecar: Sidecar = request.app.state.sidecar
    if sidecar.topic_tracking is None:
        raise NotFoundError("Topic tracking needs the view (the worker's internal topics are not configured).")
    tracking = sidecar.topic_tracking
    return _from_view(
        sidecar,
        lambda _: json_response({"topic": topic, "connectors": list(tracking.connectors_using(topic))}),
        stale=sidecar.view_is_stale(),
    )


async def connector_topic_usage(request: Request) -> Response:
    """Beyond the KIP: per topic of the connector, the task that reported it and when."""
    name = request.path_params["connector"]
    sidecar: Sidecar = request.app.state.sidecar
    if sidecar.topic_tracking is None:
        raise NotFoundError("Topic tracking needs the view (the worker's internal topics are not configured).")
    tracking = sidecar.topic_tracking
    return _from_view(
        sidecar,
        lambda _: json_response(render.topic_usage_json(name, tracking.usage(name))),
        stale=sidecar.view_is_stale(),
    )
