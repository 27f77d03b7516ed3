"""Which route of the table (``rest.routing.routes``) takes a request, and the label its metrics count it under.

Connect's paths are matched as Jersey matches them (``jaxrs.JerseyResource``: the raw path, matrix
parameters, one trailing slash), one resource per path template of the table: the sidecar answers the methods
it has a handler for, Jersey's 405 for a method the resource lacks and Jersey's OPTIONS; a method the
resource has and the sidecar does not serve goes through to the worker, as does a path no route has. The
sidecar's own paths are matched as Starlette matches them (the decoded path, one non-empty segment a
parameter); another method there goes through to the worker.

A request's target depends only on its method and raw path: it is looked up once per distinct pair and kept
(a bounded number of them: paths hold connector names).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from starlette.responses import Response

from ..request.exchange import Exchange, Handler
from .jaxrs import JerseyResource
from .openapi import document_json, render_json
from .routes import FALLBACK_LABELS, OTHER, ROUTES, Route, label_of

_KEPT = 4096  # distinct (method, raw path) pairs kept


class SidecarResource:
    """One of the sidecar's own paths, matched as Starlette's ``Route`` matches it."""

    def __init__(self, path: str, handlers: Mapping[str, Handler]) -> None:
        self.path = path
        self.handlers = {**handlers, **({"HEAD": handlers["GET"]} if "GET" in handlers else {})}
        self._segments = path.split("/")

    def params(self, path: str) -> dict[str, str] | None:
        segments = path.split("/")
        if len(segments) != len(self._segments):
            return None
        params: dict[str, str] = {}
        for got, want in zip(segments, self._segments, strict=True):
            if want.startswith("{"):
                if not got:
                    return None
                params[want[1:-1]] = got
            elif got != want:
                return None
        return params

    def takes(self, method: str) -> bool:
        return method in self.handlers

    def refusal(self, exchange: Exchange, params: Mapping[str, str]) -> Response | None:
        """None: the sidecar's own paths have no refusal of their own before the handler."""
        return None


Resource = JerseyResource | SidecarResource


@dataclass(frozen=True, slots=True)
class RouteTarget:
    """Where a request goes: ``resource`` None, to a worker unchanged; else that resource answers it, with
    ``handler`` (None where the resource's own refusal answers: Jersey's 405 or OPTIONS)."""

    label: str
    resource: Resource | None = None
    handler: Handler | None = None
    params: Mapping[str, str] = field(default_factory=dict)


@dataclass
class _Node:
    children: dict[str, _Node] = field(default_factory=dict)
    param: _Node | None = None
    template: str | None = None  # a route's label ends here
    fallback: str | None = None  # the label of paths below this node that no route has


class Router:
    def __init__(self, routes: Iterable[Route] = ROUTES) -> None:
        self.routes = routes = tuple(routes)
        self._openapi: bytes | None = None
        self._connect = [_jersey(path, rows) for path, rows in _by_path(r for r in routes if r.tag == "connect")]
        self._connect = [resource for resource in self._connect if resource.handlers]
        self._sidecar = [
            SidecarResource(path, {r.method: r.handler for r in rows if r.handler is not None})
            for path, rows in _by_path(r for r in routes if r.tag == "sidecar")
        ]
        self._root = _Node()
        for route in routes:
            self._node(route.path).template = label_of(route.path)
        for prefix, fallback in FALLBACK_LABELS.items():
            self._node(prefix).fallback = fallback
        self._targets: dict[tuple[str, bytes], RouteTarget] = {}

    def target(self, exchange: Exchange) -> RouteTarget:
        key = (exchange.method, exchange.raw_path)
        found = self._targets.get(key)
        if found is None:
            if len(self._targets) >= _KEPT:
                self._targets.clear()
            found = self._targets[key] = self._find(exchange.method, exchange.raw_path, exchange.path)
        return found

    def _find(self, method: str, raw: bytes, path: str) -> RouteTarget:
        for jersey in self._connect:
            params = jersey.params(raw)
            if params is not None and jersey.takes(method):
                return RouteTarget(label_of(jersey.path), jersey, jersey.handlers.get(method), params)
        for own in self._sidecar:
            params = own.params(path)
            if params is not None and own.takes(method):
                return RouteTarget(own.path, own, own.handlers[method], params)
        return RouteTarget(self.label(path))

    def label(self, path: str) -> str:
        """The metric label of a request for ``path`` (decoded) that no route of the sidecar takes: the route
        template it matches, else a fallback (``routes.FALLBACK_LABELS``); never a name from the path."""
        node, best = self._root, OTHER
        segments = [segment for segment in path.split("/") if segment]
        if not segments:
            return "/"
        for segment in segments:
            child = node.children.get(segment) or node.param
            if child is None:
                return best
            node = child
            best = node.fallback or best
        return node.template or best

    def _node(self, template: str) -> _Node:
        node = self._root
        for segment in (s for s in template.split("/") if s):
            if segment.startswith("{"):
                node.param = node.param or _Node()
                node = node.param
            else:
                node = node.children.setdefault(segment, _Node())
        return node

    def openapi_json(self) -> bytes:
        """The OpenAPI document of this router's table (``rest.routing.openapi``), rendered once."""
        if self._openapi is None:
            self._openapi = document_json() if self.routes == ROUTES else render_json(self.routes)
        return self._openapi

    @property
    def resources(self) -> tuple[Resource, ...]:
        return (*self._connect, *self._sidecar)


def _by_path(routes: Iterable[Route]) -> list[tuple[str, list[Route]]]:
    """The routes grouped by path template, in the order of each template's first route."""
    grouped: dict[str, list[Route]] = {}
    for route in routes:
        grouped.setdefault(route.path, []).append(route)
    return list(grouped.items())


def _jersey(path: str, rows: list[Route]) -> JerseyResource:
    return JerseyResource(
        path,
        {r.method: r.handler for r in rows if r.handler is not None},
        resource_methods=[r.method for r in rows if not r.internal],
        reads_entity=[r.method for r in rows if r.body is not None],
        consumes_json=all(r.consumes for r in rows),
    )


ROUTER = Router()


def route_template(path: str) -> str:
    """The metric label of a decoded path, as the routes of the table give it (``Router.label``)."""
    return ROUTER.label(path)


__all__ = ["ROUTER", "Resource", "RouteTarget", "Router", "SidecarResource", "route_template"]
