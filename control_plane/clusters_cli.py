"""``control-plane clusters``: several clusters' sidecars at a glance, for dashboards and people. Reads each
cluster's ``GET /_sidecar/summary`` and ``GET /_sidecar/lag`` concurrently, merges them (``clusters_view``)
and prints one table, or with ``--output json`` the merged document.

The clusters: ``--sidecar NAME=URL`` (repeat it), or ``--from FILE`` (JSON or YAML)::

    clusters:
      - name: prod-eu
        url: https://connect-eu.example.com:8084
        token_env: PROD_EU_TOKEN      # the variable holding its bearer token (or ``token:`` itself)
      - name: prod-us
        url: https://connect-us.example.com:8084

A cluster's token: the file's ``token`` or ``token_env``, else the variable ``CONTROL_PLANE_TOKEN_<NAME>``
(the name upper-cased, ``-`` and ``.`` as ``_``), else ``--token`` (default ``CONTROL_PLANE_TOKEN``).

Each request is bounded by ``--timeout-s``, and so is each cluster's whole read. A cluster that cannot be
read (refused, timed out, 401, 503 while its view is not ready) is shown with the reason. Exit status (as
``plan_cli``'s): 0 every cluster read, 1 some cluster's summary or lag could not be read, 2 bad input.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import httpx

from .clusters_view import DEFAULT_TOP, ClusterRead, merge, render
from .plan_files import FileError, documents_of_file

DEFAULT_TIMEOUT_S = 10.0


class ClusterListError(Exception):
    """A ``--sidecar`` or ``--from`` that does not name clusters."""


@dataclass(frozen=True)
class ClusterSidecar:
    name: str
    url: str
    token: str | None = None


def add_arguments(sub: Any) -> None:
    clusters = sub.add_parser(
        "clusters", help="several clusters' connectors and tasks by state, failures and lag (their sidecars)"
    )
    clusters.add_argument("--sidecar", action="append", default=[], metavar="NAME=URL", help="a cluster's sidecar")
    clusters.add_argument("--from", dest="from_file", type=Path, help="a JSON or YAML file listing the clusters")
    clusters.add_argument("--token", default=os.environ.get("CONTROL_PLANE_TOKEN"), help="a bearer token")
    clusters.add_argument("--output", choices=["text", "json"], default="text")
    clusters.add_argument("--top", type=int, default=DEFAULT_TOP, help="how many of the most lagging sinks")
    clusters.add_argument("--timeout-s", type=float, default=DEFAULT_TIMEOUT_S, help="the bound of each read")


def token_variable(name: str) -> str:
    return "CONTROL_PLANE_TOKEN_" + name.upper().replace("-", "_").replace(".", "_")


def targets_of(
    sidecars: Sequence[str], from_file: Path | None, token: str | None, env: dict[str, str]
) -> list[ClusterSidecar]:
    """The clusters that ``--sidecar`` and ``--from`` name, each with its token; a ``ClusterListError`` for none,
    a malformed one or a name given twice."""
    entries: list[dict[str, Any]] = []
    for each in sidecars:
        given, sep, at = each.partition("=")
        if not sep or not given or not at:
            raise ClusterListError(f"--sidecar {each!r}: NAME=URL expected")
        entries.append({"name": given, "url": at})
    if from_file is not None:
        try:
            documents = documents_of_file(from_file)
        except FileError as err:
            raise ClusterListError(str(err)) from err
        listed = documents[0].get("clusters") if len(documents) == 1 and isinstance(documents[0], dict) else None
        if not isinstance(listed, list) or not all(isinstance(e, dict) for e in listed):
            raise ClusterListError(f"{from_file}: a mapping with a list of clusters ({{name, url}}) expected")
        entries += listed
    if not entries:
        raise ClusterListError("no clusters: give --sidecar NAME=URL or --from FILE")
    targets: list[ClusterSidecar] = []
    for entry in entries:
        name, url = entry.get("name"), entry.get("url")
        if not isinstance(name, str) or not isinstance(url, str) or not name or not url:
            raise ClusterListError(f"a cluster without a name or url: {entry}")
        if name in (t.name for t in targets):
            raise ClusterListError(f"the cluster {name!r} is given twice")
        named = entry.get("token_env")
        own = entry.get("token") or (env.get(named) if isinstance(named, str) else None)
        targets.append(ClusterSidecar(name, url.rstrip("/"), own or env.get(token_variable(name)) or token))
    return targets


async def _get(client: httpx.AsyncClient, path: str, timeout_s: float) -> tuple[dict[str, Any] | None, str | None]:
    """The JSON of a 200, or why there is none: the status and Connect's ``message`` as the sidecar answers
    them, or the network's error."""
    try:
        answer = await client.get(path)
    except httpx.TimeoutException:
        return None, f"no answer within {timeout_s:g} s"
    except httpx.HTTPError as err:
        return None, f"{type(err).__name__}: {err}" if str(err) else type(err).__name__
    try:
        body = answer.json()
    except ValueError:
        body = None
    if answer.status_code == 200 and isinstance(body, dict):
        return body, None
    message = body.get("message") if isinstance(body, dict) else answer.text.strip()
    return None, f"{answer.status_code}: {message or answer.reason_phrase}"


async def read_cluster(
    target: ClusterSidecar, timeout_s: float, transport: httpx.AsyncBaseTransport | None = None
) -> ClusterRead:
    """One cluster's summary and lag, read concurrently, the whole bounded by ``timeout_s``; never raises
    for what the sidecar or the network does: a failed read is its reason."""
    headers = {"authorization": f"Bearer {target.token}"} if target.token else {}
    async with httpx.AsyncClient(
        base_url=target.url, headers=headers, timeout=timeout_s, transport=transport
    ) as client:
        try:
            async with asyncio.timeout(timeout_s):
                (summary, error), (lag, lag_error) = await asyncio.gather(
                    _get(client, "/_sidecar/summary?recent=0", timeout_s), _get(client, "/_sidecar/lag", timeout_s)
                )
        except TimeoutError:
            summary = lag = None
            error = lag_error = f"no answer within {timeout_s:g} s"
    return ClusterRead(target.name, target.url, summary, lag, error, lag_error)


async def read_clusters(
    targets: Sequence[ClusterSidecar], timeout_s: float, transport: httpx.AsyncBaseTransport | None = None
) -> list[ClusterRead]:
    """Every cluster read concurrently, in the order given."""
    return list(await asyncio.gather(*(read_cluster(t, timeout_s, transport) for t in targets)))


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    try:
        if args.timeout_s <= 0 or args.top < 0:
            raise ClusterListError("--timeout-s must be positive and --top at least 0")
        targets = targets_of(args.sidecar, args.from_file, args.token, dict(os.environ))
    except ClusterListError as err:
        print(f"control-plane clusters: {err}", file=sys.stderr)
        return 2
    document = merge(asyncio.run(read_clusters(targets, args.timeout_s)), top=args.top)
    print(json.dumps(document, indent=2) if args.output == "json" else render(document), file=out)
    return 1 if document["unread"] else 0


__all__ = ["ClusterListError", "ClusterSidecar", "add_arguments", "read_cluster", "read_clusters", "run", "targets_of"]
