"""The handlers, as Connect's ``rest/resources``: each parses a request, makes one call on the herder and
renders its answer. One module per family of endpoints, its docstring naming them (``params``: what the
handlers read of a request as Jersey reads it); the route table (``rest.routing.routes``) says which handler
serves which method and path."""
