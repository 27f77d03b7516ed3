"""KIP-745 and KIP-769 at the HTTP layer, with respx workers: the query read as Jersey reads it, the
request forwarded unchanged where the worker has the feature, composed where it does not."""

from __future__ import annotations

import json

import pytest
import respx

SOURCE = {"class": "org.example.FileSourceConnector", "type": "source", "version": "1.0"}
VALIDATE = {
    "name": "x",
    "error_count": 0,
    "groups": [],
    "configs": [
        {
            "definition": {"name": "transforms.sidecar.type", "group": "Transforms: sidecar", "order": 0},
            "value": {"recommended_values": ["org.example.T"]},
        }
    ],
}


@pytest.mark.parametrize(
    ("query", "composed"),
    [
        pytest.param("?connectorsOnly=false", True, id="false"),
        pytest.param("?connectorsOnly=FALSE", True, id="case"),
        pytest.param("?connectorsOnly=no", True, id="not-true-is-false"),
        pytest.param("?connectorsOnly=%20true", True, id="untrimmed"),
        pytest.param("?connectorsOnly=", False, id="empty-is-the-default"),
        pytest.param("?connectorsOnly", False, id="no-value-is-the-default"),
        pytest.param("?connectorsOnly=true&connectorsOnly=false", False, id="first-value"),
        pytest.param("", False, id="absent"),
    ],
)
async def test_plugin_listing_on_2_8_reads_the_query_as_jersey(
    router: respx.MockRouter, serve, query: str, composed: bool
) -> None:
    listed = router.get(path="/connector-plugins").respond(200, json=[SOURCE])
    router.put(path=f"/connector-plugins/{SOURCE['class']}/config/validate").respond(200, json=VALIDATE)
    async with serve(version="2.8.2") as running:
        answer = await running.client.get(f"/connector-plugins{query}")
    assert answer.status_code == 200
    if composed:
        listed = answer.json()
        assert listed[:2] == [SOURCE, {"class": "org.example.T", "type": "transformation"}]
        assert {"class": "org.apache.kafka.connect.json.JsonConverter", "type": "converter"} in listed
        assert "plugin.path are not listed (Kafka's own are)" in answer.headers["warning"]  # no plugin.path known
    else:  # the worker's own answer, the query as the client sent it
        assert answer.json() == [SOURCE] and "warning" not in answer.headers
        assert listed.calls.last.request.url.raw_path == f"/connector-plugins{query}".encode()


async def test_newer_workers_get_the_requests_unchanged(router: respx.MockRouter, serve) -> None:
    restart = router.post(path="/connectors/c/restart").respond(202, json={"name": "c"})
    listed = router.get(path="/connector-plugins").respond(200, json=[])
    config = router.get(path="/connector-plugins/X/config").respond(200, json=[])
    async with serve(version="3.2.0") as running:
        assert (await running.client.post("/connectors/c/restart?includeTasks=true")).status_code == 202
        assert (await running.client.get("/connector-plugins?connectorsOnly=false")).status_code == 200
        assert (await running.client.get("/connector-plugins/X/config")).status_code == 200
    assert restart.calls.last.request.url.raw_path == b"/connectors/c/restart?includeTasks=true"
    assert listed.calls.last.request.url.raw_path == b"/connector-plugins?connectorsOnly=false"
    assert config.call_count == 1


async def test_a_plugin_config_refusal_is_in_connects_shape(router: respx.MockRouter, serve) -> None:
    router.get(path="/connector-plugins").respond(200, json=[SOURCE])
    router.put(path=f"/connector-plugins/{SOURCE['class']}/config/validate").respond(200, json=VALIDATE)
    async with serve(version="2.8.2") as running:
        unknown = await running.client.get("/connector-plugins/Nope/config")
        transform = await running.client.get("/connector-plugins/org.example.T/config")
    assert (unknown.status_code, unknown.json()) == (404, {"error_code": 404, "message": "Unknown plugin Nope."})
    assert transform.status_code == 501 and json.loads(transform.content)["error_code"] == 501


async def test_restart_options_on_2_8_need_the_view(router: respx.MockRouter, serve) -> None:
    restart = router.post(path="/connectors/c/restart").respond(204)
    async with serve(version="2.8.2") as running:
        assert (await running.client.post("/connectors/c/restart")).status_code == 204  # the old request
        answer = await running.client.post("/connectors/c/restart?onlyFailed=true")
    assert answer.status_code == 503 and answer.json()["error_code"] == 503
    assert restart.call_count == 1
