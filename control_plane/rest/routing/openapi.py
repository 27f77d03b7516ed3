"""The sidecar's OpenAPI document, rendered from the one route table (``routes``) and the typed models of
``rest.entities``: ``connect_models`` (Connect's entities) and ``sidecar_models`` (the sidecar's own answers);
never written by hand. Served at ``GET /_sidecar/openapi.json`` (``/_sidecar`` is no Connect path) and written
to a file by ``control-plane openapi`` (``make api-doc``).

Two parts: Connect's REST API as the newest release the sidecar provides on every worker version (the
operations of Connect 4.4's ``rest/resources``, tag ``connect``; forwarded to a worker, answered from the
view, or emulated where the workers lack them), and the sidecar's own endpoints (tag ``sidecar``). The
workers' internal endpoints (InternalConnectResource) are left out, as Connect leaves them out of its own.
The tests check the document against Connect's own description built from its jar, and fuzz the sidecar
with it (tests/integration/test_sidecar_fuzz.py).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from ...domain.api_version import NEWEST_KNOWN
from ..entities import connect_models as cm
from .routes import NO_BODY, ROUTES, TEXT, Body, Route, label_of

_STR = {"type": "string"}


def documented(routes: Sequence[Route] = ROUTES) -> tuple[Route, ...]:
    """The routes the document names: every route but the workers' internal ones."""
    return tuple(route for route in routes if not route.internal)


def _ref(model: type[BaseModel]) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{model.__name__}"}


def _content(body: Body) -> dict[str, Any]:
    if body is NO_BODY:
        return {}
    if body == TEXT:
        return {"content": {TEXT: {"schema": _STR}}}
    assert not isinstance(body, str)
    return {"content": {"application/json": {"schema": _ref(body)}}}


def _operation(op: Route) -> dict[str, Any]:
    path = label_of(op.path)
    out: dict[str, Any] = {
        "operationId": f"{op.method.lower()}{''.join(p.strip('{}').title() for p in path.split('/')) or 'Root'}",
        "summary": op.summary,
        "tags": [op.tag],
    }
    if op.params:
        out["parameters"] = [
            {
                "name": p.name,
                "in": p.where,
                "required": p.required or p.where == "path",
                "schema": dict(p.schema),
                **({"description": p.description} if p.description else {}),
                **({"style": "form", "explode": True} if p.schema.get("type") == "array" else {}),
            }
            for p in op.params
        ]
    if op.body is not None:
        out["requestBody"] = {"required": True, "content": {"application/json": {"schema": _ref(op.body)}}}
    answers = {
        str(status): {"description": _DESCRIPTIONS.get(status, "OK"), **_content(body)}
        for status, body in op.answers.items()
    }
    answers["default"] = {"description": "Connect's error shape", **_content(cm.ErrorMessage)}
    out["responses"] = answers
    return out


_DESCRIPTIONS = {200: "OK", 201: "Created", 202: "Accepted", 204: "No Content", 500: "Failed", 503: "Not ready"}


def _models(routes: Sequence[Route]) -> list[type[BaseModel]]:
    seen: dict[str, type[BaseModel]] = {}
    for op in documented(routes):
        for body in (op.body, *op.answers.values(), cm.ErrorMessage):
            if isinstance(body, type) and seen.setdefault(body.__name__, body) is not body:
                raise ValueError(f"two models named {body.__name__}")
    return list(seen.values())


def render(routes: Sequence[Route]) -> dict[str, Any]:
    """The OpenAPI 3.1 document of a route table."""
    _, schemas = models_json_schema(
        [(m, "serialization") for m in _models(routes)], ref_template="#/components/schemas/{model}"
    )
    paths: dict[str, dict[str, Any]] = {}
    for op in documented(routes):
        paths.setdefault(label_of(op.path), {})[op.method.lower()] = _operation(op)
    major, minor = NEWEST_KNOWN
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Kafka Connect REST API, through the control-plane sidecar",
            "version": f"{major}.{minor}",
            "description": (
                f"Connect {major}.{minor}'s REST API on every worker version (tag connect: forwarded to a worker, "
                "answered from the view, or emulated where the workers lack it) and the sidecar's own endpoints "
                '(tag sidecar). Every error is Connect\'s {"error_code", "message"}. Paths not named here '
                "(Connect's internal endpoints, paths of newer releases) are forwarded to a worker as they are."
            ),
        },
        "tags": [
            {"name": "connect", "description": "Connect's REST API, the newest release the sidecar provides"},
            {"name": "sidecar", "description": "The sidecar's own endpoints"},
        ],
        "paths": paths,
        "components": {"schemas": schemas.get("$defs", {})},
    }


def render_json(routes: Sequence[Route]) -> bytes:
    return json.dumps(render(routes), indent=2, sort_keys=False).encode() + b"\n"


@cache
def document() -> dict[str, Any]:
    """The sidecar's OpenAPI document, of its route table (``routes.ROUTES``; built once: a pure function of the
    code)."""
    return render(ROUTES)


@cache
def document_json() -> bytes:
    return render_json(ROUTES)


__all__ = ["document", "document_json", "documented", "render", "render_json"]
