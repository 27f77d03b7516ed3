"""Connector configs in request bodies read as Connect's Jackson reads them (``rules.config_values``): a
number is the text it was written as. On a 3.4.1 worker the sidecar does ``PATCH .../config`` itself (GET,
patch, PUT): the PUT carries each patched number as written, as 3.8+ would store it."""

from __future__ import annotations

import json

import respx

CURRENT = {"connector.class": "org.example.Source", "name": "c", "a": "1", "gone": "x"}


async def test_an_emulated_patch_reads_numbers_as_connect_does(router: respx.MockRouter, serve) -> None:
    router.get(path="/connectors/c/config").respond(200, json=CURRENT)
    put = router.put(path="/connectors/c/config").respond(200, json={"name": "c", "config": {}, "tasks": []})
    body = b'{"x": 1e-7, "y": 1.50, "z": -0, "w": 1E+3, "t": true, "gone": null}'
    async with serve(version="3.4.1") as running:
        answer = await running.client.patch(
            "/connectors/c/config", content=body, headers={"content-type": "application/json"}
        )
    assert answer.status_code == 200, answer.text
    assert json.loads(put.calls.last.request.content) == {
        "connector.class": "org.example.Source",
        "name": "c",
        "a": "1",
        "x": "1e-7",
        "y": "1.50",
        "z": "-0",
        "w": "1E+3",
        "t": "true",
    }


async def test_a_create_with_a_number_for_a_name_takes_its_text(router: respx.MockRouter, serve) -> None:
    created = router.post(path="/connectors").respond(201, json={"name": "1.50", "config": {}, "tasks": []})
    async with serve(version="4.3.1") as running:
        answer = await running.client.post(
            "/connectors",
            content=b'{"name": 1.50, "config": {"k": 1e-7}}',
            headers={"content-type": "application/json"},
        )
    assert answer.status_code == 201
    assert created.calls.last.request.content == b'{"name": 1.50, "config": {"k": 1e-7}}'  # unchanged
