"""The local stack's script (deploy/local/stack.py) as the module ``local_stack``, for what the tests and
the benchmarks share with it: the clusters it starts, a broker or a worker started as it starts its own,
free ports, process checks.

deploy/local/ is a directory of scripts, run as files (``python deploy/local/stack.py up``), that import
their siblings by name (``import jars``): the directory is an import root of its own. It goes on
``sys.path`` here, once, as it is on mypy's path (``mypy_path`` in pyproject.toml), and the script is
imported as what it is, the module ``stack``, typed like any other.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

from .paths import ROOT

DEPLOY_LOCAL = ROOT / "deploy" / "local"
if str(DEPLOY_LOCAL) not in sys.path:
    sys.path.append(str(DEPLOY_LOCAL))

import stack as local_stack  # noqa: E402 - needs the path entry above


@contextlib.contextmanager
def files_under(home: Path) -> Iterator[None]:
    """The configs and logs of what the script starts in the block go under ``home``, not the stack's folder."""
    saved = local_stack.STACK
    local_stack.STACK = home
    try:
        yield
    finally:
        local_stack.STACK = saved


__all__ = ["DEPLOY_LOCAL", "files_under", "local_stack"]
