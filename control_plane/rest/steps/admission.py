"""The admission hook: one place that sees every request before the sidecar forwards or routes it, a step of
the request pipeline (``rest.serving.pipeline``; ``Admission`` is the step), after the request limits.

``Admission.admit(exchange)`` is called once per HTTP request when there are checks (with none, the step
skips it and every request is admitted). It sees what the client sent
(``rest.request.exchange.Exchange``): the method, the raw path (still percent-encoded, no query), the query, the
headers (names lower-cased, in order, as the server parsed them), the peer address and the scheme; a check
must not read the body. It answers None (go on) or a ``Denied`` answer, which goes back as it is (status,
headers, body), counted in the request metrics like any answer. The checks run in order and the first denial
wins. Checks are synchronous and must not block: they run on the event loop for every request.

The checks come from the settings (``checks_for``, called by ``create_app``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ...settings import Settings
from ..errors import error_body
from ..request.exchange import Exchange, HttpReply
from ..routing.router import RouteTarget
from .step import Endpoint


@dataclass(frozen=True, slots=True)
class Denied:
    """The answer to a request a check refuses, sent as it is (add a Content-Type and Connect's error shape
    where the worker's answer would have them: ``denied_json``)."""

    status: int
    body: bytes = b""
    headers: tuple[tuple[bytes, bytes], ...] = ()


Check = Callable[[Exchange], Denied | None]


def denied_json(status: int, message: str, headers: tuple[tuple[bytes, bytes], ...] = ()) -> Denied:
    """A refusal in Connect's error shape ``{"error_code": N, "message": "..."}``."""
    return Denied(status, error_body(status, message), ((b"content-type", b"application/json"), *headers))


@dataclass(frozen=True)
class Admission:
    """The admission hook: ``checks`` run in order on every request; the first ``Denied`` is the answer."""

    checks: tuple[Check, ...] = field(default=())

    def admit(self, exchange: Exchange) -> Denied | None:
        for check in self.checks:
            denied = check(exchange)
            if denied is not None:
                return denied
        return None

    @property
    def admits_everything(self) -> bool:
        """True when there is no check (the step skips the call)."""
        return not self.checks

    async def __call__(self, exchange: Exchange, target: RouteTarget, then: Endpoint) -> HttpReply:
        """The step: a denial as it is (framed), else ``then``'s answer."""
        denied = None if self.admits_everything else self.admit(exchange)
        if denied is not None:
            return HttpReply(denied.status, framed(denied), denied.body)
        return await then(exchange, target)


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


__all__ = ["Admission", "Check", "Denied", "checks_for", "denied_json", "framed"]
