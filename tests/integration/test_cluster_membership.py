"""The Connect cluster as its workers' group has it (``GET /_sidecar/cluster``), read from the real
broker's DescribeGroups of each version's workers: every worker with its advertised URL and version, and
the leader, once the group is not rebalancing."""

from __future__ import annotations

import httpx

from tests.support.stack import Cluster
from tests.support.waiting import eventually


async def test_the_cluster_lists_its_worker_with_its_version_and_the_leader(
    cluster: Cluster, sidecar: httpx.AsyncClient
) -> None:
    # the group rebalances for a while after a connector of an earlier test is created or deleted (Connect
    # assigns connectors by rebalancing): what the group says then is shown as it is, so wait until it settles
    answer = await eventually(
        lambda: sidecar.get("/_sidecar/cluster"),
        lambda r: r.status_code != 200 or r.json()["state"] == "Stable",
        timeout_s=60,
        what="the workers' group settled (Stable)",
    )
    assert answer.status_code == 200, answer.text
    members = answer.json()
    assert (members["group"], members["state"], members["error"]) == (
        cluster.worker_property("group.id"),
        "Stable",
        None,
    )
    assert members["protocol"] == "sessioned"  # connect.protocol's default from 2.3 (KIP-507)
    [worker] = members["workers"]
    assert (worker["url"], worker["version"], worker["leader"]) == (
        cluster.connect_url.rstrip("/"),
        cluster.version,
        True,
    )
    assert members["leader_url"] == worker["url"] and worker["config_offset"] >= -1  # -1: no config record read yet
