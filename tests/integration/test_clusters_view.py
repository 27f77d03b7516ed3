"""``control-plane clusters`` against the real stack: the sidecars of two of its Connect clusters (served
from the code under test) and one address where nothing listens, read as three clusters. The merged
counts are each sidecar's own summary, a sink task that really failed on its worker is the first failure
listed (with the worker's trace), and the cluster nobody answers for is shown unread: exit status 1."""

from __future__ import annotations

import argparse
import asyncio
import io
import json
from pathlib import Path
from typing import Any

import httpx

from control_plane import clusters_cli
from tests.support.connect_answers import until_states
from tests.support.harness import Sidecars
from tests.support.kafka_topics import produce_record
from tests.support.parity import create_topic
from tests.support.ports import closed_url
from tests.support.stack import Stack
from tests.support.waiting import eventually

FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"


def parse(argv: list[str]) -> argparse.Namespace:
    """``argv`` as ``control-plane`` parses it."""
    parser = argparse.ArgumentParser(prog="control-plane")
    clusters_cli.add_arguments(parser.add_subparsers(dest="command"))
    return parser.parse_args(argv)


async def own_summary(url: str) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        answer = await client.get("/_sidecar/summary")
        assert answer.status_code == 200, answer.text
        summary: dict[str, Any] = answer.json()
        return summary


async def test_several_clusters_merged_failures_first_and_an_unreachable_one_said(
    stack: Stack, sidecars: Sidecars, unique: str, tmp_path: Path
) -> None:
    first, second = list(stack.clusters.values())[:2]
    running = {c.name: await sidecars.of(c) for c in (first, second)}
    name = f"clusters-{unique}"
    await create_topic(stack.bootstrap, name, {})
    await produce_record(stack.bootstrap, name, b"k", b"this is no JSON {")
    config = {
        "connector.class": FILE_SINK,
        "tasks.max": "1",
        "topics": name,
        "file": str(tmp_path / "out.txt"),
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false",
    }
    async with httpx.AsyncClient(base_url=first.connect_url, timeout=60) as worker:
        assert (await worker.put(f"/connectors/{name}/config", json=config)).status_code == 201
        try:
            await until_states(worker, name, "RUNNING", ["FAILED"])
            trace = (await worker.get(f"/connectors/{name}/status")).json()["tasks"][0]["trace"]
            await eventually(
                lambda: own_summary(running[first.name].url),
                lambda s: name in {t["connector"] for t in s["failed"]["tasks"]},
                what="the failed task in the first cluster's summary",
            )
            gone = closed_url()
            argv = ["clusters", "--output", "json", "--timeout-s", "10", "--sidecar", f"gone={gone}"]
            for cluster in (first, second):
                argv += ["--sidecar", f"{cluster.name}={running[cluster.name].url}"]
            out = io.StringIO()  # not stdout: the sidecars served in this process log there
            status = await asyncio.to_thread(clusters_cli.run, parse(argv), out)
            document = json.loads(out.getvalue())
            own = {c.name: await own_summary(running[c.name].url) for c in (first, second)}
        finally:
            assert (await worker.delete(f"/connectors/{name}")).status_code == 204

    assert status == 1 and document["unread"] == ["gone"]
    unread, *read = document["clusters"]
    assert unread["name"] == "gone" and not unread["read"] and unread["connectors"] is None
    assert unread["error"].startswith("ConnectError") and unread["lag_error"].startswith("ConnectError")
    assert [c["name"] for c in read] == [first.name, second.name]
    for cluster in read:
        assert cluster["read"] and cluster["error"] is None and cluster["lag_error"] is None
        assert cluster["connectors"] == own[cluster["name"]]["connectors"]
        assert cluster["tasks"] == own[cluster["name"]]["tasks"]
    for kind in ("connectors", "tasks"):
        totals = document["totals"][kind]
        assert totals["total"] == sum(own[c][kind]["total"] for c in own)
        for state, n in totals["by_state"].items():
            assert n == sum(own[c][kind]["by_state"].get(state, 0) for c in own)

    failed = document["failures"][0]
    assert (failed["cluster"], failed["connector"], failed["task"], failed["state"]) == (first.name, name, 0, "FAILED")
    assert failed["trace"] == trace and failed["trace_first_line"] == trace.splitlines()[0]
    assert "DataException" in failed["trace"] and "\n" not in failed["trace_first_line"]
    expected = sorted(
        (f["connector"], f.get("task")) for c in own for f in own[c]["failed"]["connectors"] + own[c]["failed"]["tasks"]
    )
    assert sorted((f["connector"], f["task"]) for f in document["failures"]) == expected
    lags = [s["lag"] for s in document["most_lag"]]
    assert lags == sorted(lags, reverse=True)
