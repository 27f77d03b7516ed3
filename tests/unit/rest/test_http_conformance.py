"""Where the sidecar answers itself, it answers what Connect 4.4.0's Jetty and Jersey answer for the same
bytes: raw requests to a sidecar on its own server, the expected answers measured on the real 4.4.0 worker
(``tests/support/http_cases.py``, ``scripts/http_probe.py``); none of these requests reaches the worker."""

from __future__ import annotations

import pytest
from starlette.datastructures import Headers

from control_plane.rest.routing.jaxrs import (
    accepts_json,
    jersey_allow,
    media_type,
    path_params,
    template_segments,
)
from tests.support.http_cases import CASES, Case
from tests.support.raw_http import ScriptedWorker, sidecar_in_front_of


async def exchange(port: int, data: bytes) -> tuple[int, Headers, bytes]:
    import asyncio

    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    await writer.drain()
    answer = await reader.read()
    writer.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    raw = [(n.strip().lower().encode(), v.strip().encode()) for n, _, v in (h.partition(":") for h in lines[1:])]
    return int(lines[0].split(" ")[1]), Headers(raw=raw), body


@pytest.mark.parametrize("case", [c for c in CASES if c.own], ids=lambda c: c.id)
async def test_the_sidecar_answers_as_the_4_4_0_worker(case: Case) -> None:
    async with ScriptedWorker().running() as worker, sidecar_in_front_of(worker) as port:
        status, headers, body = await exchange(port, case.request())
    want_status, want_type, want_body = case.expected
    assert status == want_status
    assert headers.get("content-type") == want_type
    if want_body is not None:
        assert body == want_body
    assert "allow" not in headers or "allow" in case.extra
    for name, value in case.extra.items():
        assert headers.get(name) == value
    assert worker.lines == []  # answered by the sidecar, as the worker's HTTP stack would


@pytest.mark.parametrize(
    ("raw", "params"),
    [
        pytest.param(b"/connectors/c/tasks/0/status", {"connector": "c", "task": "0"}, id="plain"),
        pytest.param(b"/connectors/c/tasks/0/status/", {"connector": "c", "task": "0"}, id="trailing-slash"),
        pytest.param(b"/connectors/c;v=1/tasks/0;x/status;y", {"connector": "c", "task": "0"}, id="matrix"),
        pytest.param(b"/connectors;a/c/tasks/0/status", {"connector": "c", "task": "0"}, id="matrix-on-literal"),
        pytest.param(b"/connectors/a%3Bb/tasks/%200/status", {"connector": "a;b", "task": " 0"}, id="decoded-params"),
        pytest.param(b"/connectors/caf%C3%A9/tasks/1/status", {"connector": "caf\u00e9", "task": "1"}, id="utf-8"),
        pytest.param(b"/connectors/c/tasks/0/stat%75s", None, id="encoded-literal"),
        pytest.param(b"/connectors/c/tasks/0//status", None, id="empty-segment"),
        pytest.param(b"/connectors/c/tasks/0/status//", None, id="two-trailing-slashes"),
        # an empty name is this route, for Jetty 12 to refuse (tests/support/http_cases.py, uri-empty-name)
        pytest.param(b"/connectors//tasks/0/status", {"connector": "", "task": "0"}, id="empty-name"),
        pytest.param(b"/connectors/;x/tasks/0/status", {"connector": "", "task": "0"}, id="name-only-matrix"),
        pytest.param(b"/connectors/c/tasks/0/status/x", None, id="deeper"),
    ],
)
def test_paths_match_as_jersey_matches_them(raw: bytes, params: dict[str, str] | None) -> None:
    """Jersey compares literal segments encoded, drops matrix parameters, decodes path parameters (checked
    on 4.4.0 and 3.4.1: ``/stat%75s`` is 404 there, ``/c;x/status`` is connector ``c``)."""
    assert path_params(template_segments("/connectors/{connector}/tasks/{task:int}/status"), raw) == params


def test_allow_lists_the_methods_in_jerseys_order() -> None:
    """As the 4.4.0 worker lists them on OPTIONS (java.util.HashSet order)."""
    assert jersey_allow(["GET", "PATCH", "DELETE"]) == ["HEAD", "DELETE", "GET", "OPTIONS", "PATCH"]
    assert jersey_allow(["GET", "POST"]) == ["HEAD", "POST", "GET", "OPTIONS"]
    assert jersey_allow(["PUT"]) == ["OPTIONS", "PUT"]
    assert jersey_allow(["GET"]) == ["HEAD", "GET", "OPTIONS"]


@pytest.mark.parametrize(
    ("accept", "fits"),
    [
        ("", True),
        ("*/*", True),
        ("*", True),
        ("application/*", True),
        ("application", True),
        ("APPLICATION/JSON", True),
        ("application/json;q=0", True),
        ("text/html, application/json", True),
        ("text/html", False),
        ("text/*", False),
        ("text", False),
        ("garbage", False),
        ("application/xml", False),
        ("application/json;q=abc", None),
    ],
)
def test_accept_is_read_as_jersey_reads_it(accept: str, fits: bool | None) -> None:
    """Each measured on the 4.4.0 worker: 406 for False, 400 for None."""
    assert accepts_json(accept) is fits


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("application/json", ("application", "json", {})),
        ("application/json; charset=utf-8", ("application", "json", {"charset": "utf-8"})),
        ("application/json;", ("application", "json", {})),
        ("APPLICATION/JSON", ("application", "json", {})),
        ("garbage", None),
        ("", None),
        ("application", None),
        ("application/json, text/plain", None),
    ],
)
def test_content_type_is_parsed_as_jersey_parses_it(text: str, parsed: object) -> None:
    """None: the 4.4.0 worker answers 400."""
    assert media_type(text) == parsed


@pytest.mark.parametrize("path", ["/", "/health"])
@pytest.mark.parametrize("content_type", ["text/plain", "application/xml", "*/*"])
async def test_the_root_resource_takes_any_content_type(path: str, content_type: str) -> None:
    """Connect's ``RootResource`` (``/``, ``/health``) declares no ``@Consumes``: Jersey takes any media type
    there, where ``@Consumes(application/json)`` resources answer 415 (``ct-text-get``)."""
    request = f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: {content_type}\r\n\r\n"
    async with ScriptedWorker().running() as worker, sidecar_in_front_of(worker) as port:
        status, headers, _ = await exchange(port, request.encode())
    assert status == 200, headers
