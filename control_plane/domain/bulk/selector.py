"""Which connectors a bulk action picks (pure): a ``Selector`` read from the request's JSON, and the
connectors of the cluster, each a ``Candidate`` as the view shows it, matched against it.

A selector's criteria all hold (AND); a list criterion holds when any of its values does (OR):

- ``names``: these connectors, named (one the principal may not see, or the cluster lacks, is reported as
  the single request would answer it: 404 ``Connector <c> not found``);
- ``pattern``: a regular expression the whole name matches (as plan's ``prune_matching``);
- ``states``: the connector's state as the status endpoints show it through the sidecar;
- ``task_states``: any of its tasks in one of these states (``FAILED``: "every failed task");
- ``classes``: its ``connector.class``, as configured or by its simple name;
- ``types``: ``source`` or ``sink`` (AbstractHerder.connectorType's rule, ``rules.connectors``);
- ``topic``: a topic its tasks reported they read or write (KIP-558's active topics, from the view).

An empty selector is refused: acting on every connector is asked for with ``"pattern": ".*"``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import BadRequestError

TYPES = ("source", "sink")
_LISTS = ("names", "states", "task_states", "classes", "types")
KEYS = frozenset({*_LISTS, "pattern", "topic"})


@dataclass(frozen=True)
class Selector:
    names: tuple[str, ...] | None = None
    pattern: re.Pattern[str] | None = None
    states: frozenset[str] | None = None
    task_states: frozenset[str] | None = None
    classes: frozenset[str] | None = None
    types: frozenset[str] | None = None
    topic: str | None = None

    def as_json(self) -> dict[str, Any]:
        """The selector as the request gave it (sorted lists), for the answer."""
        body: dict[str, Any] = {}
        if self.names is not None:
            body["names"] = list(self.names)
        if self.pattern is not None:
            body["pattern"] = self.pattern.pattern
        for key in ("states", "task_states", "classes", "types"):
            values = getattr(self, key)
            if values is not None:
                body[key] = sorted(values)
        if self.topic is not None:
            body["topic"] = self.topic
        return body


@dataclass(frozen=True)
class Candidate:
    """A connector as the view shows it: its state and its tasks' states by the status rules of the workers
    at hand, its class and type, and its active topics (filled only when a selector asks for a topic)."""

    name: str
    state: str | None  # None: no status yet
    task_states: frozenset[str]
    connector_class: str
    type: str
    topics: frozenset[str] = frozenset()


def selector_of(data: Any) -> Selector:
    """The selector of a request's ``selector`` object; a ``BadRequestError`` naming what is wrong."""
    if not isinstance(data, dict):
        raise BadRequestError('The selector must be an object such as {"pattern": "orders-.*", "states": ["FAILED"]}')
    unknown = sorted(set(data) - KEYS)
    if unknown:
        raise BadRequestError(f"Unknown selector key(s) {', '.join(unknown)}: expected {', '.join(sorted(KEYS))}")
    lists = {key: _strings(data, key) for key in _LISTS}
    pattern = data.get("pattern")
    if pattern is not None and not isinstance(pattern, str):
        raise BadRequestError("The selector's pattern must be a regular expression (a string)")
    topic = data.get("topic")
    if topic is not None and (not isinstance(topic, str) or not topic):
        raise BadRequestError("The selector's topic must be a topic's name")
    if all(v is None for v in lists.values()) and pattern is None and topic is None:
        raise BadRequestError('The selector picks no connector: give at least one criterion ("pattern": ".*" for all)')
    types = lists["types"]
    if types is not None and not set(types) <= set(TYPES):
        raise BadRequestError(
            f"Unknown connector type(s) in the selector: {', '.join(sorted(set(types) - set(TYPES)))}"
        )
    return Selector(
        names=None if lists["names"] is None else tuple(dict.fromkeys(lists["names"])),
        pattern=None if pattern is None else _compiled(pattern),
        states=_upper(lists["states"]),
        task_states=_upper(lists["task_states"]),
        classes=None if lists["classes"] is None else frozenset(lists["classes"]),
        types=None if types is None else frozenset(types),
        topic=topic,
    )


def _strings(data: dict[str, Any], key: str) -> list[str] | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise BadRequestError(f"The selector's {key} must be a non-empty list of strings")
    return value


def _upper(values: list[str] | None) -> frozenset[str] | None:
    return None if values is None else frozenset(v.upper() for v in values)


def _compiled(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as err:
        raise BadRequestError(f"The selector's pattern {pattern!r} is not a regular expression: {err}") from None


def matches(selector: Selector, candidate: Candidate) -> bool:
    """Whether every criterion but ``names`` holds for ``candidate`` (``names`` chooses the candidates)."""
    if selector.pattern is not None and selector.pattern.fullmatch(candidate.name) is None:
        return False
    if selector.states is not None and candidate.state not in selector.states:
        return False
    if selector.task_states is not None and not selector.task_states & candidate.task_states:
        return False
    if selector.classes is not None and not _class_matches(selector.classes, candidate.connector_class):
        return False
    if selector.types is not None and candidate.type not in selector.types:
        return False
    return selector.topic is None or selector.topic in candidate.topics


def _class_matches(classes: frozenset[str], configured: str) -> bool:
    return configured in classes or configured.rsplit(".", 1)[-1] in classes


@dataclass(frozen=True)
class Picked:
    """The connectors picked, in order (by name, or as ``names`` lists them), and the names asked for
    that no visible connector has (each reported as the single request's 404)."""

    picked: tuple[str, ...]
    missing: tuple[str, ...]


def select(selector: Selector, candidates: Iterable[Candidate]) -> Picked:
    """The candidates ``selector`` picks; ``candidates`` are the connectors the principal may see."""
    by_name = {c.name: c for c in candidates}
    names: Sequence[str] = selector.names if selector.names is not None else sorted(by_name)
    picked = tuple(n for n in names if n in by_name and matches(selector, by_name[n]))
    missing = tuple(n for n in names if n not in by_name) if selector.names is not None else ()
    return Picked(picked, missing)


__all__ = ["KEYS", "TYPES", "Candidate", "Picked", "Selector", "matches", "select", "selector_of"]
