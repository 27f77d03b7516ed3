"""Where the local stack's jar cache is (``deploy/local/jars.py``'s ``CACHE``), for the tests that compile
Java against Connect's jars: ``STACK_CACHE_DIR`` when set; otherwise the cache the stack at ``STACK_DIR``
runs from (its workers' ``plugin.path`` lies in it: ``<cache>/kafka-<version>/plugins``), then this
checkout's ``.stack/cache``. The first that holds the jars wins."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from control_plane.worker_properties import read_properties

from .paths import ROOT


def cache_dirs() -> list[Path]:
    """The caches to look in, in order."""
    if os.environ.get("STACK_CACHE_DIR"):
        return [Path(os.environ["STACK_CACHE_DIR"])]
    found: list[Path] = []
    stack = os.environ.get("STACK_DIR")
    if stack:
        for properties in sorted(Path(stack, "config").glob("connect-*.properties")):
            for entry in read_properties(str(properties)).get("plugin.path", "").split(","):
                plugins = Path(entry.strip())
                if plugins.parent.name.startswith("kafka-"):
                    found.append(plugins.parent.parent)
    found.append(ROOT / ".stack" / "cache")
    return list(dict.fromkeys(found))


def kafka_lib(version: str, jars: Sequence[str]) -> tuple[Path, list[str]]:
    """The ``lib`` directory of Kafka ``version`` in the first cache that has every one of ``jars``; else
    the last looked in, with the jars missing there."""
    missing: list[str] = list(jars)
    lib = ROOT / ".stack" / "cache" / f"kafka-{version}" / "lib"
    for cache in cache_dirs():
        lib = cache / f"kafka-{version}" / "lib"
        missing = [name for name in jars if not list(lib.glob(f"{name}-*.jar"))]
        if not missing:
            break
    return lib, missing


__all__ = ["cache_dirs", "kafka_lib"]
