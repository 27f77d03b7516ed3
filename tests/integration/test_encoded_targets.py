"""Encoded and reserved characters in a connector name, sent as raw bytes through the sidecar and directly
to the worker, on both Connect versions: the answers must be the same (status and normalised body).

The pass-through forwards the request target byte for byte (tests/unit/test_pass_through_bytes.py); this
compares what the routes the sidecar answers itself (status, config, task status, topics; stop and
offsets, emulated on 3.4.1) say for the same bytes. On 3.4.1 an emulated endpoint is compared with what
Connect 4.4.0 answers directly (the worker there has no such endpoint), and so is every target Jetty 12
refuses on a route the sidecar answers (it answers Jetty 12's 400 in front of every worker version); a
passed-through endpoint (pause) gets the worker's own answer, Jetty 9's on 3.4.1 (docs/differences.md).
"""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

import pytest

from tests.support.differential import NormalisedAnswer, normalise_raw
from tests.support.harness import Sidecars
from tests.support.stack import Cluster, Stack
from tests.support.waiting import eventually

# {p}: this test's own prefix, so that a name the worker reads differently (a;b as a) is still nobody's
TARGETS = [
    "{p}a%3Bb",
    "{p};b",
    "{p}a%2Fb",
    "%2E%2E",
    "{p}a%2E%2E",
    "..%2F{p}",
    "{p}a%25b",
    "{p}a%5Cb",
    "{p}a%00b",
    "{p}caf%C3%A9",
    "{p}sp%20ace",
]
READS = ["status", "config", "tasks/0/status", "topics"]  # answered by the sidecar from its view
EMULATED = [("GET", "offsets"), ("PUT", "stop"), ("DELETE", "offsets")]  # native on 4.4.0, emulated on 3.4.1
ENDPOINTS = [*(("GET", r) for r in READS), *EMULATED, ("PUT", "pause")]  # pause: always passed through


async def raw(url: str, method: str, target: str) -> NormalisedAnswer:
    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    writer.write(
        f"{method} {target} HTTP/1.1\r\nhost: {parts.netloc}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n".encode()
    )
    await writer.drain()
    data = await reader.read()
    writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split()[1])
    if any(line.lower() == b"transfer-encoding: chunked" for line in lines[1:]):
        body = _dechunk(body)
    return normalise_raw(status, body)


def _dechunk(body: bytes) -> bytes:
    out = b""
    while body:
        size_line, _, rest = body.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            break
        out += rest[:size]
        body = rest[size + 2 :]
    return out


def _answered_by_sidecar(cluster: Cluster, method: str, endpoint: str) -> bool:
    return endpoint in READS or (not cluster.newest and (method, endpoint) in EMULATED)


def _refused_by_jetty(answer: NormalisedAnswer) -> bool:
    """Jetty's own 400 for the target (its HTML page, or no body), before any resource ran."""
    return answer.status == 400 and (answer.body is None or answer.kind() == "html")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(("method", "endpoint"), ENDPOINTS, ids=[f"{m}-{e}" for m, e in ENDPOINTS])
async def test_an_encoded_name_gets_the_workers_answer(
    stack: Stack,
    cluster: Cluster,
    sidecars: Sidecars,
    unique: str,
    method: str,
    endpoint: str,
    target: str,
) -> None:
    path = f"/connectors/{target.format(p=f'enc-{unique}-')}/{endpoint}"
    running = await sidecars.of(cluster)
    via = await raw(running.url, method, path)
    if not cluster.newest and _answered_by_sidecar(cluster, method, endpoint):
        # the sidecar answers as 4.4.0 on every worker: Jetty 12's refusals included (an encoded / or %, an
        # encoded dot segment, %5C, %00), which 3.4.1's Jetty 9 mostly takes
        newest = await raw(stack.clusters["new"].connect_url, method, path)
        if _refused_by_jetty(newest) or (method, endpoint) in EMULATED:
            assert via == newest, f"{method} {path}: sidecar {via}, worker 4.4.0 {newest}"
            return
    direct = await raw(cluster.connect_url, method, path)  # the worker's answer (passed through byte for byte)
    assert via == direct, f"{method} {path}: sidecar {via}, worker {cluster.name} {direct}"


async def test_the_worker_reads_a_literal_semicolon_as_a_path_parameter(cluster: Cluster, unique: str) -> None:
    """Why ``;`` matters: Connect's Jetty drops ``;...`` from a segment, so ``a;b`` names connector ``a``."""
    path = f"/connectors/enc-{unique};b/config"
    # the shared cluster may be rebalancing (409 from the worker itself): ask again until it answers
    answer = await eventually(lambda: raw(cluster.connect_url, "GET", path), lambda a: a.status != 409, what=path)
    assert answer == NormalisedAnswer(404, {"error_code": 404, "message": f"Connector enc-{unique} not found"})
