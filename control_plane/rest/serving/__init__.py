"""What takes a request in and writes its answer out: the sidecar's own HTTP/1.1 server (``server``, one
``connection`` per client), the ASGI application for any other server (``app``), and the one request
pipeline both hand every request to (``pipeline``)."""
