"""What a handler reads of a request as the worker's Jersey reads it, beyond what Starlette's ``Request``
gives: a boolean query parameter (``query_bool``) and the path as the client sent it (``raw_path``)."""

from __future__ import annotations

from starlette.requests import Request


def query_bool(request: Request, name: str, default: bool) -> bool:
    """A JAX-RS ``@QueryParam @DefaultValue`` boolean as Jersey reads it (checked against 4.4.0): the first
    value, ``Boolean.valueOf`` of it untrimmed (``true`` in any case is true, `` true`` or ``yes`` false);
    absent, or present without a value: the default."""
    values = request.query_params.getlist(name)
    if not values or values[0] == "":
        return default
    return values[0].lower() == "true"


def raw_path(request: Request) -> str:
    """The request's path as the client sent it (still percent-encoded), without its query."""
    path: str = request.scope.get("raw_path", b"").decode("latin-1") or request.scope["path"]
    return path.split("?", 1)[0]


__all__ = ["query_bool", "raw_path"]
