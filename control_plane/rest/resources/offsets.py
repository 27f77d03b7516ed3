"""KIP-875's endpoints: ``PUT /connectors/{c}/stop`` and ``GET``/``PATCH``/``DELETE
/connectors/{c}/offsets``, with Connect's bodies and codes (ConnectorsResource: 204 for a stop, 200 with
``ConnectorOffsets`` or ``Message``). The herder decides who does the job; a PATCH body goes to it as it
came (a worker that alters offsets gets the same bytes). Handlers translate only.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from ...domain.offsets import PartitionOffset
from ..entities.responses import respond
from ..request.runtime import herder


def offsets_json(offsets: tuple[PartitionOffset, ...]) -> dict[str, object]:
    """rest/entities/ConnectorOffsets and ConnectorOffset."""
    return {"offsets": [{"partition": dict(o.partition), "offset": o.offset} for o in offsets]}


def message_json(message: str) -> dict[str, str]:
    """rest/entities/Message."""
    return {"message": message}


async def stop_connector(request: Request) -> Response:
    return await respond(request, await herder(request).offsets.stop(request.path_params["connector"]))


async def connector_offsets(request: Request) -> Response:
    name = request.path_params["connector"]
    if request.method in ("GET", "HEAD"):
        return await respond(request, await herder(request).offsets.read(name), offsets_json)
    if request.method == "DELETE":
        return await respond(request, await herder(request).offsets.reset(name), message_json)
    body = await request.body()  # PATCH
    return await respond(request, await herder(request).offsets.alter(name, body), message_json)
