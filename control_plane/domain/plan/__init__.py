"""Plan and apply: a folder of connector configs compared with the cluster, and carried out exactly.

- ``feature``: ``PlanAndApply``, the one entry; a 503 without the sidecar's view;
- ``planner``: ``Planner``, the plan (with the worker's validation and previews) and the apply, while the
  plan still holds;
- ``runner``: ``StepRunner``, the apply's steps several at once, retried while Connect rebalances;
- ``steps``: the documents' connectors, the steps from what the cluster has, the fingerprint (pure).
"""

from .feature import NO_VIEW, PlanAndApply
from .planner import Applied, ApplyOptions, Planner
from .runner import StepFailure, StepRunner
from .steps import ACTIONS, Desired, Plan, PlanStep, config_digest, desired_of, fingerprint_of, steps_of

__all__ = [
    "ACTIONS",
    "NO_VIEW",
    "Applied",
    "ApplyOptions",
    "Desired",
    "Plan",
    "PlanAndApply",
    "PlanStep",
    "Planner",
    "StepFailure",
    "StepRunner",
    "config_digest",
    "desired_of",
    "fingerprint_of",
    "steps_of",
]
