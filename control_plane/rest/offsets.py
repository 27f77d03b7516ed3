"""KIP-875's endpoints: ``PUT /connectors/{c}/stop`` and ``GET``/``PATCH``/``DELETE
/connectors/{c}/offsets``, with Connect's bodies and codes (ConnectorsResource: 204 for a stop, 200 with
``ConnectorOffsets`` or ``Message``).

Where the workers have the endpoint (stop and GET from 3.5, PATCH and DELETE from 3.6) the request goes
through to them, a PATCH only after its body passed the sidecar's checks (a malformed body gets a
precise 400 without a round trip); elsewhere the domain does the job through Kafka. Handlers translate
only.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from ..features.offsets import ConnectorOffset
from ..features.offsets_request import parse_alter_request
from ..settings import FeatureMode
from ..sidecar import Sidecar
from .proxy import proxy
from .reads import json_response


def offsets_json(offsets: tuple[ConnectorOffset, ...]) -> dict[str, object]:
    """rest/entities/ConnectorOffsets and ConnectorOffset."""
    return {"offsets": [{"partition": dict(o.partition), "offset": o.offset} for o in offsets]}


def message_json(message: str) -> dict[str, str]:
    """rest/entities/Message."""
    return {"message": message}


async def _native(request: Request, feature: str) -> bool:
    """Whether the workers do ``feature``. Before any worker reported its version (just after start),
    wait for one a moment; when none does, the request goes through: the worker's own answer, or
    Connect's 503 when none answers, rather than a guess."""
    sidecar: Sidecar = request.app.state.sidecar
    capabilities = sidecar.capabilities
    if sidecar.settings.feature_modes().get(feature) is FeatureMode.AUTO and not capabilities.detected:
        if not await capabilities.wait_detected(sidecar.settings.upstream_connect_timeout_s):
            return True
    return capabilities.is_native(feature)


async def stop_connector(request: Request) -> Response:
    if await _native(request, "stop_and_offsets_read"):
        return await proxy(request)
    sidecar: Sidecar = request.app.state.sidecar
    await sidecar.stopper.stop(request.path_params["connector"])
    return Response(status_code=204)


async def connector_offsets(request: Request) -> Response:
    sidecar: Sidecar = request.app.state.sidecar
    name = request.path_params["connector"]
    if request.method in ("GET", "HEAD"):
        if await _native(request, "stop_and_offsets_read"):
            return await proxy(request)
        return json_response(offsets_json(await sidecar.connector_offsets.read(name)))
    if request.method == "DELETE":
        if await _native(request, "offsets_alter_reset"):
            return await proxy(request)
        return json_response(message_json(await sidecar.connector_offsets.reset(name)))
    entries = parse_alter_request(await request.body())  # PATCH
    if await _native(request, "offsets_alter_reset"):
        kind = sidecar.connector_type(name)  # from the view: no round trip; unknown there, the worker checks
        if kind is not None:
            await sidecar.connector_offsets.check_entries(kind, entries)
        return await proxy(request)
    return json_response(message_json(await sidecar.connector_offsets.alter(name, entries)))
