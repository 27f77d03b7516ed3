"""The steps of the request pipeline (``rest.serving.pipeline``), each one concern in a module, in the order
they meet a request."""
