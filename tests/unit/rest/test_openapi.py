"""The sidecar's OpenAPI document (control_plane/rest/openapi.py) against the routes the app serves, both
ways: every route of rest/app.py (its own ``Route``s and the ``JerseyRoute``s the dispatch answers) is in
the document with its methods, and every operation of the document reaches the handler the app has for it
(a sidecar handler, or the pass-through to the workers), with the route template of rest/routes.py. Also:
the document loads in schemathesis, is served at ``GET /_sidecar/openapi.json``, written by the CLI, and
(java) names every operation of Connect 4.3.1's own description, built from its jar by deploy/openapi."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from openapi_spec_validator import validate
from schemathesis.core.result import Err
from starlette.routing import Match, Route

from control_plane.cli import main as cli_main
from control_plane.rest.app import ROUTES
from control_plane.rest.dispatch import own_paths
from control_plane.rest.jaxrs import JerseyRoute
from control_plane.rest.openapi import CONNECT, OPENAPI_PATH, OPERATIONS, SIDECAR, document, document_json
from control_plane.rest.proxy import PassThrough
from control_plane.rest.routes import SIDECAR_PREFIX, route_template
from deploy.openapi import build as openapi_build

# A value per path parameter: the concrete path each operation is tried with
EXAMPLE = {"connector": "c-1", "task": "0", "pluginName": "FileStreamSource", "logger": "org.x", "topic": "t-1"}
_PARAM = re.compile(r"\{(\w+)(?::\w+)?\}")


def _shape(path: str) -> str:
    """A path template with its parameters unnamed (the app says {plugin}, Connect {pluginName})."""
    return _PARAM.sub("{}", path)


def _served() -> set[tuple[str, str]]:
    """(method, template) of every route of the app other than the catch-all pass-through."""
    out: set[tuple[str, str]] = set()
    for route in ROUTES:
        if isinstance(route, JerseyRoute):
            out |= {(m, _shape(route.path)) for m in route.methods - {"HEAD"}}
        else:
            assert isinstance(route, Route)
            if isinstance(route.endpoint, PassThrough):
                continue
            assert route.methods is not None
            out |= {(m, _shape(route.path)) for m in route.methods - {"HEAD"}}
    return out


def _documented() -> set[tuple[str, str]]:
    return {(op.method, _shape(op.path)) for op in OPERATIONS}


def _handler(method: str, path: str) -> Any:
    """The endpoint the app's routes give a request (the first full match, as Starlette's router)."""
    scope = {"type": "http", "method": method, "path": path, "raw_path": path.encode(), "root_path": ""}
    for route in ROUTES:
        match, child = route.matches(scope)
        if match is Match.FULL:
            return child["endpoint"]
    raise AssertionError(f"no route for {method} {path}")


def test_every_route_the_app_serves_is_documented() -> None:
    missing = _served() - _documented()
    assert not missing, f"routes of rest/app.py missing from rest/openapi.py: {sorted(missing)}"


def test_every_documented_operation_reaches_its_handler() -> None:
    served = _served()
    pattern = own_paths(ROUTES)
    assert pattern is not None
    for op in OPERATIONS:
        path = _PARAM.sub(lambda m: EXAMPLE.get(m.group(1), "x-1"), op.path)
        endpoint = _handler(op.method, path)
        mine = (op.method, _shape(op.path)) in served
        # the sidecar's own handler, or (Connect's operations it leaves to the workers) the pass-through
        assert isinstance(endpoint, PassThrough) is not mine, (op.method, op.path)
        # the dispatch's short path (straight to the workers) leaves the sidecar's own paths to its routes
        assert not mine or pattern.match(path) is not None, (op.method, op.path)
        if op.tag == "sidecar":
            assert mine, f"{op.method} {op.path}: a sidecar operation no route of the app serves"
        assert _shape(route_template(path)) == _shape(op.path), (op.path, route_template(path))


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
    assert sorted(operations) == sorted((op.method, op.path) for op in OPERATIONS)
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
    ours = {(op.method, op.path): sorted(p.name for p in op.params) for op in CONNECT}
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
