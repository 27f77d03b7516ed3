"""A passed-through request no worker answered (none reachable, or none within the request budget): the
reads the view can answer get its answer, marked stale, in place of the 504 or 503 (the read rule of
``domain.read_rule``, as the routes the sidecar answers have it). They are ConnectorsResource.getConnector
(``GET /connectors/{c}``) and getTaskConfigs (``GET /connectors/{c}/tasks``); every other request gets
its error's answer (``errors``).

A 3.4 worker stopping hundreds of tasks after an emulated stop can leave its herder's queue unserved for
longer than the budget; the view, which has read the stop back, answers what the newest worker would.
"""

from __future__ import annotations

from starlette.responses import Response
from starlette.types import Scope

from ..domain.herder import Herder
from . import render
from .jaxrs import path_params, raw_path, template_segments
from .outcomes import answered

_INFO = template_segments("/connectors/{connector}")
_TASKS = template_segments("/connectors/{connector}/tasks")


def unanswered(herder: Herder, scope: Scope) -> Response | None:
    """The view's answer to this request, stale, or None when the view has none (or is not ready)."""
    if scope["method"] != "GET":
        return None
    raw = raw_path(scope)
    params = path_params(_INFO, raw)
    if params is not None:
        info = herder.unanswered_info(params["connector"])
        return answered(info, render.connector_info_json) if info is not None else None
    params = path_params(_TASKS, raw)
    if params is not None:
        name = params["connector"]
        configs = herder.unanswered_task_configs(name)
        return answered(configs, lambda value: render.task_configs_json(name, value)) if configs is not None else None
    return None


__all__ = ["unanswered"]
