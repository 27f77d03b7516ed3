"""A connector's states through the REST API, and the sidecar's answer against the worker's for the same
request (the seed of the parity suite)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx

from .waiting import eventually


async def states(client: httpx.AsyncClient, name: str) -> tuple[str | None, list[str]]:
    """(connector state, task states) of ``GET /connectors/{name}/status``; (None, []) when not 200."""
    answer = await client.get(f"/connectors/{name}/status")
    if answer.status_code != 200:
        return None, []
    body = answer.json()
    return body["connector"]["state"], [t["state"] for t in body["tasks"]]


async def until_states(client: httpx.AsyncClient, name: str, connector: str, tasks: list[str]) -> None:
    """Until ``name`` is in state ``connector`` with tasks in ``tasks``."""
    await eventually(
        lambda: states(client, name), lambda s: s == (connector, tasks), what=f"{name} {connector} {tasks}"
    )


def without_added_versions(via: Any, direct: Any) -> Any:
    """The sidecar's answer without the ``version`` it adds (KIP-891, as 4.1+ shows it) to the connector and
    task states of a worker before 4.1, whose own states have none: what else both say must be equal."""
    if isinstance(via, dict) and isinstance(direct, dict):
        added = "state" in via and "version" in via and "version" not in direct
        return {k: without_added_versions(v, direct.get(k)) for k, v in via.items() if not (added and k == "version")}
    if isinstance(via, list) and isinstance(direct, list) and len(via) == len(direct):
        return [without_added_versions(a, b) for a, b in zip(via, direct, strict=True)]
    return via


async def same_answer(
    sidecar: httpx.AsyncClient,
    worker: httpx.AsyncClient,
    path: str,
    *,
    until: Callable[[httpx.Response], bool] = lambda _: True,
    timeout_s: float = 30,
) -> httpx.Response:
    """GET ``path`` through the sidecar and from the worker until both give the same status and JSON (state
    may be moving) and that answer is ``until``'s (a state both are on their way to); lists are compared in
    any order (e.g. GET /connectors: the worker's is a hash set's). Returns the sidecar's answer."""

    async def both() -> tuple[httpx.Response, httpx.Response]:
        return await sidecar.get(path), await worker.get(path)

    def agree(pair: tuple[httpx.Response, httpx.Response]) -> bool:
        via, direct = pair
        if via.status_code != direct.status_code:
            return False
        a, b = without_added_versions(via.json(), direct.json()), direct.json()
        if isinstance(a, list) and isinstance(b, list):
            a, b = (sorted(x, key=lambda item: json.dumps(item, sort_keys=True)) for x in (a, b))
        return bool(a == b) and until(via)

    via, _ = await eventually(both, agree, timeout_s=timeout_s, what=f"sidecar and worker agree on {path}")
    return via
