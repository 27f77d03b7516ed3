"""``GET /connectors/{c}/status`` from the view is serialized once per answer object (``rest.resources.reads``): the
herder gives the same object until the view changes, and each object gets its own JSON."""

from __future__ import annotations

import orjson

from control_plane.rest.entities import render
from control_plane.rest.resources import reads
from control_plane.view import ConnectorStateView, StateEntry


def state(name: str, task_state: str) -> ConnectorStateView:
    running = StateEntry("RUNNING", "w1:8083", None, None, 1)
    return ConnectorStateView(name, running, ((0, StateEntry(task_state, "w1:8083", "t\n", None, 1)),), "source")


def dumped(value: object) -> bytes:
    return value if isinstance(value, bytes) else orjson.dumps(value)


def test_the_same_answer_object_is_serialized_once() -> None:
    a = state("a", "RUNNING")
    first = reads._state_json(a)
    assert reads._state_json(a) is first
    assert dumped(first) == dumped(render.connector_state_json(a))


def test_another_answer_object_gets_its_own_json() -> None:
    a, failed = state("a", "RUNNING"), state("a", "FAILED")
    assert dumped(reads._state_json(failed)) == dumped(render.connector_state_json(failed))
    assert dumped(reads._state_json(a)) != dumped(reads._state_json(failed))
    for n in range(5000):  # the cache stays bounded and still answers right
        s = state(f"c{n}", "RUNNING")
        assert dumped(reads._state_json(s)) == dumped(render.connector_state_json(s))
    assert len(reads._states) <= 4096
