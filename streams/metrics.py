"""Prometheus metrics through prometheus_client, one `CollectorRegistry` per `Metrics` object.

The app and the receiver each create their own `Metrics` (no process-global registry: tests
create many). Callers name a metric by its exposed name and pass its labels as keywords:
`inc("sunset_stream_events_total", n, stage="projects")`. A metric is created on first use, as
a prometheus_client `Counter` (`inc`) or `Gauge` (`set`) with the HELP text below and the label
names of that first call; a later call with other label names is a ValueError (a bug).
prometheus_client exposes a counter `x_total` as `x_total` plus its creation time `x_created`.

At each scrape (`render`) the registry also carries `sunset_stream_event_time_lag_seconds`
(wall clock minus each stage partition's watermark) and the process collector's `process_*`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

from prometheus_client import CollectorRegistry, Counter, Gauge, ProcessCollector, generate_latest

CONTENT_TYPE = "text/plain; version=0.0.4"  # the text exposition format generate_latest writes
WATERMARK = "sunset_stream_watermark_seconds"
EVENT_TIME_LAG = "sunset_stream_event_time_lag_seconds"

HELP = {
    "sunset_stream_messages_total": "Kafka messages consumed, by stage.",
    "sunset_stream_events_total": "Audit events processed, by stage.",
    "sunset_stream_duplicates_total": "Repeated deliveries (same event id) not counted again.",
    "sunset_stream_dead_letters_total": "Inputs sent to the dead-letter topic, by reason class.",
    "sunset_stream_findings_total": "Finding records published, by kind.",
    "sunset_stream_forwarded_total": "Records forwarded to a stage topic, by topic.",
    "sunset_stream_changelog_writes_total": "Table changelog records written, by table.",
    "sunset_stream_batches_total": "Batches processed, by stage.",
    "sunset_stream_users_expired_total": "Users dropped from the actors table after the idle horizon.",
    "sunset_stream_input_lag_messages": "Input messages not read yet (high watermark minus position), by partition.",
    WATERMARK: "Event time (epoch seconds) a stage partition has released up to.",
    EVENT_TIME_LAG: "Seconds between now and a stage partition's watermark (event-time lag), by stage and partition.",
    "sunset_stream_late_events_total": "Events older than the watermark when they arrived, by stage.",
    "sunset_stream_redelivered_total": "Records read again after a restart or rebalance and skipped, by stage.",
    "sunset_stream_refetched_total": "Stage messages the consumer skipped and the stage read itself, by stage.",
    "sunset_stream_held_events": "Events this worker's stage partitions hold for their watermarks, by stage.",
    "sunset_stream_projects": "Projects held in this worker's partitions of the projects table.",
    "sunset_stream_users": "Users held in this worker's partitions of the actors table.",
    "sunset_receiver_requests_total": "HTTP requests to the receiver, by status code.",
    "sunset_receiver_events_total": "Events published by the receiver.",
    "sunset_receiver_bytes_total": "Request body bytes accepted by the receiver.",
}


class Metrics:
    """Counters and gauges in a registry of their own; `render` is the `/metrics` body."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.registry = CollectorRegistry()
        ProcessCollector(registry=self.registry)
        self._clock = clock
        self._counters: dict[str, Counter] = {}
        self._gauges: dict[str, Gauge] = {}

    def _gauge(self, name: str, labels: Mapping[str, str]) -> Gauge:
        gauge = self._gauges.get(name)
        if gauge is None:
            gauge = self._gauges[name] = Gauge(name, HELP.get(name, name), sorted(labels), registry=self.registry)
        return gauge

    def set(self, name: str, value: float, **labels: str) -> None:
        """A gauge: the latest value."""
        gauge = self._gauge(name, labels)
        (gauge.labels(**labels) if labels else gauge).set(value)

    def inc(self, name: str, value: float = 1, **labels: str) -> None:
        """A counter (its name ends in `_total`): add `value` (never negative)."""
        counter = self._counters.get(name)
        if counter is None:
            counter = self._counters[name] = Counter(name, HELP.get(name, name), sorted(labels),
                                                     registry=self.registry)
        (counter.labels(**labels) if labels else counter).inc(value)

    def value(self, name: str, **labels: str) -> float:
        """The current value of a counter or gauge with these labels (0 if never set)."""
        found = self.registry.get_sample_value(name, dict(labels))
        return 0.0 if found is None else found

    def gauge_samples(self, name: str) -> dict[tuple[tuple[str, str], ...], float]:
        """A gauge's values by their labels (sorted (name, value) pairs)."""
        gauge = self._gauges.get(name)
        if gauge is None:
            return {}
        return {tuple(sorted(s.labels.items())): s.value for family in gauge.collect() for s in family.samples}

    def render(self, gauges: Mapping[str, float] | None = None) -> str:
        """The exposition text, after setting the given unlabelled gauges (name → value) and the
        event-time lag of every watermark this process has."""
        for name, value in (gauges or {}).items():
            self.set(name, value)
        now = self._clock()
        for labels, mark in self.gauge_samples(WATERMARK).items():
            self.set(EVENT_TIME_LAG, now - mark, **dict(labels))
        return generate_latest(self.registry).decode()
