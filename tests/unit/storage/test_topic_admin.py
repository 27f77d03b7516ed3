"""The broker count of KIP-158's checks: the brokers the Metadata lists, and the brokers that hold a replica
of a partition but are not listed (down or restarting), from one answer of a scripted client."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from control_plane.storage.topic_admin import LiveBrokers, TopicAdmin


class Answer:
    def __init__(self, value: dict[str, Any]) -> None:
        self.value = value

    def to_object(self) -> dict[str, Any]:
        return self.value


class ScriptedClient:
    """What ``TopicAdmin`` uses of aiokafka's client: the controller's id, and one Metadata answer."""

    def __init__(self, metadata: dict[str, Any]) -> None:
        self.metadata = metadata
        self.cluster = type("Cluster", (), {"controller": None})()
        self.sent: list[Any] = []

    def get_random_node(self) -> int:
        return 1

    async def send(self, node: int, request: Any) -> Answer:
        self.sent.append(request)
        return Answer(self.metadata)


def metadata(listed: list[int], replicas: list[list[int]]) -> dict[str, Any]:
    return {
        "brokers": [{"node_id": n, "host": "h", "port": 9092, "rack": None} for n in listed],
        "topics": [
            {
                "error_code": 0,
                "topic": "t",
                "is_internal": False,
                "partitions": [{"partition": i, "replicas": r} for i, r in enumerate(replicas)],
            }
        ],
    }


@pytest.mark.parametrize(
    ("listed", "replicas", "expected"),
    [
        pytest.param([1, 2, 3], [[1, 2, 3], [2, 3, 1]], LiveBrokers(3), id="all-live"),
        pytest.param([1, 2], [[1, 2, 3], [3]], LiveBrokers(2, frozenset({3})), id="one-restarting"),
        pytest.param([1], [], LiveBrokers(1), id="no-topics"),
    ],
)
async def test_live_brokers_and_those_that_hold_replicas_but_are_not_listed(
    listed: list[int], replicas: list[list[int]], expected: LiveBrokers
) -> None:
    admin = TopicAdmin({"bootstrap_servers": "127.0.0.1:9"}, 1000)
    client = ScriptedClient(metadata(listed, replicas))

    @contextlib.asynccontextmanager
    async def scripted(operation: str) -> AsyncIterator[ScriptedClient]:
        yield client

    admin._client = scripted
    assert await admin.live_brokers() == expected
    assert len(client.sent) == 1  # every topic's metadata in one request
