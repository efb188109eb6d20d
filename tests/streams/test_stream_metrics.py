"""`streams.metrics`: prometheus_client underneath, one registry per `Metrics` object; the text
is read back with prometheus_client's own parser (the running worker and receiver are scraped in
test_stream_worker.py and test_stream_receiver.py)."""

from __future__ import annotations

import pytest
from streamkit import parse_metrics, sample_values

from streams.metrics import Metrics


def test_each_metrics_object_has_a_registry_of_its_own() -> None:
    worker, receiver = Metrics(clock=lambda: 1_750_000_100.0), Metrics()
    worker.inc("sunset_stream_events_total", 3, stage="route")
    worker.inc("sunset_stream_events_total", 2, stage="route")
    worker.inc("sunset_stream_events_total", 0, stage="projects")
    worker.inc("sunset_stream_users_expired_total", 4)
    worker.set("sunset_stream_input_lag_messages", 7, partition="1")
    worker.set("sunset_stream_input_lag_messages", 0, partition="1")
    worker.set("sunset_stream_watermark_seconds", 1_750_000_000.5, stage="projects", partition="0")
    worker.set("sunset_stream_watermark_seconds", 1_750_000_090.0, stage="actors", partition="3")
    receiver.inc("sunset_receiver_requests_total", code="200")

    families = parse_metrics(worker.render({"sunset_stream_projects": 12, "sunset_stream_users": 5}))
    assert sample_values(families) == {
        'sunset_stream_events_total{stage="route"}': 5, 'sunset_stream_events_total{stage="projects"}': 0,
        "sunset_stream_users_expired_total": 4,
        'sunset_stream_input_lag_messages{partition="1"}': 0,
        'sunset_stream_watermark_seconds{partition="0",stage="projects"}': 1_750_000_000.5,
        'sunset_stream_watermark_seconds{partition="3",stage="actors"}': 1_750_000_090.0,
        'sunset_stream_event_time_lag_seconds{partition="0",stage="projects"}': 99.5,
        'sunset_stream_event_time_lag_seconds{partition="3",stage="actors"}': 10.0,
        "sunset_stream_projects": 12, "sunset_stream_users": 5}
    assert {name: (f["type"], f["help"]) for name, f in families.items()
            if name in ("sunset_stream_events", "sunset_stream_event_time_lag_seconds")} == {
        "sunset_stream_events": ("counter", "Audit events processed, by stage."),
        "sunset_stream_event_time_lag_seconds": (
            "gauge", "Seconds between now and a stage partition's watermark (event-time lag), by stage and partition.")}
    assert sample_values(parse_metrics(receiver.render())) == {'sunset_receiver_requests_total{code="200"}': 1}
    assert (worker.value("sunset_stream_events_total", stage="route"),
            worker.value("sunset_stream_users_expired_total"),
            worker.value("sunset_stream_input_lag_messages", partition="1"),
            receiver.value("sunset_stream_events_total", stage="route")) == (5, 4, 0, 0)


def test_the_text_keeps_the_names_users_scrape() -> None:
    metrics = Metrics()
    metrics.inc("sunset_stream_dead_letters_total", reason="invalid JSON")
    lines = metrics.render().splitlines()
    assert lines[lines.index("# TYPE sunset_stream_dead_letters_total counter") - 1:][:3] == [
        "# HELP sunset_stream_dead_letters_total Inputs sent to the dead-letter topic, by reason class.",
        "# TYPE sunset_stream_dead_letters_total counter",
        'sunset_stream_dead_letters_total{reason="invalid JSON"} 1.0']


def test_misuse_is_an_error() -> None:
    metrics = Metrics()
    metrics.inc("sunset_stream_batches_total", stage="route")
    with pytest.raises(ValueError, match="label"):
        metrics.inc("sunset_stream_batches_total", table="projects")  # other label names than its first use
    with pytest.raises(ValueError, match="negative"):
        metrics.inc("sunset_stream_batches_total", -1, stage="route")  # a counter never goes down
    assert metrics.value("sunset_stream_batches_total", stage="route") == 1
