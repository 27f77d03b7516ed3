"""The raw requests of ``tests/support/http_cases.py`` sent to the sidecar in front of each worker version and to the
Connect 4.4.0 worker directly: the same status, Content-Type and body (``Allow`` too), so that through the
sidecar a 3.4.1 worker's Jetty and Jersey answer as 4.4.0's do where the sidecar answers itself."""

from __future__ import annotations

import asyncio
import time
from email.utils import parsedate_to_datetime

import httpx
import pytest

from tests.support.http_cases import CASES, Case
from tests.support.stack import Cluster, Stack

# Jackson's messages (with a line and a column) are not reproduced: the status and the shape are Connect's,
# the message is the sidecar's own, naming the entry and the key (docs/differences.md).
JACKSON_MESSAGES = {"body-not-json", "body-array"}


async def exchange(url: str, data: bytes) -> tuple[int, str | None, str | None, bytes]:
    host, port = url.removeprefix("http://").rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(data)
    await writer.drain()
    answer = await reader.read()
    writer.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {n.strip().lower(): v.strip() for n, _, v in (h.partition(":") for h in lines[1:])}
    return int(lines[0].split(" ")[1]), headers.get("content-type"), headers.get("allow"), body


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
async def test_the_sidecar_answers_these_bytes_as_the_4_4_0_worker(
    case: Case, cluster: Cluster, stack: Stack, sidecar: httpx.AsyncClient
) -> None:
    via = await exchange(str(sidecar.base_url).rstrip("/"), case.request())
    direct = await exchange(stack.clusters["new"].connect_url, case.request())
    if case.id in JACKSON_MESSAGES:
        assert via[:3] == direct[:3] and b'"error_code":500' in via[3]
    elif case.names_worker:  # its body is compared with its own worker's in the parity suite
        assert via[:3] == direct[:3]
    else:
        assert via == direct
    status, content_type, body = case.expected
    assert (direct[0], direct[1]) == (status, content_type)  # the measurement in http_cases still holds
    if body is not None:
        assert direct[3] == body


async def test_the_sidecars_own_answers_carry_the_workers_server_and_a_date(
    cluster: Cluster, sidecar: httpx.AsyncClient, worker: httpx.AsyncClient
) -> None:
    """A worker's Jetty puts ``Server`` and ``Date`` on every answer. Through the sidecar, an answer of its
    view, one of its refusals and a worker's own answer each carry one of both: the worker's ``Server``
    (its Jetty's version), and a ``Date`` of now (``rest.steps.stamp``)."""
    jetty = (await worker.get("/")).headers["server"]
    assert jetty.startswith("Jetty(")
    view = await sidecar.get("/connectors")
    refused = await sidecar.get("/connectors/no-such-connector-anywhere/status")
    passed = await sidecar.get("/")
    assert view.headers.get("x-sidecar-source") == "view" and refused.status_code == 404
    for answer in (view, refused, passed):
        assert answer.headers.get_list("server") == [jetty], answer.headers
        dates = answer.headers.get_list("date")
        assert len(dates) == 1, answer.headers
        assert abs(parsedate_to_datetime(dates[0]).timestamp() - time.time()) < 30
