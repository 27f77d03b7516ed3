"""One name, one class: in control_plane and spark_jobs no class name is defined in two modules, so a
name found in a log line, a traceback or a search means one thing.

The REST models (``rest/connect_models.py``, ``rest/sidecar_models.py``) and the HTTP layer's own
``Reply`` are the HTTP layer's to name: they are listed in ``REST_SIDE``, each with the class of the same
name elsewhere, and the test fails when an entry is no longer needed, so the list only shrinks."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("control_plane", "spark_jobs")

# class name -> the HTTP layer's module that defines it too
REST_SIDE = {
    "Capabilities": "control_plane/rest/sidecar_models.py",
    "ConnectorConfig": "control_plane/rest/connect_models.py",
    "ConnectorListing": "control_plane/rest/connect_models.py",
    "ConnectorOffset": "control_plane/rest/connect_models.py",
    "ConnectorOffsets": "control_plane/rest/connect_models.py",
    "CreationPreview": "control_plane/rest/sidecar_models.py",
    "ExpandedConnector": "control_plane/rest/connect_models.py",
    "LoggerLevel": "control_plane/rest/connect_models.py",
    "PluginInfo": "control_plane/rest/connect_models.py",
    "PluginList": "control_plane/rest/connect_models.py",
    "PluginVersionReport": "control_plane/rest/sidecar_models.py",
    "Readiness": "control_plane/rest/sidecar_models.py",
    "Reply": "control_plane/rest/dispatch.py",
    "StateChange": "control_plane/rest/sidecar_models.py",
    "StateChanges": "control_plane/rest/sidecar_models.py",
    "StateSummary": "control_plane/rest/sidecar_models.py",
    "StatusWriteState": "control_plane/rest/sidecar_models.py",
    "StatusWrites": "control_plane/rest/sidecar_models.py",
    "TimelineInfo": "control_plane/rest/sidecar_models.py",
    "TopicPlan": "control_plane/rest/sidecar_models.py",
    "TopicShape": "control_plane/rest/sidecar_models.py",
}


def defined_in() -> dict[str, set[str]]:
    """Every class name of the packages, with the modules (paths from the repository) that define it."""
    found: dict[str, set[str]] = defaultdict(set)
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.ClassDef):
                    found[node.name].add(path.relative_to(ROOT).as_posix())
    return found


def test_no_class_name_is_defined_twice() -> None:
    twice = {}
    for name, modules in defined_in().items():
        others = modules - {REST_SIDE[name]} if name in REST_SIDE else modules
        if len(others) > 1:
            twice[name] = sorted(modules)
    assert twice == {}


def test_every_rest_side_entry_is_still_needed() -> None:
    found = defined_in()
    stale = {name: module for name, module in REST_SIDE.items() if len(found.get(name, set()) - {module}) != 1}
    stale |= {name: module for name, module in REST_SIDE.items() if module not in found.get(name, set())}
    assert stale == {}
