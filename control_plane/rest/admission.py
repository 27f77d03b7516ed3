"""The admission hook: ONE place that sees every request before the sidecar forwards or routes it.

``Admission.admit(arrival)`` is called exactly once per HTTP request, whichever way the request is then
served:
  - by the pass-through below ASGI (``rest.server.SidecarProtocol``: paths no route of the sidecar
    answers, served on the connection without the ASGI machinery), before the request is forwarded;
  - by the ASGI app (``rest.dispatch.SidecarApp.__call__``: everything else, and every request under an
    in-process ASGI transport), before the short path, Starlette's middleware or its routing.

It sees what the client sent: the method, the raw path (still percent-encoded, no query), the query, the
headers (names lower-cased, in order, as the server parsed them), the peer address and the scheme. It
answers None (go on) or a ``Denied`` answer, which goes back as it is (status, headers, body), counted in
the request metrics like any answer. The checks run in order and the first denial wins; with no checks,
``admit`` costs one attribute test. Checks are synchronous and must not block: they run on the event loop
for every request.

The checks come from the settings (``checks_for``, called by ``create_app``): authentication and roles
and request limits (issue 14) are checks of this hook.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import orjson

from ..settings import Settings

Headers = Sequence[tuple[bytes, bytes]]


@dataclass(frozen=True, slots=True)
class Arrival:
    """A request as it arrived, before the sidecar decides anything about it."""

    method: str
    raw_path: bytes  # percent-encoded as received, without the query
    query: bytes
    headers: Headers  # lower-cased names, as received
    client: tuple[str, int] | None  # the peer (host, port), when the server knows it
    scheme: str = "http"  # "https" on a TLS listener


@dataclass(frozen=True, slots=True)
class Denied:
    """The answer to a request a check refuses, sent as it is (add a Content-Type and Connect's error shape
    where the worker's answer would have them: ``denied_json``)."""

    status: int
    body: bytes = b""
    headers: tuple[tuple[bytes, bytes], ...] = ()


Check = Callable[[Arrival], Denied | None]


def denied_json(status: int, message: str, headers: tuple[tuple[bytes, bytes], ...] = ()) -> Denied:
    """A refusal in Connect's error shape ``{"error_code": N, "message": "..."}``."""
    body = orjson.dumps({"error_code": status, "message": message})
    return Denied(status, body, ((b"content-type", b"application/json"), *headers))


@dataclass(frozen=True)
class Admission:
    """The admission hook: ``checks`` run in order on every request; the first ``Denied`` is the answer."""

    checks: tuple[Check, ...] = field(default=())

    def admit(self, arrival: Arrival) -> Denied | None:
        for check in self.checks:
            denied = check(arrival)
            if denied is not None:
                return denied
        return None

    @property
    def admits_everything(self) -> bool:
        """True when there is no check (the servers skip building an ``Arrival``)."""
        return not self.checks


def checks_for(settings: Settings) -> tuple[Check, ...]:
    """The admission checks the settings ask for, in the order they run."""
    del settings  # no check yet: every request is admitted
    return ()


def framed(denied: Denied) -> list[tuple[bytes, bytes]]:
    """A denial's headers with its Content-Length (none on 1xx, 204 and 304)."""
    headers = list(denied.headers)
    if denied.status >= 200 and denied.status not in (204, 304):
        headers.append((b"content-length", str(len(denied.body)).encode()))
    return headers


__all__ = ["Admission", "Arrival", "Check", "Denied", "checks_for", "denied_json", "framed"]
