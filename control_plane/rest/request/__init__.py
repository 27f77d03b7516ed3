"""One request as every part of the HTTP layer holds it, below them all: as the server parsed it and as it is
answered (``exchange``: ``Exchange``, ``HttpReply``), the runtime it is served with (``runtime``: the slot
the lifespan fills, ``herder(request)`` for the handlers), and its forward to a worker unchanged
(``proxy``)."""
