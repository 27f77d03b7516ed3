"""deploy/kubernetes/'s kustomizations as ``kubectl kustomize`` renders them (kubectl has kustomize built
in), read as Kubernetes objects. kubectl is a requirement of these tests, as it is of deploying them:
without it, or when it refuses a kustomization, the test fails saying so."""

from __future__ import annotations

import functools
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from .paths import ROOT

KUBERNETES = ROOT / "deploy" / "kubernetes"
BASE, STANDALONE = KUBERNETES / "base", KUBERNETES / "overlays" / "standalone"

Object = dict[str, Any]


def kubectl() -> str:
    found = shutil.which("kubectl")
    if found is None:
        pytest.fail(
            "kubectl is missing: deploy/kubernetes/ is rendered with `kubectl kustomize`; install kubectl "
            "(1.27 or newer: kustomize 5 built in)",
            pytrace=False,
        )
    return found


@functools.cache
def _rendered(directory: Path) -> str:
    done = subprocess.run(
        [kubectl(), "kustomize", str(directory)], capture_output=True, text=True, timeout=120, check=False
    )
    if done.returncode != 0:
        pytest.fail(f"kubectl kustomize {directory} failed:\n{done.stderr.strip()}", pytrace=False)
    return done.stdout


def render(directory: Path) -> list[Object]:
    """The objects of the kustomization in ``directory`` (a new list each time: a test may change them),
    in kubectl's order (by kind, then name)."""
    return [item for item in yaml.safe_load_all(_rendered(directory.resolve())) if item]
