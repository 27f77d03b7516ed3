"""``control-plane clusters`` (``control_plane.clusters_cli``): the clusters named on the command line or in
a file, with their tokens, and the reads' edge cases with respx standing in for the sidecars: a sidecar
refusing the connection, one whose view is not ready (503), one refusing the token (401), one too slow."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from control_plane import cli
from control_plane.clusters_cli import ClusterListError, ClusterSidecar, read_cluster, read_clusters, targets_of

SUMMARY = {
    "connectors": {"total": 2, "by_state": {"RUNNING": 1, "FAILED": 1}},
    "tasks": {"total": 1, "by_state": {"RUNNING": 1}},
    "failed": {
        "connectors": [{"connector": "c", "worker_id": "w", "trace": "E: x", "since": "t", "since_ms": 1}],
        "tasks": [],
    },
    "recent_changes": [],
    "timeline": {"capacity": 5000, "recorded": 0, "oldest": None, "oldest_ms": None},
}
LAG = {
    "refreshed_ms": 1,
    "sinks": [{"connector": "s", "group": "connect-s", "lag": 7, "max_partition_lag": 7}],
    "sources": [],
}
NOT_READY = {"error_code": 503, "message": "The view has not read the internal topics to their end yet."}
UNAUTHORIZED = {"error_code": 401, "message": "Authentication required"}


def sidecar(router: respx.MockRouter, base: str, summary: Any = SUMMARY, lag: Any = LAG) -> None:
    for path, answer in (("/_sidecar/summary", summary), ("/_sidecar/lag", lag)):
        route = router.get(f"{base}{path}")
        if isinstance(answer, Exception):
            route.mock(side_effect=answer)
        elif isinstance(answer, httpx.Response):
            route.mock(return_value=answer)
        else:
            route.respond(200, json=answer)


async def test_a_cluster_read_whole() -> None:
    with respx.mock(assert_all_called=True) as router:
        sidecar(router, "http://eu:8084")
        read = await read_cluster(ClusterSidecar("eu", "http://eu:8084"), 5)
        assert router.routes[0].calls.last.request.url.params["recent"] == "0"
    assert (read.summary, read.lag, read.error, read.lag_error) == (SUMMARY, LAG, None, None)


@pytest.mark.parametrize(
    ("summary", "lag", "error", "lag_error"),
    [
        pytest.param(
            httpx.ConnectError("[Errno 111] Connection refused"),
            httpx.ConnectError("[Errno 111] Connection refused"),
            "ConnectError: [Errno 111] Connection refused",
            "ConnectError: [Errno 111] Connection refused",
            id="unreachable",
        ),
        pytest.param(
            httpx.Response(503, json=NOT_READY),
            httpx.Response(503, json={"error_code": 503, "message": "Lag and freshness need the sidecar's view"}),
            "503: The view has not read the internal topics to their end yet.",
            "503: Lag and freshness need the sidecar's view",
            id="view-not-ready",
        ),
        pytest.param(
            httpx.Response(401, json=UNAUTHORIZED),
            httpx.Response(401, json=UNAUTHORIZED),
            "401: Authentication required",
            "401: Authentication required",
            id="unauthorized",
        ),
        pytest.param(httpx.ReadTimeout("timed out"), LAG, "no answer within 5 s", None, id="summary-timed-out"),
        pytest.param(SUMMARY, httpx.Response(502, text="Bad Gateway"), None, "502: Bad Gateway", id="lag-not-json"),
    ],
)
async def test_a_cluster_not_read_says_why(summary: Any, lag: Any, error: str | None, lag_error: str | None) -> None:
    with respx.mock() as router:
        sidecar(router, "http://eu:8084", summary, lag)
        read = await read_cluster(ClusterSidecar("eu", "http://eu:8084"), 5)
    assert (read.error, read.lag_error) == (error, lag_error)
    assert (read.summary is None) == (error is not None) and (read.lag is None) == (lag_error is not None)


async def test_a_sidecar_that_never_answers_is_bounded_by_the_timeout() -> None:
    async def hang(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(30)
        return httpx.Response(200, json=SUMMARY)

    with respx.mock(assert_all_called=False) as router:  # a call is recorded once answered: these never are
        router.get("http://slow:8084/_sidecar/summary").mock(side_effect=hang)
        router.get("http://slow:8084/_sidecar/lag").mock(side_effect=hang)
        async with asyncio.timeout(5):
            (read,) = await read_clusters([ClusterSidecar("slow", "http://slow:8084")], 0.2)
    assert read.error == read.lag_error == "no answer within 0.2 s"


async def test_each_cluster_sends_its_own_token() -> None:
    with respx.mock() as router:
        sidecar(router, "http://eu:8084")
        sidecar(router, "http://us:8084")
        await read_clusters(
            [ClusterSidecar("eu", "http://eu:8084", "eu-token"), ClusterSidecar("us", "http://us:8084")], 5
        )
        headers = {c.request.url.host: c.request.headers.get("authorization") for c in router.calls}
    assert headers == {"eu": "Bearer eu-token", "us": None}


def test_targets_from_the_command_line_and_a_file_with_their_tokens(tmp_path: Path) -> None:
    listing = tmp_path / "clusters.yaml"
    listing.write_text(
        "clusters:\n"
        "  - {name: prod-eu, url: 'https://eu:8084/', token_env: EU_TOKEN}\n"
        "  - {name: prod-us, url: 'https://us:8084', token: us-secret}\n"
        "  - {name: on, url: 'https://ap:8084'}\n"
    )
    env = {"EU_TOKEN": "eu-secret", "CONTROL_PLANE_TOKEN_STAGING_1": "staging-secret"}
    targets = targets_of(["staging.1=http://staging:8084", "dev=http://dev:8084"], listing, "default", env)
    assert targets == [
        ClusterSidecar("staging.1", "http://staging:8084", "staging-secret"),
        ClusterSidecar("dev", "http://dev:8084", "default"),
        ClusterSidecar("prod-eu", "https://eu:8084", "eu-secret"),
        ClusterSidecar("prod-us", "https://us:8084", "us-secret"),
        ClusterSidecar("on", "https://ap:8084", "default"),
    ]


@pytest.mark.parametrize(
    ("sidecars", "text", "message"),
    [
        pytest.param([], None, "no clusters", id="none"),
        pytest.param(["eu"], None, "NAME=URL expected", id="no-url"),
        pytest.param(["eu=http://a", "eu=http://b"], None, "given twice", id="twice"),
        pytest.param([], "- {name: eu, url: x}\n", "a list of clusters", id="not-a-mapping"),
        pytest.param([], "clusters:\n  - {name: eu}\n", "without a name or url", id="no-url-in-file"),
        pytest.param([], '{"clusters": [', "clusters.json", id="bad-json"),
    ],
)
def test_bad_input_is_refused(tmp_path: Path, sidecars: list[str], text: str | None, message: str) -> None:
    listing = None
    if text is not None:
        listing = tmp_path / ("clusters.json" if text.startswith("{") else "clusters.yaml")
        listing.write_text(text)
    with pytest.raises(ClusterListError, match=message):
        targets_of(sidecars, listing, None, {})


def test_the_command_exits_1_and_shows_the_unreachable_cluster(capsys: pytest.CaptureFixture[str]) -> None:
    with respx.mock() as router:
        sidecar(router, "http://eu:8084")
        sidecar(
            router, "http://us:8084", httpx.Response(401, json=UNAUTHORIZED), httpx.Response(401, json=UNAUTHORIZED)
        )
        status = cli.main(["clusters", "--sidecar", "eu=http://eu:8084", "--sidecar", "us=http://us:8084"])
    text = capsys.readouterr().out
    assert status == 1
    assert "us  unreachable: 401: Authentication required" in text.splitlines()
    assert "Failures: 1" in text and "Most lag: 1 sink(s)" in text


def test_the_command_prints_the_merged_document_and_exits_0_when_every_cluster_was_read(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with respx.mock() as router:
        sidecar(router, "http://eu:8084")
        status = cli.main(["clusters", "--sidecar", "eu=http://eu:8084", "--output", "json"])
    assert status == 0
    document = json.loads(capsys.readouterr().out)
    assert document["totals"]["connectors"]["total"] == 2 and document["unread"] == []
    assert [f["connector"] for f in document["failures"]] == ["c"]


def test_bad_input_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["clusters"]) == 2
    assert "no clusters" in capsys.readouterr().err
