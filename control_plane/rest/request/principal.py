"""The principal a request was admitted for (``rest.steps.access`` sets it while the request is served), and
the access rules for it per connector: a request acting on many connectors (``POST /_sidecar/bulk``) refuses
each one what the principal would be refused sending that connector's single request."""

from __future__ import annotations

from contextvars import ContextVar

from ...domain.errors import ControlPlaneError, Forbidden, NotFoundError
from ...rules.access import Principal, Role, classify, refusal

PRINCIPAL: ContextVar[Principal | None] = ContextVar("principal", default=None)


class PrincipalGate:
    """``domain.bulk.Gate`` for one principal, by the rules of ``rules.access`` (403 and Connect's 404)."""

    def __init__(self, principal: Principal) -> None:
        self.principal = principal

    def sees(self, connector: str) -> bool:
        return self.principal.sees(connector)

    def refusal(self, method: str, path: str) -> ControlPlaneError | None:
        refused = refusal(self.principal, classify(method, path), method, path)
        if refused is None:
            return None
        status, message = refused
        return NotFoundError(message) if status == 404 else Forbidden(message)


def principal_gate() -> PrincipalGate:
    """The gate of the request being served (a viewer's where none was admitted: nothing passes unchecked)."""
    return PrincipalGate(PRINCIPAL.get() or Principal("anonymous", Role.VIEWER))


__all__ = ["PRINCIPAL", "PrincipalGate", "principal_gate"]
