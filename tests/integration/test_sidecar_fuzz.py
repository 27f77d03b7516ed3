"""Property-based fuzzing of the sidecar with its own OpenAPI document (``GET /_sidecar/openapi.json``,
control_plane/rest/routing/openapi.py), on every Connect cluster of the stack: schemathesis generates requests for
every operation (valid ones, and invalid ones: wrong types, missing fields, bodies that are not the schema) and sends
them to the session's in-process sidecar (the code under test). Every answer must be:

- no 5xx that the worker itself would not give: a 5xx is sent again directly to the cluster's worker (or,
  for an operation the sidecar emulates on an older worker, to the newest worker, whose answer it gives),
  and must be a 5xx there too;
- an error (4xx, 5xx) in Connect's shape ``{"error_code": <the status>, "message": "..."}``, except
  ``NOT_CONNECT_SHAPED``: what a worker answers itself in another shape (Jetty's own refusals), each
  with its reason;
- a success as documented: a status the document names, a body of the documented schema (schemathesis's
  status-code and response-schema checks);
- no unhandled exception in the sidecar: nothing logged at error level (structlog and the stdlib's
  loggers, the server's "a request failed without an answer" included).

Bounded and reproducible: seeded and derandomized (the same requests every run), a fixed number of examples
per operation and mode, and a time budget per cluster (``BUDGET_S``; what the budget cuts is reported).

Safe on the shared stack: every request that writes names a connector under this test's own prefix (or a
logger under its own prefix; a bulk action's selector is narrowed to the prefix's pattern); reads name those
or the test's own live connector. Whatever was created is deleted at the end, on the cluster and on the newest
one.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
import requests
import schemathesis
import structlog
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis.checks import response_schema_conformance, status_code_conformance
from schemathesis.core.failures import FailureGroup
from schemathesis.core.result import Err
from schemathesis.generation import GenerationMode

from control_plane.rest.routing import jetty_uri
from control_plane.rest.routing.routes import OPENAPI_PATH
from control_plane.upstream.client import REBALANCE_409_PREFIXES
from tests.support.connect_answers import until_states
from tests.support.harness import Sidecars
from tests.support.stack import Cluster, Stack

pytestmark = pytest.mark.timeout(600)

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
EXAMPLES = {GenerationMode.POSITIVE: 8, GenerationMode.NEGATIVE: 5}  # per operation
BUDGET_S = 75.0  # per cluster: generation and every request
REQUEST_TIMEOUT_S = 60.0
FROM_EXAMPLES = 4  # per operation with examples in the document
SEED = 14


@dataclass(frozen=True)
class Exchange:
    method: str
    template: str
    target: str
    body: bytes | None
    status: int
    answer: bytes
    content_type: str

    def show(self) -> str:
        body = "" if not self.body else f" body={self.body[:160]!r}"
        return f"{self.method} {self.target}{body} -> {self.status} {self.answer[:240]!r}"


def _jetty_refusal(x: Exchange) -> bool:
    """Jetty's own answer to a target it refuses (ambiguous or illegal URI: an encoded ``/``, ``%``, ``\\``,
    ``;``, an empty segment...), before any resource: an HTML page or no body, as the 4.4.0 worker gives
    (``jetty_uri``; the sidecar gives the same on its own routes and passes the worker's on)."""
    return x.status in (400, 404) and jetty_uri.refusal(x.target.encode()) is not None and x.answer[:1] != b"{"


# Errors a worker answers in another shape than Connect's, on purpose or not: each with its reason.
NOT_CONNECT_SHAPED: list[tuple[str, Callable[[Exchange], bool]]] = [
    ("Jetty refuses the target before Connect's resources see it (an HTML page or no body)", _jetty_refusal),
]


@dataclass
class FuzzFindings:
    sent: int = 0
    by_operation: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)  # per operation: generation and requests
    statuses: dict[int, int] = field(default_factory=dict)
    validated: int = 0  # successes checked against the document
    server_errors: list[str] = field(default_factory=list)  # 5xx the worker does not give
    worker_5xx: list[str] = field(default_factory=list)  # 5xx the worker gives too (not the sidecar's)
    misshaped: list[str] = field(default_factory=list)
    explained: dict[str, int] = field(default_factory=dict)
    undocumented: list[str] = field(default_factory=list)
    skipped: int = 0  # cut by the budget

    def problems(self) -> list[str]:
        return [
            *(f"5xx: {s}" for s in self.server_errors),
            *(f"not Connect's error shape: {s}" for s in self.misshaped),
            *(f"not as documented: {s}" for s in self.undocumented),
        ]


class FuzzNames:
    """The connector and logger names this test may write to."""

    def __init__(self, cluster: Cluster, unique: str) -> None:
        self.prefix = f"fz-{cluster.name}-{unique}-"
        self.live = f"{self.prefix}live"
        self.logger_prefix = f"fz.{unique}."

    def adjust(self, case: Any, use_live: bool) -> Any:
        params = case.path_parameters
        if params is not None and "connector" in params:
            params["connector"] = self.live if use_live else f"{self.prefix}{params['connector']}"
        if params is not None and "logger" in params and case.method.upper() != "GET":
            params["logger"] = f"{self.logger_prefix}{params['logger']}"
        body = case.body
        if isinstance(body, dict) and isinstance(body.get("name"), str) and case.operation.path == "/connectors":
            body["name"] = f"{self.prefix}{case.body['name']}"
        if isinstance(body, dict) and isinstance(body.get("selector"), dict) and case.operation.path.endswith("/bulk"):
            body["selector"]["pattern"] = f"{re.escape(self.prefix)}.*"  # every criterion holds: only this test's
        return case


def _send(session: requests.Session, case: Any, base_url: str) -> requests.Response:
    kwargs = case.as_transport_kwargs(base_url=base_url)
    kwargs.pop("timeout", None)
    return session.request(**kwargs, timeout=REQUEST_TIMEOUT_S, allow_redirects=False)


def _exchange(case: Any, response: requests.Response) -> Exchange:
    sent = response.request
    body = sent.body.encode() if isinstance(sent.body, str) else sent.body
    assert body is None or isinstance(body, bytes)
    return Exchange(
        case.method.upper(),
        case.path,
        str(sent.path_url),
        body,
        response.status_code,
        response.content,
        response.headers.get("content-type", ""),
    )


def _connect_shaped(x: Exchange) -> bool:
    if not x.content_type.startswith("application/json"):
        return False
    try:
        body = json.loads(x.answer)
    except ValueError:
        return False
    return (
        isinstance(body, dict)
        and set(body) == {"error_code", "message"}
        and body["error_code"] == x.status
        and (body["message"] is None or isinstance(body["message"], str))
    )


def _rebalancing(x: Exchange) -> bool:
    """A worker's answer mid-rebalance (another test's connectors on the shared stack): Connect's own 500,
    passed on once the sidecar's retries are spent (upstream.client)."""
    try:
        message = json.loads(x.answer).get("message")
    except (ValueError, AttributeError):
        return False
    return isinstance(message, str) and message.startswith(REBALANCE_409_PREFIXES)


def _judge(findings: FuzzFindings, case: Any, response: requests.Response, replay: Callable[[], list[int]]) -> None:
    x = _exchange(case, response)
    findings.statuses[x.status] = findings.statuses.get(x.status, 0) + 1
    if x.status >= 500 and _rebalancing(x):
        findings.worker_5xx.append(f"{x.show()} (the worker's, mid-rebalance: after the sidecar's retries)")
    elif x.status >= 500:
        elsewhere = replay()
        if any(status >= 500 for status in elsewhere):
            findings.worker_5xx.append(f"{x.show()} (worker: {elsewhere})")
        else:
            findings.server_errors.append(f"{x.show()} (worker: {elsewhere})")
    if x.status >= 400:
        if not _connect_shaped(x):
            reason = next((why for why, rule in NOT_CONNECT_SHAPED if rule(x)), None)
            if reason is None:
                findings.misshaped.append(x.show())
            else:
                findings.explained[reason] = findings.explained.get(reason, 0) + 1
        return
    findings.validated += 1
    try:
        case.validate_response(response, checks=[status_code_conformance, response_schema_conformance])
    except FailureGroup as failures:
        findings.undocumented.append(f"{x.show()}: {'; '.join(f.title for f in failures.exceptions)}")
    except AssertionError as failure:
        findings.undocumented.append(f"{x.show()}: {failure}")


def _negatable(document: dict[str, Any], method: str, path: str) -> bool:
    """Whether an invalid request can be made: a body, or a parameter that is not any string."""
    operation = document["paths"][path][method.lower()]
    params = operation.get("parameters", [])
    return "requestBody" in operation or any(p["schema"] != {"type": "string"} for p in params)


def _explore(
    document: dict[str, Any], names: FuzzNames, sidecar_url: str, workers: list[str], deadline: float
) -> FuzzFindings:
    """Runs in a thread (the sidecar is served on the test's event loop)."""
    schema = schemathesis.openapi.from_dict(document)
    findings = FuzzFindings()
    session = requests.Session()
    for result in schema.get_all_operations():
        if isinstance(result, Err):
            raise result.err()
        operation = result.ok()
        name = f"{operation.method.upper()} {operation.path}"
        began = time.monotonic()
        strategies: list[tuple[Any, int]] = []
        for mode, count in EXAMPLES.items():
            if mode is GenerationMode.NEGATIVE and not _negatable(document, operation.method, operation.path):
                continue  # Hypothesis would search seconds for an invalid case before giving up
            strategies.append((operation.as_strategy(generation_mode=mode), count))
        from_document = operation.get_strategies_from_examples()
        if from_document:  # the document's examples (a real connector config, offsets, ...), on both names
            strategies.append((st.one_of(from_document), FROM_EXAMPLES))
        for strategy, count in strategies:
            if time.monotonic() > deadline:
                findings.skipped += count
                continue

            @settings(
                max_examples=count,
                derandomize=True,
                database=None,
                deadline=None,
                phases=[Phase.generate],
                suppress_health_check=list(HealthCheck),
            )
            @seed(SEED)
            @given(pair=st.tuples(strategy, st.booleans()))
            def fuzz(pair: tuple[Any, bool]) -> None:
                if time.monotonic() > deadline:
                    findings.skipped += 1
                    return
                case = names.adjust(*pair)
                response = _send(session, case, sidecar_url)
                findings.sent += 1
                sent_as = f"{case.operation.method.upper()} {case.operation.path}"
                findings.by_operation[sent_as] = findings.by_operation.get(sent_as, 0) + 1
                _judge(findings, case, response, lambda: [_send(session, case, w).status_code for w in workers])

            with contextlib.suppress(Unsatisfiable):  # nothing of the operation can be made invalid
                fuzz()
        findings.seconds[name] = time.monotonic() - began
    return findings


class ErrorLogs(logging.Handler):
    """Every stdlib log record at error level (asyncio's "Task exception was never retrieved" included)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def error_logs() -> Iterator[tuple[ErrorLogs, list[Any]]]:
    handler = ErrorLogs()
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        with structlog.testing.capture_logs() as captured:
            yield handler, captured
    finally:
        root.removeHandler(handler)


def _cleanup(worker_url: str, prefix: str) -> None:
    names = [n for n in httpx.get(f"{worker_url}/connectors", timeout=30).json() if n.startswith(prefix)]
    for name in names:
        httpx.delete(f"{worker_url}/connectors/{quote(name, safe='')}", timeout=30)


async def test_fuzzing_the_sidecar_with_its_own_document(
    cluster: Cluster,
    stack: Stack,
    sidecars: Sidecars,
    worker: httpx.AsyncClient,
    unique: str,
    tmp_path: Path,
    error_logs: tuple[ErrorLogs, list[Any]],
) -> None:
    running = await sidecars.of(cluster)
    served = await running.client.get(OPENAPI_PATH)
    assert served.status_code == 200
    document = served.json()
    names = FuzzNames(cluster, unique)
    source = tmp_path / "in.txt"
    source.write_text("one\ntwo\n")
    config = {"connector.class": FILE_SOURCE, "tasks.max": "1", "file": str(source), "topic": f"{names.prefix}t"}
    newest = stack.newest.connect_url
    workers = [cluster.connect_url, *([newest] if newest != cluster.connect_url else [])]
    handler, structlogged = error_logs
    try:
        created = await worker.post("/connectors", json={"name": names.live, "config": config})
        assert created.status_code == 201, created.text
        await until_states(worker, names.live, "RUNNING", ["RUNNING"])
        started = time.monotonic()
        findings = await asyncio.to_thread(_explore, document, names, running.url, workers, started + BUDGET_S)
        elapsed = time.monotonic() - started
    finally:
        for url in workers:
            await asyncio.to_thread(_cleanup, url, names.prefix)

    errors = [
        *(f"{r.name}: {r.getMessage()}" for r in handler.records),
        *(f"{e.get('event')}: {e.get('error')}" for e in structlogged if e.get("log_level") in ("error", "critical")),
    ]
    summary = "\n".join(
        [
            f"Connect {cluster.version}: {findings.sent} requests in {elapsed:.1f}s over "
            f"{len(findings.by_operation)} operations ({findings.skipped} cut by the budget); statuses "
            + ", ".join(f"{k}: {v}" for k, v in sorted(findings.statuses.items()))
            + f"; {findings.validated} successes checked against the document",
            "  slowest: "
            + ", ".join(f"{op} {s:.1f}s" for op, s in sorted(findings.seconds.items(), key=lambda kv: -kv[1])[:8]),
            *(f"  allowed x{n}: {why}" for why, n in findings.explained.items()),
            *(f"  5xx the worker gives too: {s}" for s in findings.worker_5xx),
            *(f"  PROBLEM {p}" for p in findings.problems()),
            *(f"  ERROR LOGGED {e}" for e in errors),
        ]
    )
    print(summary)
    assert not findings.problems(), summary
    assert not errors, summary
    assert len(findings.by_operation) == len([m for item in document["paths"].values() for m in item]), summary
