"""KIP-875 offsets requests whose bodies Connect's JSON binding cannot read, or that hold no offsets, get
Connect's status before anything else, also for a running connector (ConnectorsResource reads the body
before the herder sees the state): where the sidecar alters offsets (before 3.6) with a message that says
what is wrong, from 3.6 the worker's own answer to the bytes, forwarded. What a body holds is checked after
the connector's state, as the worker checks it: parity scenarios compare those answers with the worker's
(parity/test_parity_offsets.py), as they do the KIP's test plan lines on offsets themselves
(test_parity_busy.py too). The sidecars are the harness's: built from the code under test and served in
this process.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from control_plane.domain.offsets.request import NO_OFFSETS
from tests.support.harness import Sidecars
from tests.support.kafka_topics import produce
from tests.support.stack import Cluster, Stack, version_key
from tests.support.waiting import eventually

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"
ALTER_SINCE = (3, 6, 0)  # the workers alter offsets themselves (KIP-875); the sidecar before


async def create(
    client: httpx.AsyncClient, name: str, config: dict[str, str], created: list[str] | None = None
) -> None:
    if created is not None:
        created.append(name)
    answer = await client.put(f"/connectors/{name}/config", json=config)
    assert answer.status_code == 201, answer.text
    await eventually(
        lambda: client.get(f"/connectors/{name}/config"), lambda r: r.status_code == 200, what=f"{name} in the view"
    )


# -- malformed bodies -------------------------------------------------------------------------------
SOURCE_PARTITION = {"filename": "/tmp/kip875-in.txt"}
_BAD_BODIES = [
    pytest.param("source", b"{not json", "The request body is not valid JSON (", id="not-json"),
    pytest.param(
        "source", b"[1]", "The request body must be a JSON object with the key 'offsets', not an array", id="array"
    ),
    pytest.param("source", b"{}", NO_OFFSETS, id="no-offsets"),
    pytest.param("sink", b'{"offsets":[]}', NO_OFFSETS, id="empty-offsets"),
    pytest.param(
        "source",
        b'{"offsets":"x"}',
        '\'offsets\' must be an array of {"partition": {...}, "offset": {...}} objects, not a string',
        id="offsets-not-array",
    ),
    pytest.param(
        "source",
        b'{"offsets":[1]}',
        "offsets[0] must be an object with the keys 'partition' and 'offset', not a number",
        id="entry-number",
    ),
    pytest.param(
        "source",
        b'{"offsets":[{"partition":{"a":1},"offset":null,"extra":1}]}',
        "offsets[0] has the unknown key 'extra'; an entry has only 'partition' and 'offset'",
        id="unknown-key",
    ),
    pytest.param(
        "sink",
        b'{"offsets":[{"partition":"t-0","offset":{"kafka_offset":1}}]}',
        "offsets[0].partition must be an object, not a string",
        id="partition-not-object",
    ),
    pytest.param(
        "source",
        b'{"offsets":[{"partition":{"filename":"f"},"offset":7}]}',
        "offsets[0].offset must be an object or null (to reset the partition), not a number",
        id="offset-number",
    ),
]


# what Connect 4.4.0's JSON binding cannot read is 500 there (ConnectExceptionMapper over Jackson's exception)
UNBOUND = {
    "array",
    "entry-number",
    "not-json",
    "offset-number",
    "offsets-not-array",
    "partition-not-object",
    "unknown-key",
}
BAD_BODIES = [
    pytest.param(kind, body, 500 if p.id in UNBOUND else 400, message, id=p.id)
    for p in _BAD_BODIES
    for kind, body, message in [p.values]
]


@pytest.fixture(scope="module")
async def malformed_targets(
    cluster: Cluster, stack: Stack, sidecars: Sidecars
) -> AsyncIterator[tuple[httpx.AsyncClient, dict[str, str], str]]:
    """Per Connect version: the session's sidecar, a source and a sink connector (running: these bodies are
    refused before the state is looked at), and the sink's topic."""
    tag = f"{cluster.name}-bad"
    topic = f"kip875-bad-{cluster.name}"
    await produce(stack.bootstrap, topic, ["x"])
    client = (await sidecars.of(cluster)).client
    names = {"source": f"kip875-bad-src-{tag}", "sink": f"kip875-bad-sink-{tag}"}
    await create(
        client,
        names["source"],
        {"connector.class": FILE_SOURCE, "file": SOURCE_PARTITION["filename"], "topic": topic},
    )
    await create(client, names["sink"], {"connector.class": FILE_SINK, "file": "/tmp/kip875-out.txt", "topics": topic})
    yield client, names, topic
    for name in names.values():
        await client.delete(f"/connectors/{name}")


@pytest.mark.parametrize(("kind", "body", "status", "message"), BAD_BODIES)
async def test_malformed_bodies_get_connects_status_and_a_message_that_says_what_is_wrong(
    malformed_targets: tuple[httpx.AsyncClient, dict[str, str], str],
    cluster: Cluster,
    kind: str,
    body: bytes,
    status: int,
    message: str,
) -> None:
    client, names, topic = malformed_targets
    content = body.replace(b"TOPIC", topic.encode())
    answer = await client.patch(
        f"/connectors/{names[kind]}/offsets", content=content, headers={"content-type": "application/json"}
    )
    assert answer.status_code == status, answer.text
    assert answer.json()["error_code"] == status
    if version_key(cluster.version) < ALTER_SINCE or status == 400:  # else Jackson's words, the worker's
        assert answer.json()["message"].startswith(message.replace("TOPIC", topic)), answer.json()["message"]
