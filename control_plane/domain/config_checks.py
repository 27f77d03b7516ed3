"""The seam for checks of a connector configuration that the sidecar runs before a worker sees it.

A check (KIP-891's version pins, KIP-158's topic-creation rules, ...) is a small class with one method,
``check(subject)``, given the configuration as the worker would validate it (``name`` included, a PATCH
already applied) and what request carries it. It answers the problems it found, per key, in Connect's
validation terms (``config_infos.ConfigProblem``), warnings that are not errors, and the keys the worker
must not be shown because it fails on them instead of reporting an error (Connect 4.3.1's
NullPointerException on an unsatisfiable version pin, say), and a ``refusal``: an error that the newest
Connect answers for the whole request instead of a validation (a connector version that is no version
range: 400 ``Unbounded range: [1.0``). ``connector_configs.ConnectorConfigs`` runs every check and merges
what they found into the worker's own validation, or refuses the request with the first refusal.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from .config_infos import ConfigProblem
from .errors import ControlPlaneError


class RequestKind(StrEnum):
    VALIDATE = "validate"  # PUT /connector-plugins/{p}/config/validate
    CREATE = "create"  # POST /connectors
    UPDATE = "update"  # PUT /connectors/{c}/config
    PATCH = "patch"  # PATCH /connectors/{c}/config (the patched configuration is checked)


@dataclass(frozen=True)
class ConfigSubject:
    kind: RequestKind
    name: str | None  # the connector's name; None on a validate without ``name``
    config: Mapping[str, str | None]


@dataclass(frozen=True)
class CheckResult:
    problems: tuple[ConfigProblem, ...] = ()
    warnings: tuple[str, ...] = ()  # worth saying, never a reason to refuse (an HTTP Warning header each)
    hidden_from_worker: frozenset[str] = frozenset()  # keys left out of the worker's validation
    refusal: ControlPlaneError | None = None  # the request is refused with this error, no validation


NOTHING = CheckResult()


def combine(results: list[CheckResult]) -> CheckResult:
    return CheckResult(
        tuple(p for r in results for p in r.problems),
        tuple(w for r in results for w in r.warnings),
        frozenset(k for r in results for k in r.hidden_from_worker),
        next((r.refusal for r in results if r.refusal is not None), None),
    )


class ConfigCheck(Protocol):
    async def check(self, subject: ConfigSubject) -> CheckResult: ...


__all__ = ["NOTHING", "CheckResult", "ConfigCheck", "ConfigSubject", "RequestKind", "combine"]
