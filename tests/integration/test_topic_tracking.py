"""KIP-558 topic tracking's switches: a sidecar whose settings turn tracking or its reset off answers 403
as the worker does. The topics themselves (appear, reset, reappear, go with the connector; an unknown
connector) are parity scenarios (parity/test_parity_tracking.py)."""

from __future__ import annotations

import httpx
import pytest

from tests.support.harness import InProcess

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"


@pytest.fixture
async def switched_off(in_process: InProcess) -> list[httpx.AsyncClient]:
    """A sidecar whose settings say tracking on but reset off, and one with tracking off."""
    return [await in_process(topic_tracking_allow_reset=False), await in_process(topic_tracking_enable=False)]


async def test_tracking_switches_answer_403_as_the_worker_does(switched_off: list[httpx.AsyncClient]) -> None:
    no_reset, no_tracking = switched_off
    assert (await no_reset.get("/connectors/x/topics")).status_code == 200
    refused = await no_reset.put("/connectors/x/topics/reset")
    assert refused.status_code == 403
    assert refused.json() == {"error_code": 403, "message": "Topic tracking reset is disabled."}
    for method, path in (("GET", "/connectors/x/topics"), ("PUT", "/connectors/x/topics/reset")):
        answer = await no_tracking.request(method, path)
        assert answer.status_code == 403
        assert answer.json() == {"error_code": 403, "message": "Topic tracking is disabled."}
