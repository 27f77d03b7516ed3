"""The operator's word on a feature (a setting per feature, ``CONTROL_PLANE_FEATURE_<NAME>``): decided
from the workers' version, or forced. Shared by the settings and the domain, which decides with it
(``domain.capabilities``)."""

from __future__ import annotations

from enum import StrEnum


class FeatureMode(StrEnum):
    AUTO = "auto"  # decided from the worker's version
    NATIVE = "native"  # always forward to the worker
    EMULATED = "emulated"  # always do it in the sidecar


__all__ = ["FeatureMode"]
