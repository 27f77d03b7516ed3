"""Prometheus metrics of one sidecar process, in a registry of its own (so tests can make many)."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import accumulate
from typing import Protocol

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import Collector

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 90.0)


class Metrics:
    content_type = CONTENT_TYPE_LATEST

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self._states: _StateText | None = None
        # per request: plain counts, turned into the two families at scrape time (_RequestCollector)
        self._requests: dict[tuple[str, str, int], _RequestStats] = {}
        self.registry.register(_RequestCollector(self._requests))
        self.upstream_errors = Counter(
            "upstream_errors",
            "Failed calls to a Connect worker, per worker and kind of failure",
            ["worker", "kind"],
            registry=self.registry,
        )
        self.rebalance_retries = Counter(
            "upstream_rebalance_retries",
            "Requests sent again because Connect answered 409 during a rebalance",
            registry=self.registry,
        )
        self.worker_up = Gauge(
            "upstream_worker_version_detected",
            "1 when the worker answered GET / at the last capability check",
            ["worker"],
            registry=self.registry,
        )
        # the status-store retry proposal's counters (Connect's status-backing-store-metrics group)
        self.status_successes = Counter(
            "status_update_success", "Status-topic records written, per record kind", ["kind"], registry=self.registry
        )
        self.status_retries = Counter(
            "status_update_retry",
            "Status-topic writes attempted again after a retriable error, per record kind",
            ["kind"],
            registry=self.registry,
        )
        self.status_failures = Counter(
            "status_update_failure",
            "Status-topic writes given up (retries exhausted or error not retriable), per record kind",
            ["kind"],
            registry=self.registry,
        )
        for counter in (self.status_successes, self.status_retries, self.status_failures):
            for kind in ("connector", "task", "topic"):
                counter.labels(kind)  # shown as 0 before the first write
        # every record the sidecar produces, per kind of topic (storage.kafka_writes: the one write path)
        self.kafka_write_attempts = Counter(
            "kafka_write_attempts",
            "Attempts to write a record to Kafka (first attempts and retries), per kind of topic",
            ["topic_kind"],
            registry=self.registry,
        )
        self.kafka_write_retries = Counter(
            "kafka_write_retries",
            "Records sent to Kafka again after a retriable error, per kind of topic",
            ["topic_kind"],
            registry=self.registry,
        )
        self.kafka_write_acknowledged = Counter(
            "kafka_write_acknowledged",
            "Records acknowledged by the brokers (acks=all), per kind of topic",
            ["topic_kind"],
            registry=self.registry,
        )
        self.kafka_write_failures = Counter(
            "kafka_write_failures",
            "Records given up on (retries exhausted or error not retriable), per kind of topic",
            ["topic_kind"],
            registry=self.registry,
        )
        self.kafka_write_latency = Histogram(
            "kafka_write_attempt_duration_seconds",
            "Time of one attempt to write a record, from handing it to the producer to its acknowledgement or "
            "error, per kind of topic",
            ["topic_kind"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        for family in (
            self.kafka_write_attempts,
            self.kafka_write_retries,
            self.kafka_write_acknowledged,
            self.kafka_write_failures,
            self.kafka_write_latency,
        ):
            for topic_kind in ("status", "config", "offsets", "audit"):
                family.labels(topic_kind)  # shown as 0 before the first write

        self.unfenced_writes = Counter(
            "connector_writes_unfenced",
            "Writes the workers do natively passed through without the connector's fence, because the sidecars' "
            "topic could not be used",
            registry=self.registry,
        )

    # -- what the upstream and the capability detector report
    def upstream_error(self, worker: str, kind: str) -> None:
        self.upstream_errors.labels(worker, kind).inc()

    def rebalance_retry(self) -> None:
        self.rebalance_retries.inc()

    def worker_answered(self, worker: str, answered: bool) -> None:
        self.worker_up.labels(worker).set(1 if answered else 0)

    # -- what the status writer reports (storage.status_writer.StatusWriteObserver)
    def status_update_success(self, kind: str) -> None:
        self.status_successes.labels(kind).inc()

    def status_update_retry(self, kind: str) -> None:
        self.status_retries.labels(kind).inc()

    def status_update_failure(self, kind: str) -> None:
        self.status_failures.labels(kind).inc()

    # -- what the write path reports (storage.kafka_writes.KafkaWriteObserver)
    def kafka_write_attempt(self, topic_kind: str, retry: bool, seconds: float, acknowledged: bool) -> None:
        self.kafka_write_attempts.labels(topic_kind).inc()
        if retry:
            self.kafka_write_retries.labels(topic_kind).inc()
        if acknowledged:
            self.kafka_write_acknowledged.labels(topic_kind).inc()
        self.kafka_write_latency.labels(topic_kind).observe(seconds)

    def kafka_write_failure(self, topic_kind: str) -> None:
        self.kafka_write_failures.labels(topic_kind).inc()

    # -- what the connectors' writes report (domain.cluster.writes.UnfencedWrites)
    def unfenced_write(self) -> None:
        self.unfenced_writes.inc()

    def observe(self, route: str, method: str, status: int, seconds: float) -> None:
        """One request answered (every request: a few additions, no lock; the one event loop calls it)."""
        stats = self._requests.get((route, method, status))
        if stats is None:
            stats = self._requests[(route, method, status)] = _RequestStats()
        stats.count += 1
        stats.total += seconds
        stats.buckets[bisect_left(LATENCY_BUCKETS, seconds)] += 1

    def watch_read_syncs(self, source: ReadSyncs) -> None:
        """The view's synced reads (``domain.read_rule``), read at every scrape."""
        self.registry.register(_ReadSyncCollector(source))

    def watch_view(self, view: ViewCounters) -> None:
        """Expose the view's own counters at scrape time (no per-record cost on the hot path)."""
        self.registry.register(_ViewCollector(view))

    def watch_states(self, source: Callable[[], StateGaugeSource | None]) -> None:
        """Per-connector state gauges from the view, at scrape time (``domain.reads.states``; None while
        the view is not ready: nothing shown rather than partial counts)."""
        self._states = _StateText(source)

    # The watches below take None where the sidecar has no such part (no view, no sidecars' topic): their
    # metrics are then not shown at all.
    def watch_plugin_pins(self, source: PinReading | None) -> None:
        """The connectors' version pins that do not hold on some worker, per (outcome, enforcement), at
        scrape time (``domain.plugins.pins``)."""
        if source is not None:
            self.registry.register(_PluginPinsCollector(source))

    def watch_auto_restarts(self, source: AutoRestartReading | None) -> None:
        """What auto-restart did (``domain.auto_restart``), at scrape time."""
        if source is not None:
            self.registry.register(_AutoRestartCollector(source))

    def watch_history(self, source: HistoryReading | None) -> None:
        """What the config history recorded (``domain.history``), at scrape time."""
        if source is not None:
            self.registry.register(_HistoryCollector(source))

    def watch_sidecars_topic(self, trouble: Callable[[], str | None] | None) -> None:
        """Whether the sidecars' topic can be used now (``storage.sidecar_topic.SidecarTopic.trouble``)."""
        if trouble is not None:
            Gauge(
                "sidecars_topic_usable",
                "1 when the sidecars' topic can be written (its last write succeeded and it was not refused at start)",
                registry=self.registry,
            ).set_function(lambda: 0.0 if trouble() else 1.0)

    def watch_lags(self, source: LagReading | None) -> None:
        """The sinks' lag (their last refresh) and the sources' freshness (``domain.lag``), at scrape time."""
        if source is not None:
            self.registry.register(_LagCollector(source))

    def render(self) -> bytes:
        text = generate_latest(self.registry)
        return text + self._states.render() if self._states is not None else text


class _RequestStats:
    __slots__ = ("buckets", "count", "total")

    def __init__(self) -> None:
        self.count = 0
        self.total = 0.0
        self.buckets = [0] * (len(LATENCY_BUCKETS) + 1)  # per bucket (le), the last one +Inf; not cumulative


class _RequestCollector(Collector):
    """``http_requests_total`` and the ``http_request_duration_seconds`` histogram, per route template,
    method and status, from the counts ``Metrics.observe`` keeps."""

    def __init__(self, stats: Mapping[tuple[str, str, int], _RequestStats]) -> None:
        self._stats = stats

    def collect(self) -> Iterator[CounterMetricFamily | HistogramMetricFamily]:
        labels = ["route", "method", "status"]
        requests = CounterMetricFamily(
            "http_requests",
            "HTTP requests answered by the sidecar, per route template, method and status",
            labels=labels,
        )
        latency = HistogramMetricFamily(
            "http_request_duration_seconds",
            "Time to answer an HTTP request, per route template and status",
            labels=labels,
        )
        for (route, method, status), stats in list(self._stats.items()):
            values = [route, method, str(status)]
            requests.add_metric(values, stats.count)
            cumulative = list(accumulate(stats.buckets))
            bounds = [repr(b) for b in LATENCY_BUCKETS] + ["+Inf"]  # as prometheus_client writes these
            latency.add_metric(values, list(zip(bounds, cumulative, strict=True)), stats.total)
        yield requests
        yield latency


class PinReading(Protocol):
    def counts(self) -> Mapping[tuple[str, str], int]: ...


class _PluginPinsCollector(Collector):
    def __init__(self, source: PinReading) -> None:
        self._source = source

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily(
            "plugin_pins_not_holding",
            "Version pins (KIP-891) of the connectors that do not hold on a worker whose plugins are known, per "
            "worker: outcome (unsatisfiable, older_only, not_installed, versions_unknown) and enforcement "
            "('enforced by the worker' from 4.1: a task assigned there fails; 'checked, not enforced by the "
            "worker' before: it runs another version)",
            labels=["outcome", "enforcement"],
        )
        for (outcome, enforcement), count in sorted(self._source.counts().items()):
            family.add_metric([outcome, enforcement], count)
        yield family


class AutoRestartReading(Protocol):
    @property
    def counts(self) -> Mapping[str, int]: ...

    def restarts(self) -> Mapping[str, int]: ...

    def gave_up(self) -> Mapping[str, int]: ...

    def budget_use(self) -> BudgetReading: ...


class BudgetReading(Protocol):
    @property
    def spent(self) -> int: ...

    @property
    def held_back(self) -> Sequence[str]: ...


class HistoryReading(Protocol):
    @property
    def counts(self) -> Mapping[str, int]: ...

    def kept(self) -> int: ...

    def pending(self) -> int: ...

    def unacknowledged(self) -> int: ...

    def dropped(self) -> int: ...


class _HistoryCollector(Collector):
    def __init__(self, source: HistoryReading) -> None:
        self._source = source

    def collect(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily]:
        done = CounterMetricFamily(
            "config_history_records",
            "What this sidecar wrote to the config history, per outcome: recorded (a version), unchanged (a "
            "config record that changed nothing), unacknowledged (a record whose write failed: written again "
            "after a backoff), dropped (a pending record past retention, superseded), expired (past retention), "
            "attributed (who made a change through this sidecar), failed (a pass that failed: the next one "
            "tries again)",
            labels=["outcome"],
        )
        outcomes = ("recorded", "unchanged", "unacknowledged", "dropped", "expired", "attributed", "failed")
        for outcome in outcomes:
            done.add_metric([outcome], self._source.counts.get(outcome, 0))
        kept = GaugeMetricFamily("config_history_versions", "Versions the config history keeps, every connector's")
        kept.add_metric([], self._source.kept())
        pending = GaugeMetricFamily(
            "config_history_pending_changes",
            "Config topic changes this sidecar's view read that no history record covers yet (the recording "
            "sidecar's should stay near 0; a growing figure: nobody records)",
        )
        pending.add_metric([], self._source.pending())
        unacknowledged = GaugeMetricFamily(
            "config_history_unacknowledged_records",
            "History records this sidecar made that the broker has not acknowledged yet: written again after a "
            "backoff until it does (at most HISTORY_MAX_PENDING_RECORDS; none is shown before it is read back)",
        )
        unacknowledged.add_metric([], self._source.unacknowledged())
        dropped = CounterMetricFamily(
            "config_history_dropped_changes",
            "Config topic changes this sidecar's view dropped before any history record covered them (its queue "
            "of 20,000 changes full: nobody records, or the records are not acknowledged for long)",
        )
        dropped.add_metric([], self._source.dropped())
        yield done
        yield kept
        yield pending
        yield unacknowledged
        yield dropped


class _AutoRestartCollector(Collector):
    def __init__(self, source: AutoRestartReading) -> None:
        self._source = source

    def collect(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily]:
        done = CounterMetricFamily(
            "auto_restarts",
            "What this sidecar's auto-restart did, per outcome: restarted (a restart the worker took), refused (one "
            "it refused or did not answer: counted and backed off all the same), gave_up, reset (a connector that "
            "ran through its backoff: counting starts again), failed (nothing done: no fence, or the sidecars' "
            "topic could not be written)",
            labels=["outcome"],
        )
        for outcome in ("restarted", "refused", "gave_up", "reset", "failed"):
            done.add_metric([outcome], self._source.counts.get(outcome, 0))
        restarts = GaugeMetricFamily(
            "auto_restart_restarts",
            "Restarts of each connector's current run of failures, as the sidecars' topic records them (every "
            "sidecar of the cluster shows the same)",
            labels=["connector"],
        )
        for connector, count in sorted(self._source.restarts().items()):
            restarts.add_metric([connector], count)
        gave_up = GaugeMetricFamily(
            "auto_restart_gave_up",
            "1 for each connector auto-restart gave up on (it stays FAILED until restarted by hand)",
            labels=["connector"],
        )
        for connector in sorted(self._source.gave_up()):
            gave_up.add_metric([connector], 1)
        use = self._source.budget_use()
        spent = GaugeMetricFamily(
            "auto_restart_budget_spent",
            "The cluster's restarts in AUTO_RESTART_BUDGET_WINDOW_S up to now, as the sidecars' topic records them",
        )
        spent.add_metric([], use.spent)
        held = GaugeMetricFamily(
            "auto_restart_held_back",
            "Connectors due a restart that wait for room in the cluster's budget (AUTO_RESTART_BUDGET)",
        )
        held.add_metric([], len(use.held_back))
        yield done
        yield restarts
        yield gave_up
        yield spent
        yield held


class LagReading(Protocol):
    def sink_totals(self) -> Mapping[str, int]: ...

    def sink_uncommitted(self) -> Mapping[str, tuple[int, int]]: ...

    def source_ages(self) -> Mapping[str, float]: ...

    def source_commits(self) -> Mapping[str, int]: ...


class _LagCollector(Collector):
    def __init__(self, source: LagReading) -> None:
        self._source = source

    def collect(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily]:
        lag = GaugeMetricFamily(
            "sink_lag_records",
            "A sink connector's consumer lag: the records of its topics' partitions its group has not committed, "
            "summed (read from the broker every LAG_REFRESH_S)",
            labels=["connector"],
        )
        for connector, total in sorted(self._source.sink_totals().items()):
            lag.add_metric([connector], total)
        uncommitted = GaugeMetricFamily(
            "sink_uncommitted_partitions",
            "Partitions of a sink's topics its group has committed no offset for (a sink that has not committed "
            "yet, or an idle one on an empty partition)",
            labels=["connector"],
        )
        unread = GaugeMetricFamily(
            "sink_uncommitted_records",
            "Records of those partitions the sink has still to read: from the log start (Connect's "
            "auto.offset.reset=earliest), 0 where its consumer starts at the end; part of sink_lag_records",
            labels=["connector"],
        )
        for connector, (partitions, records) in sorted(self._source.sink_uncommitted().items()):
            uncommitted.add_metric([connector], partitions)
            unread.add_metric([connector], records)
        age = GaugeMetricFamily(
            "source_offset_commit_age_seconds",
            "Seconds since a source connector last committed an offset (its newest record in the offsets topic)",
            labels=["connector"],
        )
        for connector, seconds in sorted(self._source.source_ages().items()):
            age.add_metric([connector], seconds)
        commits = CounterMetricFamily(
            "source_offset_commits",
            "Offset records of a source connector the view read (their rate: the records committed per interval)",
            labels=["connector"],
        )
        for connector, count in sorted(self._source.source_commits().items()):
            commits.add_metric([connector], count)
        yield lag
        yield uncommitted
        yield unread
        yield age
        yield commits


class TailLagReading(Protocol):
    @property
    def records(self) -> int: ...

    @property
    def poll_age_s(self) -> float: ...


class ViewCounters(Protocol):
    @property
    def applied(self) -> Mapping[str, int]: ...

    @property
    def skipped(self) -> Mapping[tuple[str, str], int]: ...

    @property
    def ready(self) -> bool: ...

    def lag(self) -> Mapping[str, TailLagReading | None]: ...


class _ViewCollector(Collector):
    def __init__(self, view: ViewCounters) -> None:
        self._view = view

    def collect(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily]:
        applied = CounterMetricFamily(
            "view_records_applied", "Internal-topic records applied to the view", labels=["topic"]
        )
        for topic, count in self._view.applied.items():
            applied.add_metric([topic], count)
        yield applied
        skipped = CounterMetricFamily(
            "view_records_skipped",
            "Internal-topic records skipped by the view (unknown key or malformed), as a worker skips them",
            labels=["topic", "reason"],
        )
        for (topic, reason), count in self._view.skipped.items():
            skipped.add_metric([topic, reason], count)
        yield skipped
        yield GaugeMetricFamily(
            "view_ready", "1 once the view has read to the end offsets seen at start", value=int(self._view.ready)
        )
        lag = GaugeMetricFamily(
            "view_lag_records",
            "Records of an internal topic written and not yet read by the view, as of the view's last fetch",
            labels=["topic"],
        )
        poll_age = GaugeMetricFamily(
            "view_poll_age_seconds",
            "Seconds since the view last fetched from an internal topic (its oldest partition); grows while the "
            "view cannot read it",
            labels=["topic"],
        )
        for topic, reading in self._view.lag().items():
            if reading is not None:
                lag.add_metric([topic], reading.records)
                poll_age.add_metric([topic], reading.poll_age_s)
        yield lag
        yield poll_age


class ReadSyncs(Protocol):
    @property
    def read_syncs(self) -> Mapping[str, int]: ...

    def window_in_use(self) -> bool: ...


class _ReadSyncCollector(Collector):
    def __init__(self, source: ReadSyncs) -> None:
        self._source = source

    def collect(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily]:
        syncs = CounterMetricFamily(
            "view_read_syncs",
            "Reads the view answered after making sure it shows every change acknowledged through any sidecar "
            "(VIEW_READ_SYNC), by outcome: window (at once), waited (for a read-ahead round), synced (a request "
            "of its own), stale (not in time)",
            labels=["outcome"],
        )
        for outcome, count in self._source.read_syncs.items():
            syncs.add_metric([outcome], count)
        yield syncs
        yield GaugeMetricFamily(
            "view_read_window_in_use",
            "1 while reads are answered within the read window (VIEW_READ_SYNC=always and every live sidecar "
            "waits it out after a write)",
            value=int(self._source.window_in_use()),
        )


class ConnectorStateGauge(Protocol):
    @property
    def state(self) -> str: ...

    @property
    def tasks(self) -> Mapping[str, int]: ...


class StateGaugeSource(Protocol):
    """``domain.reads.StateGauges``: kept incrementally; ``version`` changes with its contents."""

    @property
    def connectors(self) -> Mapping[str, ConnectorStateGauge]: ...

    @property
    def connector_totals(self) -> Mapping[str, int]: ...

    @property
    def task_totals(self) -> Mapping[str, int]: ...

    @property
    def version(self) -> int: ...


class _StateText:
    """``connector_state`` (1, labelled with the connector's state), ``connector_tasks`` (per connector and
    task state present, how many tasks), and the counts by state over the cluster, in the text format.

    Written here rather than by prometheus_client's families: at 2,000 connectors those take about 100 ms
    per scrape on the event loop. The text is kept until the states change (``version``), each connector's
    lines until that connector's gauge does (the source replaces a connector's gauge when it changes).
    """

    def __init__(self, source: Callable[[], StateGaugeSource | None]) -> None:
        self._source = source
        self._lines: dict[str, tuple[ConnectorStateGauge, str, str]] = {}
        self._text: tuple[int, bytes] | None = None

    def render(self) -> bytes:
        gauges = self._source()
        if gauges is None:
            return b""
        if self._text is not None and self._text[0] == gauges.version:
            return self._text[1]
        lines: dict[str, tuple[ConnectorStateGauge, str, str]] = {}
        for name, gauge in gauges.connectors.items():
            known = self._lines.get(name)
            lines[name] = known if known is not None and known[0] is gauge else _connector_lines(name, gauge)
        self._lines = lines
        parts = [
            _family_head("connector_state", "1 per connector, labelled with its state as the status endpoint shows it"),
            *(state for _, state, _ in lines.values()),
            _family_head(
                "connector_tasks", "Tasks of a connector in a state (only the states some of its tasks are in)"
            ),
            *(tasks for _, _, tasks in lines.values() if tasks),
            _family_head("connectors_by_state", "Connectors in each state"),
            *(f'connectors_by_state{{state="{_escape(k)}"}} {v}\n' for k, v in gauges.connector_totals.items()),
            _family_head("tasks_by_state", "Tasks in each state"),
            *(f'tasks_by_state{{state="{_escape(k)}"}} {v}\n' for k, v in gauges.task_totals.items()),
        ]
        text = "".join(parts).encode()
        self._text = (gauges.version, text)
        return text


def _family_head(name: str, help_text: str) -> str:
    return f"# HELP {name} {help_text} (from the view)\n# TYPE {name} gauge\n"


def _escape(value: str) -> str:
    """A label value in the text format: backslash, double quote and line feed escaped."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _connector_lines(name: str, gauge: ConnectorStateGauge) -> tuple[ConnectorStateGauge, str, str]:
    connector = _escape(name)
    state = f'connector_state{{connector="{connector}",state="{_escape(gauge.state)}"}} 1\n'
    tasks = "".join(
        f'connector_tasks{{connector="{connector}",state="{_escape(task_state)}"}} {count}\n'
        for task_state, count in gauge.tasks.items()
    )
    return gauge, state, tasks
