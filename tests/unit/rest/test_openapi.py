"""The sidecar's OpenAPI document (control_plane/rest/routing/openapi.py) against the route table it is rendered from
(control_plane/rest/routing/routes.py), both ways: every route the sidecar serves is in the document with its
methods, every operation of the document reaches the handler the route table has for it (a sidecar handler,
or the forward to the workers), under the label of its template. Also: the document loads in schemathesis, is
served at ``GET /_sidecar/openapi.json``, written by the CLI, and (java) names every operation of Connect
4.3.1's own description, built from its jar by deploy/openapi."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from openapi_spec_validator import validate
from schemathesis.core.result import Err

from control_plane.cli import main as cli_main
from control_plane.rest.request.exchange import Exchange
from control_plane.rest.routing.openapi import document, document_json, documented
from control_plane.rest.routing.router import ROUTER, route_template
from control_plane.rest.routing.routes import CONNECT, OPENAPI_PATH, SIDECAR, SIDECAR_PREFIX, label_of
from deploy.openapi import build as openapi_build

# A value per path parameter: the concrete path each operation is tried with
EXAMPLE = {
    "connector": "c-1",
    "task": "0",
    "pluginName": "FileStreamSource",
    "logger": "org.x",
    "topic": "t-1",
    "version": "12",
}


def _example(template: str) -> str:
    return "/".join(EXAMPLE[s[1:-1]] if s.startswith("{") else s for s in label_of(template).split("/")) or "/"


async def _unread() -> Any:
    raise AssertionError("the body is not read to route a request")


def test_every_route_the_sidecar_serves_is_documented() -> None:
    served = {(r.method, r.path) for r in CONNECT + SIDECAR if r.handler is not None}
    assert served <= {(r.method, r.path) for r in documented()}
    assert all(r.tag == "connect" and r.handler is None for r in CONNECT + SIDECAR if r.internal)


def test_every_documented_operation_reaches_its_handler() -> None:
    for op in documented():
        path = _example(op.path)
        target = ROUTER.target(Exchange(op.method, path.encode(), b"", [], _unread))
        # the sidecar's own handler, or (Connect's operations it leaves to the workers) the forward
        assert target.handler is op.handler, (op.method, op.path)
        assert (target.resource is None) is (op.handler is None), (op.method, op.path)
        if op.tag == "sidecar":
            assert op.handler is not None, f"{op.method} {op.path}: a sidecar operation without a handler"
        assert route_template(path) == label_of(op.path), (op.path, route_template(path))


def test_the_sidecar_paths_are_no_connect_paths() -> None:
    assert OPENAPI_PATH.startswith(f"{SIDECAR_PREFIX}/")
    assert all(not op.path.startswith(SIDECAR_PREFIX) for op in CONNECT)
    assert all(op.path.startswith(SIDECAR_PREFIX) or op.path.count("/") == 1 for op in SIDECAR)
    assert route_template(OPENAPI_PATH) == OPENAPI_PATH
    # Connect's resources (rest/resources) under no path of the sidecar's own: /connectors, /connector-plugins,
    # /admin, /health, /, and /_sidecar, /healthz, /readyz, /metrics are not Connect's
    assert {op.path.split("/")[1] for op in CONNECT} == {"", "health", "connectors", "connector-plugins", "admin"}


def test_the_document_is_valid_openapi_3_1() -> None:
    assert document()["openapi"] == "3.1.0"
    validate(document())


def test_the_document_loads_whole_in_schemathesis() -> None:
    schema = schemathesis.openapi.from_dict(document())
    operations = []
    for result in schema.get_all_operations():
        assert not isinstance(result, Err), result
        operations.append((result.ok().method.upper(), result.ok().path))
    assert sorted(operations) == sorted((op.method, label_of(op.path)) for op in documented())
    assert json.loads(document_json()) == document()


def test_every_operation_answers_errors_in_connects_shape() -> None:
    for item in document()["paths"].values():
        for operation in item.values():
            error = operation["responses"]["default"]["content"]["application/json"]["schema"]
            assert error == {"$ref": "#/components/schemas/ErrorMessage"}
    assert set(document()["components"]["schemas"]["ErrorMessage"]["required"]) == {"error_code", "message"}


async def test_the_document_is_served(serve) -> None:
    async with serve() as running:
        response = await running.client.get(OPENAPI_PATH)
        metrics = (await running.client.get("/metrics")).text
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json() == document()
    assert f'route="{OPENAPI_PATH}"' in metrics


def test_the_cli_writes_the_document(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sidecar.json"
    assert cli_main(["openapi", "--out", str(out)]) == 0
    assert json.loads(out.read_text()) == document()
    assert cli_main(["openapi"]) == 0
    assert json.loads(capsys.readouterr().out) == document()


@pytest.mark.java
def test_connects_own_operations_are_all_documented() -> None:
    """The forwarded part is the newest Connect API: Connect 4.3.1's description (its swagger annotations)
    names the same operations, with the same parameters, and the same entities."""
    connect = json.loads(openapi_build.ensure("4.3.1").read_text())
    theirs = {
        (method.upper(), path): sorted(p["name"] for p in op.get("parameters", []))
        for path, item in connect["paths"].items()
        for method, op in item.items()
    }
    ours = {(op.method, label_of(op.path)): sorted(p.name for p in op.params) for op in CONNECT if not op.internal}
    # GET /connectors?expand reads UriInfo, which Connect's annotations do not describe
    assert ours.pop(("GET", "/connectors")) == ["expand"]
    theirs.pop(("GET", "/connectors"))
    assert ours == theirs
    # every entity of Connect's description is a model of ours by the same name, with the same fields
    # (``msg`` is write-only in Connect's: never in an answer)
    models = document()["components"]["schemas"]
    for name, schema in connect["components"]["schemas"].items():
        fields = {k for k, v in schema.get("properties", {}).items() if not v.get("writeOnly")}
        assert set(models[name]["properties"]) == fields, name
