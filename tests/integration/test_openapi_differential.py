"""Property-based differential check: every operation of Connect's own OpenAPI description, for the version
each cluster runs, sent with schemathesis-generated parameters and bodies both through the sidecar (built
from the code under test, in process) and directly to the worker; the answers must be the same (status,
error shape, body; normalised by tests/support/differential.py) except for the differences in
ALLOWED, each with its reason (docs/differences.md says the same), and the
known bugs in PENDING, which must still occur until fixed. A third run sends the operations 4.4.0 has and
3.4.1 lacks through the sidecar of the 3.4.1 worker and compares with the 4.4.0 worker's own answers.

The description is generated from the cluster's connect-runtime jar by deploy/openapi (``make openapi``;
built here on first use, then cached), hence the ``java`` mark. Generation is seeded and derandomized, a
fixed number of examples per operation (positive and negative), well under 90 s per version.

Safe beside the other tests on the shared stack: every request that writes names a connector under this
test's own prefix (or a logger under its own prefix), so at most it creates, changes or deletes
connectors that only this test knows; reads may also name this test's own running connector, and a listing
of the cluster's connectors is compared on this test's own only. Whatever it created is deleted at the end.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis.core.result import Err
from schemathesis.generation import GenerationMode

from control_plane.rest.routing import jetty_uri
from control_plane.upstream.client import REBALANCE_409_PREFIXES
from deploy.openapi import build as openapi_build
from tests.support.connect_answers import same_answer, until_states
from tests.support.differential import (
    Allowed,
    AnswerDifference,
    Comparisons,
    NormalisedAnswer,
    Request,
    classify,
    normalise,
    report,
)
from tests.support.harness import Sidecars
from tests.support.stack import Cluster, Stack

pytestmark = [pytest.mark.java, pytest.mark.timeout(900)]

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
EXAMPLES = {GenerationMode.POSITIVE: 14, GenerationMode.NEGATIVE: 6}  # per operation
BUDGET_S = 90.0  # per version: generation and both requests of every example
REQUEST_TIMEOUT_S = 30.0
SEED = 11


OLD = frozenset({"3.4.1"})
NEW = frozenset({"4.4.0"})
BOTH = OLD | NEW
OLD_AS_NEW = "3.4.1 through the sidecar, against 4.4.0"  # the newest operations on the old worker
EMULATING = frozenset({OLD_AS_NEW})
OWN_READS = ("/connectors/{connector}/status", "/connectors/{connector}/config", "/connectors/{connector}/topics")


def _worker_rebalancing(diff: AnswerDifference) -> bool:
    body = diff.worker.body
    return isinstance(body, dict) and str(body.get("message", "")).startswith(REBALANCE_409_PREFIXES)


def _jetty12_refusal(diff: AnswerDifference) -> bool:
    """The sidecar answered Jetty 12's own 400 for the target, as the 4.4.0 worker would (the page naming the
    violations for GET, POST and HEAD, no body otherwise; ``jetty_uri``, measured on 4.4.0), where 3.4.1's
    Jetty 9 took the target (an encoded ``%``, ``\\`` or control character, ...)."""
    refused = jetty_uri.refusal(diff.request.target.encode())
    if refused is None or diff.worker == diff.sidecar:
        return False
    paged = refused.before_method or diff.request.method in ("GET", "POST", "HEAD")
    return diff.sidecar == NormalisedAnswer(400, ("html", f"Error 400 {refused.message}") if paged else None)


def _not_emulated(diff: AnswerDifference) -> bool:
    """The 3.4.1 worker's own answer for an endpoint it lacks, passed through (Jersey's 404 or 405)."""
    return diff.sidecar.body in (
        {"error_code": 404, "message": "HTTP 404 Not Found"},
        {"error_code": 405, "message": "HTTP 405 Method Not Allowed"},
    )


def _jackson_message(diff: AnswerDifference) -> bool:
    """Both refuse the alter body with Connect's 500; the worker's message is Jackson's (with its location in
    the body), the sidecar's names the entry and the key."""
    worker, sidecar = diff.worker.body, diff.sidecar.body
    return (
        diff.worker.status == diff.sidecar.status == 500
        and diff.sidecar.kind() == diff.worker.kind() == "error"
        and "[Source: " in str(worker["message"])
        and "[Source: " not in str(sidecar["message"])
    )


# The sidecar's own routes (the rows of CONNECT with a handler, control_plane/rest/routing/routes.py), by the
# operations that reach them
OWN_ROUTES = [
    *(("GET", t) for t in OWN_READS),
    ("GET", "/connectors"),
    ("POST", "/connectors"),
    ("GET", "/connectors/{connector}/tasks/{task}/status"),
    ("PUT", "/connectors/{connector}/config"),
    ("PATCH", "/connectors/{connector}/config"),
    ("PUT", "/connector-plugins/{pluginName}/config/validate"),
    ("PUT", "/connectors/{connector}/topics/reset"),
    ("PUT", "/connectors/{connector}/stop"),
    ("GET", "/connectors/{connector}/offsets"),
    ("PATCH", "/connectors/{connector}/offsets"),
    ("DELETE", "/connectors/{connector}/offsets"),
    ("POST", "/connectors/{connector}/restart"),
    ("GET", "/connector-plugins"),
    ("GET", "/connector-plugins/{pluginName}/config"),
    ("GET", "/admin/loggers"),
    ("GET", "/admin/loggers/{logger}"),
    ("PUT", "/admin/loggers/{logger}"),
    ("GET", "/health"),
    ("GET", "/"),
]


def _without(body: Any, keys: frozenset[str]) -> Any:
    if isinstance(body, dict):
        return {k: _without(v, keys) for k, v in body.items() if k not in keys}
    if isinstance(body, list):
        return [_without(v, keys) for v in body]
    return body


def _adds_only(*keys: str) -> Callable[[AnswerDifference], bool]:
    """The sidecar's answer is the worker's with ``keys`` added (or changed) in the newest release's shape."""
    dropped = frozenset(keys)
    return lambda d: (
        d.sidecar.status == d.worker.status and _without(d.sidecar.body, dropped) == _without(d.worker.body, dropped)
    )


# The differences the sidecar makes on purpose: one reason each (docs/differences.md says the same).
ALLOWED: list[Allowed] = [
    Allowed(BOTH | EMULATING, "*", "*", _worker_rebalancing, "the worker answered mid-rebalance; the sidecar retries"),
    *(
        Allowed(
            OLD,
            method,
            template,
            _jetty12_refusal,
            "own routes answer as 4.4.0: Jetty 12 refuses the target, 3.4.1's Jetty 9 takes it",
        )
        for method, template in OWN_ROUTES
    ),
    Allowed(
        EMULATING,
        "PATCH",
        "/connectors/{connector}/offsets",
        _jackson_message,
        "PATCH offsets emulated: a body Connect's JSON binding cannot read is its 500, with the sidecar's message",
    ),
    Allowed(
        EMULATING,
        "PATCH",
        "/connectors/{connector}/config",
        lambda d: d.worker.status == d.sidecar.status == 500 and d.sidecar.kind() == d.worker.kind() == "error",
        "PATCH config emulated: a body that is not JSON is Connect's 500, with another message than Jackson's",
    ),
    Allowed(
        OLD,
        "PUT",
        "/admin/loggers/{logger}",
        lambda d: d.worker.status == d.sidecar.status == 500 and d.sidecar.kind() == d.worker.kind() == "error",
        "logger level read as 4.4.0 reads it: a body that is not JSON is Connect's 500, another message than Jackson's",
    ),
    Allowed(OLD, "GET", "/connectors/{connector}/status", _adds_only("version"), "KIP-891: statuses carry the version"),
    Allowed(OLD, "GET", "/", _adds_only("version"), "GET / advertises the newest version the sidecar provides"),
    Allowed(OLD, "GET", "/admin/loggers", _adds_only("last_modified"), "KIP-976: last_modified in logger levels"),
]

# Differences that are not the sidecar's purpose, known bugs of the emulations of the newest API. Each must
# still occur: once fixed, the entry must go.
PENDING: list[Allowed] = []


@pytest.fixture(scope="module")
def descriptions() -> dict[str, dict[str, Any]]:
    return {}


def _description(cache: dict[str, dict[str, Any]], version: str) -> dict[str, Any]:
    if version not in cache:
        cache[version] = json.loads(openapi_build.ensure(version).read_text())
    return cache[version]


class DifferentialNames:
    """The connector and logger names this test may write to."""

    def __init__(self, cluster: Cluster, unique: str, *, live: bool = True) -> None:
        self.prefix = f"oa-{cluster.name}-{unique}-"
        self.live = f"{self.prefix}live" if live else None
        self.logger_prefix = f"oa.{unique}."

    def adjust(self, case: Any, use_live: bool) -> Any:
        """Put the case's names under this test's prefixes (a read may name the live connector)."""
        writes = case.method.upper() != "GET"
        params = case.path_parameters
        if params is not None and "connector" in params:
            live = use_live and not writes and self.live is not None
            params["connector"] = self.live if live else f"{self.prefix}{params['connector']}"
        if params is not None and "logger" in params and writes:
            params["logger"] = f"{self.logger_prefix}{params['logger']}"
        if isinstance(case.body, dict) and "name" in case.body and case.operation.path == "/connectors":
            case.body["name"] = f"{self.prefix}{case.body['name']}"
        return case

    def own(self, answer: NormalisedAnswer) -> NormalisedAnswer:
        """A listing of the cluster's connectors (``GET /connectors``, with or without ``expand``) narrowed to
        this test's own: the other tests create and delete theirs on the same cluster meanwhile."""
        body = answer.body
        if answer.status != 200:
            return answer
        if isinstance(body, list):
            body = [name for name in body if isinstance(name, str) and name.startswith(self.prefix)]
        elif isinstance(body, dict):
            body = {name: shown for name, shown in body.items() if name.startswith(self.prefix)}
        return NormalisedAnswer(answer.status, body)


def _send(session: requests.Session, case: Any, base_url: str) -> requests.Response:
    kwargs = case.as_transport_kwargs(base_url=base_url)
    kwargs.pop("timeout", None)
    return session.request(**kwargs, timeout=REQUEST_TIMEOUT_S, allow_redirects=False)


def _operations(description: dict[str, Any]) -> set[tuple[str, str]]:
    return {(method.upper(), path) for path, item in description["paths"].items() for method in item}


def _explore(
    description: dict[str, Any],
    names: DifferentialNames,
    sidecar_url: str,
    worker_url: str,
    deadline: float,
    only: set[tuple[str, str]] | None = None,
) -> Comparisons:
    """Runs in a thread (the sidecar is served on the test's event loop): every operation (or those in
    ``only``), every mode."""
    schema = schemathesis.openapi.from_dict(description)
    findings = Comparisons()
    session = requests.Session()
    for result in schema.get_all_operations():
        if isinstance(result, Err):
            raise result.err()  # Connect's description must load whole
        operation = result.ok()
        if only is not None and (operation.method.upper(), operation.path) not in only:
            continue
        for mode, count in EXAMPLES.items():
            strategy = st.tuples(operation.as_strategy(generation_mode=mode), st.booleans())

            @settings(
                max_examples=count,
                derandomize=True,
                database=None,
                deadline=None,
                phases=[Phase.generate],
                suppress_health_check=list(HealthCheck),
            )
            @seed(SEED)  # with derandomize: the same requests on every run, whatever this function's source
            @given(pair=strategy)
            def compare(pair: tuple[Any, bool]) -> None:
                if time.monotonic() > deadline:
                    return
                case = names.adjust(*pair)
                via = _send(session, case, sidecar_url)
                direct = _send(session, case, worker_url)
                sent = via.request
                body = sent.body.encode() if isinstance(sent.body, str) else sent.body
                assert body is None or isinstance(body, bytes)
                request = Request(case.operation.method.upper(), case.operation.path, str(sent.path_url), body)
                cluster_wide = request.method == "GET" and request.template == "/connectors"
                answers = (normalise(via), normalise(direct))
                if cluster_wide:
                    answers = (names.own(answers[0]), names.own(answers[1]))
                findings.add(request, *answers)

            try:
                compare()
            except Unsatisfiable:
                # nothing of this operation can be made invalid (GET / has no parameter and no body)
                assert mode is GenerationMode.NEGATIVE
    return findings


def _cleanup(worker_url: str, prefix: str) -> list[str]:
    """Deletes the connectors under ``prefix`` (if a generated request created any); returns their names."""
    names = [n for n in httpx.get(f"{worker_url}/connectors", timeout=30).json() if n.startswith(prefix)]
    for name in names:
        httpx.delete(f"{worker_url}/connectors/{quote(name, safe='')}", timeout=30)
    return names


async def test_every_operation_answers_as_the_worker_does(
    cluster: Cluster,
    sidecars: Sidecars,
    sidecar: httpx.AsyncClient,
    worker: httpx.AsyncClient,
    unique: str,
    tmp_path: Path,
    descriptions: dict[str, dict[str, Any]],
) -> None:
    if not openapi_build.has_description(cluster.version):
        pytest.skip(f"no OpenAPI build of Connect {cluster.version} (deploy/openapi has a pom per version)")
    description = await asyncio.to_thread(_description, descriptions, cluster.version)
    names = DifferentialNames(cluster, unique)
    assert names.live is not None
    source = tmp_path / "in.txt"
    source.write_text("one\ntwo\n")
    config = {"connector.class": FILE_SOURCE, "tasks.max": "1", "file": str(source), "topic": f"{names.prefix}t"}
    created = await worker.post("/connectors", json={"name": names.live, "config": config})
    assert created.status_code == 201, created.text
    try:
        await until_states(worker, names.live, "RUNNING", ["RUNNING"])
        await same_answer(sidecar, worker, f"/connectors/{names.live}/status")
        running = await sidecars.of(cluster)
        started = time.monotonic()
        findings = await asyncio.to_thread(
            _explore, description, names, running.url, cluster.connect_url, started + BUDGET_S
        )
        elapsed = time.monotonic() - started
    finally:
        await asyncio.to_thread(_cleanup, cluster.connect_url, names.prefix)

    _judge(cluster.version, findings, elapsed)


def _judge(version: str, findings: Comparisons, elapsed: float) -> None:
    explained, unexplained = classify(version, findings.differences, ALLOWED + PENDING)
    summary = (
        f"Connect {version}: {findings.compared} requests compared in {elapsed:.1f}s over "
        f"{len(findings.by_operation)} operations; {len(findings.differences)} differences\n"
        + report(explained, unexplained)
    )
    print(summary)
    if os.environ.get("OPENAPI_DIFF_DUMP"):  # every difference, for a closer look
        with open(os.environ["OPENAPI_DIFF_DUMP"], "a") as dump:
            dump.writelines(f"{version} sent {r.show()}\n" for r in findings.sent)
            for d in findings.differences:
                dump.write(f"{version} {d.request.show()}\n  sidecar {d.sidecar}\n  worker  {d.worker}\n")
    assert elapsed < BUDGET_S, summary
    assert not unexplained, summary
    fixed = {p.reason for p in PENDING if version in p.versions} - set(explained)
    assert not fixed, f"no longer found, remove from PENDING (and from the docs): {sorted(fixed)}\n{summary}"


async def test_the_newest_operations_answer_on_an_old_worker_as_the_newest_worker_does(
    stack: Stack, sidecars: Sidecars, unique: str, descriptions: dict[str, dict[str, Any]]
) -> None:
    """The operations Connect 4.4.0 has and 3.4.1 lacks (stop, offsets, PATCH config, health), generated
    from 4.4.0's description, through the sidecar of the 3.4.1 worker and directly to the 4.4.0 worker,
    on connector names neither cluster has."""
    old, new = stack.clusters["old"], stack.clusters["new"]
    newest = await asyncio.to_thread(_description, descriptions, new.version)
    added = _operations(newest) - _operations(await asyncio.to_thread(_description, descriptions, old.version))
    names = DifferentialNames(old, unique, live=False)
    running = await sidecars.of(old)
    started = time.monotonic()
    try:
        findings = await asyncio.to_thread(
            _explore, newest, names, running.url, new.connect_url, started + BUDGET_S, added
        )
        elapsed = time.monotonic() - started
    finally:
        for cluster in (old, new):
            await asyncio.to_thread(_cleanup, cluster.connect_url, names.prefix)
    _judge(OLD_AS_NEW, findings, elapsed)
