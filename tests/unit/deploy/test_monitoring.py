"""deploy/monitoring/: the alert rules pass ``promtool check rules`` and their unit tests (``promtool test
rules``: the failed-task alert among them), every query of the Grafana dashboard is valid PromQL, and every
query of both names only metrics of the sidecar (against the exposition of a sidecar with every family
present; tests/integration/test_connector_states.py scrapes a real one against the stack)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

from control_plane.codecs import ConnectorConfig, ConnectorStatus, TaskCommit
from control_plane.domain.auto_restart import Budget, BudgetUse
from control_plane.domain.reads.states import ConnectorStates, StateRules
from control_plane.metrics import Metrics
from tests.support.fakes import Kafka
from tests.support.monitoring import (
    ALERT_TESTS,
    ALERTS,
    alert_queries,
    dashboard_queries,
    exported_names,
    filled,
    metric_names,
    promtool,
)


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)


def test_promtool_checks_the_alert_rules() -> None:
    checked = run(promtool(), "check", "rules", str(ALERTS))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "SUCCESS" in checked.stdout


def test_the_alert_rules_pass_their_unit_tests() -> None:
    """The failed-task alert fires once per connector after 2 minutes, and ends when the task runs again."""
    tested = run(promtool(), "test", "rules", str(ALERT_TESTS))
    assert tested.returncode == 0, tested.stdout + tested.stderr
    tests = yaml.safe_load(ALERT_TESTS.read_text())["tests"]
    alerts = {case["alertname"] for test in tests for case in test["alert_rule_test"]}
    assert "ConnectTaskFailed" in alerts and "ConnectSinkNotCommitting" in alerts


def test_every_dashboard_query_is_valid_promql(tmp_path: Path) -> None:
    """promtool parses each query, with Grafana's variables filled in, as a recording rule."""
    rules = {
        "groups": [
            {
                "name": "dashboard",
                "rules": [
                    {"record": f"dashboard:query{i}", "expr": filled(expr)}
                    for i, (_, expr) in enumerate(dashboard_queries())
                ],
            }
        ]
    }
    path = tmp_path / "dashboard-rules.yml"
    path.write_text(yaml.safe_dump(rules))
    checked = run(promtool(), "check", "rules", str(path))
    assert checked.returncode == 0, checked.stdout + checked.stderr


def every_family() -> str:
    """The exposition of a sidecar whose every family is there: a view with a connector in it."""
    view = Kafka().view
    view.state.apply_config(ConnectorConfig("c", {"connector.class": "X", "name": "c"}))
    view.state.apply_config(TaskCommit("c", 0))
    view.state.apply_status(ConnectorStatus("c", "RUNNING", None, "w1", 1))

    class Lagging:
        def __init__(self) -> None:
            self.applied = {"status": 1}
            self.skipped = {("status", "malformed"): 1}
            self.ready = True

        def lag(self) -> dict[str, None]:
            return {"status": None}

    metrics = Metrics()
    metrics.watch_view(Lagging())
    states = ConnectorStates(view)
    metrics.watch_states(lambda: states.gauges(StateRules(False, True)))
    metrics.observe("/connectors", "GET", 200, 0.01)

    class Restarts:
        @property
        def counts(self) -> dict[str, int]:
            return {"restarted": 1}

        def restarts(self) -> dict[str, int]:
            return {"c": 1}

        def gave_up(self) -> dict[str, int]:
            return {"c": 1}

        def budget_use(self) -> BudgetUse:
            return BudgetUse(Budget(30, 60), 1, ("c",))

    metrics.watch_auto_restarts(Restarts())

    class Lags:
        def sink_totals(self) -> dict[str, int]:
            return {"c": 1}

        def sink_uncommitted(self) -> dict[str, tuple[int, int]]:
            return {"c": (1, 1)}

        def source_ages(self) -> dict[str, float]:
            return {"c": 1.0}

        def source_commits(self) -> dict[str, int]:
            return {"c": 1}

    metrics.watch_lags(Lags())
    return metrics.render().decode()


def test_every_query_names_a_metric_the_sidecar_exports() -> None:
    exported = exported_names(every_family())
    queries = dashboard_queries() + alert_queries()
    unknown = {where: sorted(metric_names(expr) - exported) for where, expr in queries if metric_names(expr) - exported}
    assert not unknown
    read = set().union(*(metric_names(expr) for _, expr in queries))
    # what the dashboard and the rules must show
    for name in (
        "connector_state",
        "connector_tasks",
        "status_update_failure_total",
        "status_update_retry_total",
        "view_lag_records",
        "upstream_errors_total",
        "http_request_duration_seconds_bucket",
        "auto_restart_gave_up",
        "sink_lag_records",
        "sink_uncommitted_records",
        "source_offset_commit_age_seconds",
    ):
        assert name in read, name


def test_the_query_reader_finds_metric_names_only() -> None:
    expr = (
        'histogram_quantile(0.99, sum by (route, le) (rate(http_request_duration_seconds_bucket{job=~"$job",'
        'route!~"/metrics|x"}[$__rate_interval]))) / on (job) group_left max without (instance) (view_ready) > 1e3'
    )
    assert metric_names(expr) == {"http_request_duration_seconds_bucket", "view_ready"}
