"""The HTTP layer, the only layer of the sidecar that imports Starlette (its ``Request`` and ``Response`` for
the handlers). Split by what each part holds, as Connect's ``rest`` package is:

- ``serving``: the sidecar's own server and the ASGI app, and the one request pipeline both hand every
  request to;
- ``steps``: the pipeline's steps, one concern each (stamp, metrics, limits, admission, access, dispatch);
- ``routing``: the one route table, its Jersey-style matcher and the OpenAPI document made from it;
- ``resources``: the handlers (parse, one herder call, render);
- ``entities``: the models of what is answered, the rendering, the domain's outcomes as responses;
- ``request``: the request and its answer, the runtime it is served with, its forward to a worker;
- ``errors``: the one error mapper, and the one maker of Connect's error body.

The parts import each other in that order only, top to bottom, ``errors`` and ``request`` below all (the
``rest-layers`` import contract of pyproject.toml).
"""

from .serving.app import create_app

__all__ = ["create_app"]
