"""What the HTTP layer answers, as Connect's ``rest/entities``: the typed models of Connect's entities
(``connect_models``) and of the sidecar's own answers (``sidecar_models``) that the OpenAPI document is made
of, the view's dataclasses in Connect's JSON shapes (``render``), the sidecar's answers about itself and its
cluster (``about``), and the domain's outcomes as HTTP responses (``responses``)."""
