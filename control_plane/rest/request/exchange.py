"""What the request pipeline (``rest.serving.pipeline``) works on: one HTTP request as the server parsed it
(``Exchange``) and its answer (``HttpReply``). The server (``rest.serving.server``) and the ASGI adapter
(``rest.serving.app.SidecarApp``) build an ``Exchange`` each their own way and write the ``HttpReply`` each their
own way; everything between is the same code.

The body is read through ``receive``, ASGI's ``http.request`` messages (``{"body", "more_body"}``, then
``http.disconnect``), so that Starlette's ``Request`` reads it for the handlers and each stage can wrap it
(the limits count it, access control keeps what it audits).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive

Headers = list[tuple[bytes, bytes]]
Handler = Callable[[Request], Awaitable[Response]]  # a route's endpoint: parse, one herder call, render


def decoded_path(raw_path: bytes) -> str:
    """The path as routing reads it: percent-decoded as UTF-8 (as uvicorn and Starlette decode it)."""
    path = raw_path.decode("latin-1")
    return unquote(path) if "%" in path else path


@dataclass(slots=True)
class Exchange:
    """One request. ``raw_path``: the target's path as the client sent it (percent-encoded, no query);
    ``headers``: names lower-cased, in the order received; ``deadline``: set by the request limits, on the
    event loop's clock (None: no budget)."""

    method: str
    raw_path: bytes
    query: bytes
    headers: Headers
    receive: Receive
    path: str = ""
    client: tuple[str, int] | None = None
    scheme: str = "http"
    http_version: str = "1.1"
    deadline: float | None = None
    server: tuple[str, int] | None = None  # the local address the request came in on

    def __post_init__(self) -> None:
        if not self.path:
            self.path = decoded_path(self.raw_path)

    def scope(self, **extra: Any) -> dict[str, Any]:
        """An ASGI HTTP scope of the request (what Starlette's ``Request`` reads), with ``extra`` keys."""
        return {
            "type": "http",
            "http_version": self.http_version,
            "method": self.method,
            "scheme": self.scheme,
            "path": self.path,
            "raw_path": self.raw_path,
            "query_string": self.query,
            "root_path": "",
            "headers": self.headers,
            "client": self.client,
            "server": None,
            **extra,
        }


@dataclass(slots=True)
class HttpReply:
    """An answer: the status, the headers as they go out (framing included: ``Content-Length`` where the
    answer has a body) and the whole body."""

    status: int
    headers: Headers = field(default_factory=list)
    body: bytes = b""


__all__ = ["Exchange", "Handler", "Headers", "HttpReply", "decoded_path"]
