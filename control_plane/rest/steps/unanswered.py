"""The passed-through reads the view can answer: ConnectorsResource.getConnector (``GET /connectors/{c}``)
and getTaskConfigs (``GET /connectors/{c}/tasks``). The workers answer them, except

- a connector the sidecar stopped (``known_better``): a worker before 3.5 shows it with the tasks it ran
  until its herder applies the stop, and a 3.4 herder stopping hundreds of tasks applies it seconds after
  the stop's answer; the view, which has read the stop back, answers as the newest worker would (the read
  rule of ``domain.read_rule``, as for the connector's status);
- a request no worker answered (``unanswered``: none reachable, or none within the request budget): the
  view's answer, marked stale, in place of the 504 or 503; every other request gets its error's answer
  (``rest.errors``).

A view's answer is refused first where the newest worker's content negotiation refuses the request
(``routing.jaxrs.negotiation_refusal``: ConnectorsResource's ``@Consumes``/``@Produces`` application/json, 415
and 406), never answered 200 where 4.4.0 would not answer it.
"""

from __future__ import annotations

from collections.abc import Callable

from starlette.responses import Response

from ...domain.herder import Herder
from ...domain.outcomes import Answer, Refusal
from ...view import ConnectorInfoView, TaskConfigs
from ..entities import render
from ..entities.responses import answered
from ..request.exchange import Exchange
from ..routing.jaxrs import negotiation_refusal, path_params, template_segments

_INFO = template_segments("/connectors/{connector}")
_TASKS = template_segments("/connectors/{connector}/tasks")


def known_better(herder: Herder, exchange: Exchange) -> Response | None:
    """The view's answer to this request when the sidecar stopped its connector, else None (a worker's)."""
    reads = herder.reads
    if not reads.may_know_better():  # cheap, before the path is read: the proxied hop's cost
        return None
    return _view_answer(exchange, reads.stopped_info, reads.stopped_task_configs)


def unanswered(herder: Herder, exchange: Exchange) -> Response | None:
    """The view's answer to this request, stale, or None when the view has none (or is not ready)."""
    return _view_answer(exchange, herder.reads.unanswered_info, herder.reads.unanswered_task_configs)


def _view_answer(
    exchange: Exchange,
    info: Callable[[str], Answer[ConnectorInfoView] | Refusal | None],
    task_configs: Callable[[str], Answer[TaskConfigs] | Refusal | None],
) -> Response | None:
    if exchange.method != "GET":
        return None
    raw = exchange.raw_path
    params = path_params(_INFO, raw)
    if params is not None:
        found = info(params["connector"])
        if found is None:
            return None
        refused = negotiation_refusal(exchange)
        return refused if refused is not None else answered(found, render.connector_info_json)
    params = path_params(_TASKS, raw)
    if params is not None:
        name = params["connector"]
        configs = task_configs(name)
        if configs is None:
            return None
        refused = negotiation_refusal(exchange)
        return refused if refused is not None else answered(configs, lambda v: render.task_configs_json(name, v))
    return None


__all__ = ["known_better", "unanswered"]
