"""One name, one class: in control_plane and spark_jobs no class name is defined in two modules, so a
name found in a log line, a traceback or a search means one thing. The REST models keep the names of
Connect's entities (``ConnectorOffsets``, ``PluginInfo``, ``LoggerLevel``) or take the ``Info`` suffix of
an answer; the classes they would meet elsewhere are named for what they are."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("control_plane", "spark_jobs")


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
    twice = {name: sorted(modules) for name, modules in defined_in().items() if len(modules) > 1}
    assert twice == {}
