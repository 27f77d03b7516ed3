"""Where a request goes: the one route table (``routes``), its matcher (``router``) with the worker's HTTP
stack's own answers mirrored (``jaxrs``, ``jetty_uri``), and the OpenAPI document made from the table
(``openapi``)."""
