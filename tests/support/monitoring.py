"""The monitoring files of deploy/monitoring/ as the tests read them: every PromQL query of the Grafana
dashboard and of the alert rules, the metric names a query reads (promql-parser), the names a /metrics text
exports, and promtool (Debian's package ``prometheus``, installed by ``make install``:
deploy/monitoring/ensure-promtool.sh).

``exported_names`` reads the ``# TYPE`` lines itself: prometheus_client's parser names a counter's family
without its ``_total`` and lists no sample of a family not yet written, so it cannot tell the names a
query must use."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from typing import Any

import promql_parser
import pytest
import yaml

from .paths import ROOT

MONITORING = ROOT / "deploy" / "monitoring"
DASHBOARD = MONITORING / "grafana-dashboard.json"
ALERTS = MONITORING / "alerts.yml"
ALERT_TESTS = MONITORING / "alerts.test.yml"

# Grafana's variables, as a query is sent with them filled in
GRAFANA_VARIABLES = {"$__rate_interval": "1m", "$__interval": "1m", "$job": ".*", "$connector": ".*"}
_EQUAL = promql_parser.MatchOp.Equal


def promtool() -> str:
    """The promtool command; fails the test on CI (``make install`` must have installed it), skips elsewhere."""
    found = shutil.which("promtool")
    if found is None:
        message = (
            "promtool is missing: `make install` (or `make tools`) installs it (deploy/monitoring/ensure-promtool.sh)"
        )
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found


def filled(expr: str) -> str:
    for variable, value in GRAFANA_VARIABLES.items():
        expr = expr.replace(variable, value)
    return expr


def _panels(panels: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for panel in panels:
        yield panel
        yield from _panels(panel.get("panels", []))


def dashboard_queries() -> list[tuple[str, str]]:
    """(where, PromQL) of every query of the dashboard: its panels' targets and its query variables."""
    dashboard = json.loads(DASHBOARD.read_text())
    queries = [
        (f"panel {panel['title']!r} {target['refId']}", target["expr"])
        for panel in _panels(dashboard["panels"])
        for target in panel.get("targets", [])
    ]
    for variable in dashboard["templating"]["list"]:
        if variable["type"] == "query":
            query = variable["query"]["query"]
            inner = re.fullmatch(r"label_values\((.*),\s*\w+\)", query)
            queries.append((f"variable {variable['name']}", inner.group(1) if inner else query))
    return queries


def alert_queries() -> list[tuple[str, str]]:
    rules = yaml.safe_load(ALERTS.read_text())
    return [
        (f"alert {rule['alert']}", rule["expr"])
        for group in rules["groups"]
        for rule in group["rules"]
        if "alert" in rule
    ]


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL query reads: the names of its selectors, as promql-parser (a port of
    Prometheus's own parser) reads the query with Grafana's variables filled in; a selector by
    ``{__name__="..."}`` names its metric too."""
    names: set[str] = set()

    def selector(node: promql_parser.Expr) -> None:
        if isinstance(node, promql_parser.VectorSelector):
            by_label = {m.value for m in node.matchers.matchers if m.name == "__name__" and m.op == _EQUAL}
            names.update({node.name} if node.name else by_label)

    promql_parser.walk(promql_parser.parse(filled(expr)), selector)
    return names


def exported_names(exposition: str) -> set[str]:
    """The sample names a /metrics text declares (``# TYPE`` lines; a histogram's ``_bucket``, ``_sum`` and
    ``_count``), whether or not a sample was written yet (a labelled counter before its first increment)."""
    names = set()
    for line in exposition.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ", 3)
            names.add(name)
            if kind == "histogram":
                names |= {f"{name}_bucket", f"{name}_sum", f"{name}_count"}
    return names
