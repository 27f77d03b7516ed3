"""The sidecar's own reports on versioned plugins (KIP-891): what each plugin key of a connector resolves to,
``GET /_sidecar/connectors/{c}/plugin-versions`` (a connector by name) and ``PUT /_sidecar/plugin-versions``
(a configuration in the body); and ``GET /_sidecar/plugin-pins``, the pins that do not hold on some worker
now. Parse, one herder call, render. (Connect's own ``GET /connector-plugins/{p}/config?version=``:
``connector_plugins``.)"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ...domain.errors import BadRequestError
from ...domain.outcomes import SIDECAR, Refusal
from ...domain.plugins import PinHealthReport, PluginVersionReport
from ...rules.config_values import config_map, read_json
from ..entities.responses import answered
from ..request.runtime import herder


def report_json(report: PluginVersionReport) -> dict[str, Any]:
    return {
        "connector": report.connector,
        "worker_version": report.worker_version or None,
        "mode": report.mode.value,
        "plugins": [
            {
                "class_key": r.key.class_key,
                "version_key": r.key.version_key,
                "plugin": r.key.plugin,
                "class": r.class_name,
                "requested": r.key.spec,
                "requirement": r.requirement,
                "installed": list(r.installed),
                "selected": r.selected,
                "runs": r.runs,
                "outcome": r.outcome.value,
                "error": r.error,
                "reason": r.reason,
            }
            for r in report.plugins
        ],
    }


async def connector_plugin_versions(request: Request) -> Response:
    outcome = await herder(request).plugins.version_report(request.path_params["connector"], None)
    return answered(outcome, report_json)


async def config_plugin_versions(request: Request) -> Response:
    config = config_map(read_json(await request.body())[0])
    if config is None:
        return answered(
            Refusal(BadRequestError("The body must be a connector configuration (a JSON object)"), SIDECAR), report_json
        )
    name = config.get("name")
    return answered(await herder(request).plugins.version_report(name, config), report_json)


def pins_json(report: PinHealthReport) -> dict[str, Any]:
    return {
        "workers": [
            {"worker": w.worker, "version": w.version, "enforcement": enforcement, "reported_by": w.reported_by}
            for w, enforcement in report.checked
        ],
        "unknown_workers": list(report.unknown),
        "pins": report.pins,
        "not_holding": [
            {
                "connector": found.connector,
                "class_key": found.pin.resolution.key.class_key,
                "version_key": found.pin.resolution.key.version_key,
                "class": found.pin.resolution.class_name,
                "requested": found.pin.resolution.key.spec,
                "requirement": found.pin.resolution.requirement,
                "worker": found.pin.worker,
                "worker_version": found.pin.worker_version,
                "installed": list(found.pin.resolution.installed),
                "runs": found.pin.runs,
                "outcome": found.pin.resolution.outcome.value,
                "enforcement": found.pin.enforcement.value,
                "reason": found.pin.consequence(),
            }
            for found in report.not_holding
        ],
    }


async def plugin_pins(request: Request) -> Response:
    return answered(await herder(request).plugins.pin_health(), pins_json)
