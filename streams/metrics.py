"""Counters in the Prometheus text exposition format (0.0.4), without a client library.

One `Metrics` object per process, owned by the app or receiver that creates it (no globals).
"""

from __future__ import annotations

from collections.abc import Mapping

HELP = {
    "sunset_stream_messages_total": "Kafka messages consumed, by stage.",
    "sunset_stream_events_total": "Audit events processed, by stage.",
    "sunset_stream_duplicates_total": "Repeated deliveries (same event id) not counted again.",
    "sunset_stream_dead_letters_total": "Inputs sent to the dead-letter topic, by reason class.",
    "sunset_stream_findings_total": "Finding records published, by kind.",
    "sunset_stream_changelog_writes_total": "Table changelog records written, by table.",
    "sunset_stream_batches_total": "Batches processed, by stage.",
    "sunset_stream_users_expired_total": "Users dropped from the actors table after the idle horizon.",
    "sunset_stream_input_lag_messages": "Input messages not read yet (high watermark minus position), by partition.",
    "sunset_stream_watermark_seconds": "Event time (epoch seconds) a stage partition has released up to.",
    "sunset_stream_late_events_total": "Events older than the watermark when they arrived, by stage.",
    "sunset_stream_redelivered_total": "Records read again after a restart or rebalance and skipped, by stage.",
    "sunset_stream_refetched_total": "Stage messages the consumer skipped and the stage read itself, by stage.",
    "sunset_receiver_requests_total": "HTTP requests to the receiver, by status code.",
    "sunset_receiver_events_total": "Events published by the receiver.",
    "sunset_receiver_bytes_total": "Request body bytes accepted by the receiver.",
}


def _labels(labels: Mapping[str, str]) -> str:
    if not labels:
        return ""
    inner = ",".join(f'{k}="{_escape(str(v))}"' for k, v in sorted(labels.items()))
    return "{" + inner + "}"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


class Metrics:
    """Monotonic counters keyed by name and labels."""

    def __init__(self) -> None:
        self._counters: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
        self._gauges: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}

    def set(self, name: str, value: float, **labels: str) -> None:
        """A gauge: the latest value."""
        self._gauges[(name, tuple(sorted(labels.items())))] = value

    def inc(self, name: str, value: float = 1, **labels: str) -> None:
        key = (name, tuple(sorted(labels.items())))
        self._counters[key] = self._counters.get(key, 0) + value

    def value(self, name: str, **labels: str) -> float:
        return self._counters.get((name, tuple(sorted(labels.items()))), 0)

    def render(self, gauges: Mapping[str, float] | None = None) -> str:
        """The exposition text: counters, then the given gauges (name → value)."""
        lines: list[str] = []
        names = sorted({name for name, _ in self._counters})
        for name in names:
            lines += [f"# HELP {name} {HELP.get(name, name)}", f"# TYPE {name} counter"]
            for (n, labels), value in sorted(self._counters.items()):
                if n == name:
                    lines.append(f"{name}{_labels(dict(labels))} {_number(value)}")
        for name in sorted({name for name, _ in self._gauges}):
            lines += [f"# HELP {name} {HELP.get(name, name)}", f"# TYPE {name} gauge"]
            lines += [f"{name}{_labels(dict(labels))} {_number(value)}"
                      for (n, labels), value in sorted(self._gauges.items()) if n == name]
        for name, value in sorted((gauges or {}).items()):
            lines += [f"# TYPE {name} gauge", f"{name} {_number(value)}"]
        return "\n".join(lines) + "\n"
