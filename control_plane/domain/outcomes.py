"""What the herder's features answer: the domain's own outcomes, never HTTP objects (the REST layer renders
them).

- ``Answer[T]``: the sidecar answers itself, with ``value`` and where it came from (``Provenance``);
- ``Refusal``: the sidecar answers itself with a domain error (a 404 from the view, say), with provenance;
- ``Forward[T]``: pass the client's request through to a worker unchanged; ``fallback``, when set, is the
  answer to give instead when no worker answers (the view, marked stale); ``rewrite``, when set, reshapes
  the worker's answer (into the newest release's shape, or with what an old worker's answer lacks):
  ``reshaped`` makes one of a function of the whole answer, ``json_amended`` (``json_reshaped``) of one of
  a 200's JSON body;
- ``Accepted``: an asynchronous action was started (Connect's 202; ``value``, when set, is its body),
  ``Done``: carried out (204);
- ``Relay``: a worker's answer to a request the sidecar composed (the PUT behind an emulated PATCH);
- ``Reply``: the sidecar's own answer with the status a newer worker gives (a health check's 503).

``answer`` and ``answer_awaited`` make the sidecar's own answer of a read that may raise a domain error:
the value, or the error as a ``Refusal``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any, Generic, TypeVar

import orjson

from ..upstream import UpstreamResponse
from .errors import ControlPlaneError

T = TypeVar("T", covariant=True)


class Source(StrEnum):
    VIEW = "view"  # the materialized view of the internal topics
    SIDECAR = "sidecar"  # the sidecar carried the operation out itself (emulated)


@dataclass(frozen=True)
class Provenance:
    source: Source
    stale: bool = False  # no worker answered the last probe: the view may be out of date
    age_s: float | None = None  # how old the newest record the view applied is


SIDECAR = Provenance(Source.SIDECAR)


@dataclass(frozen=True)
class Answer(Generic[T]):
    value: T
    provenance: Provenance = SIDECAR
    warnings: tuple[str, ...] = ()  # what the answer's shape cannot say (an HTTP Warning header each)


@dataclass(frozen=True)
class Refusal:
    error: ControlPlaneError
    provenance: Provenance


Rewrite = Callable[[UpstreamResponse], Awaitable[UpstreamResponse]]


def reshaped(shape: Callable[[UpstreamResponse], UpstreamResponse]) -> Rewrite:
    """The rewrite that reshapes the whole answer (its status and headers at hand)."""

    async def rewrite(answer: UpstreamResponse) -> UpstreamResponse:
        return shape(answer)

    return rewrite


def json_amended(amend: Callable[[Any], Awaitable[Any]]) -> Rewrite:
    """The rewrite of a 200 answer's JSON body by ``amend``; any other answer, or one that is no JSON, unchanged."""

    async def rewrite(answer: UpstreamResponse) -> UpstreamResponse:
        if answer.status != 200:
            return answer
        try:
            data = orjson.loads(answer.body)
        except orjson.JSONDecodeError:
            return answer
        return replace(answer, body=orjson.dumps(await amend(data)))

    return rewrite


def json_reshaped(reshape: Callable[[Any], Any]) -> Rewrite:
    """``json_amended`` by a function that needs nothing else (a newer release's shape of the JSON)."""

    async def amend(data: Any) -> Any:
        return reshape(data)

    return json_amended(amend)


@dataclass(frozen=True)
class Forward(Generic[T]):
    fallback: Callable[[], Answer[T] | Refusal | None] | None = None  # None when called: no fallback now
    warnings: tuple[str, ...] = ()  # added to the worker's answer (an HTTP Warning header each)
    rewrite: Rewrite | None = None  # the worker's answer, reshaped


@dataclass(frozen=True)
class Relay:
    response: UpstreamResponse
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Reply:
    status: int
    body: object = None  # JSON; None: no body (a 204)


@dataclass(frozen=True)
class Accepted(Generic[T]):
    value: T | None = None


@dataclass(frozen=True)
class Done:
    pass


Read = Answer[T] | Refusal | Forward[T]
V = TypeVar("V")


def answer(read: Callable[[], V]) -> Answer[V] | Refusal:
    """``read()`` as the sidecar's own answer, or its domain error as a refusal."""
    try:
        return Answer(read())
    except ControlPlaneError as err:
        return Refusal(err, SIDECAR)


async def answer_awaited(read: Callable[[], Awaitable[V]]) -> Answer[V] | Refusal:
    """``answer`` of a read that is awaited."""
    try:
        return Answer(await read())
    except ControlPlaneError as err:
        return Refusal(err, SIDECAR)


__all__ = [
    "SIDECAR",
    "Accepted",
    "Answer",
    "Done",
    "Forward",
    "Provenance",
    "Read",
    "Refusal",
    "Relay",
    "Reply",
    "Rewrite",
    "Source",
    "answer",
    "answer_awaited",
    "json_amended",
    "json_reshaped",
    "reshaped",
]
