"""The steps of the request pipeline (``rest.serving.pipeline``), each one concern in a module of one shape
(``step.PipelineStep``): ``stamp``, ``metrics``, ``limits``, ``admission``, ``access``, and the ``dispatch``
where the chain ends (with ``unanswered``, the view's answers to forwarded reads no worker answered)."""
