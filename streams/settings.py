"""One typed settings object for the worker, the receiver and the replay (env prefix `SUNSET_`).

Production defaults are Kafka's and Faust's own. The embedded Tansu broker needs different ones
(see `dev_profile`); they are applied only by `--profile dev`, `sunset stream dev` and the tests.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

MIB = 1024 * 1024


class DetectorSettings(BaseSettings):
    """What the detectors need; the replay uses only this part."""

    model_config = SettingsConfigDict(env_prefix="SUNSET_", extra="ignore")

    mass_download_projects: int = Field(10, ge=1, description="alert above this many distinct projects")
    mass_download_window: float = Field(600.0, gt=0, description="seconds")
    mass_download_allowlist: list[str] = Field(default_factory=list, description="user ids or names never alerted")
    correlation_window: float = Field(5.0, gt=0, description="seconds from a job-token login to the access")
    dedup_ttl: float = Field(900.0, gt=0, description="seconds an event id is remembered (event time)")
    allowed_lateness: float = Field(60.0, ge=0, description=(
        "seconds of event time an event may arrive behind the slowest input partition and still be "
        "applied in order (streams.eventtime)"))


class StreamSettings(DetectorSettings):
    """The worker's and the receiver's settings."""

    broker: str = "kafka://localhost:9092"
    profile: Literal["production", "dev"] = "production"
    app_id: str = "sunset-stream"
    input_topic: str = "gitlab-audit-events"
    findings_topic: str = "sunset-findings"
    dead_letter_topic: str = "sunset-dead-letters"
    partitions: int = Field(8, ge=1, description="partitions of the internal topics and tables")
    replication_factor: int = Field(3, ge=1)
    data_dir: Path = Path(".sunset-stream")
    store: Literal["memory://", "rocksdb://"] = Field("memory://", description=(
        "where the worker keeps its tables: in memory (rebuilt from the changelogs at each start) or "
        "in RocksDB under data_dir (rocksdict; a restart replays only the changelogs' tail)"))
    web_host: str = "127.0.0.1"
    web_port: int = 6066
    batch_size: int = Field(2000, ge=1, description="events per batch (one changelog write per key per batch)")
    batch_within: float = Field(0.2, gt=0, description="seconds to wait for a batch to fill")
    stop_grace: float = Field(4.0, gt=0, description="seconds SIGTERM waits for an orderly stop before exiting")
    idle_after: float = Field(30.0, gt=0, description=(
        "seconds an input partition must be caught up and silent before it stops holding back the watermark"))
    # The receiver.
    receiver_host: str = "127.0.0.1"
    receiver_port: int = 8080
    token: SecretStr | None = Field(None, description="the destination's verification token")
    max_body_bytes: int = Field(25 * MIB, ge=1024, description="GitLab itself caps a streamed body at 25 MiB")
    publish_timeout: float = Field(5.0, gt=0, description="seconds to wait for the broker before answering 503")
    max_events_per_request: int = Field(1000, ge=1, description="events in one body (an array); more is 413")
    max_body_values: int = Field(250_000, ge=1000, description=(
        "JSON values a body may hold, bounding a request's memory; counted on the bytes before parsing"))
    header_timeout: float = Field(15.0, gt=0, description=(
        "seconds a connection may take to send a request's headers (and may stay idle between requests)"))
    body_timeout: float = Field(30.0, gt=0, description="seconds to receive a request's body; slower is 408")
    # Kafka security (every client: worker, receiver, publish, findings). TLS with SSL or
    # SASL_SSL (a CA file to trust the brokers; a certificate and key for mutual TLS); SASL
    # PLAIN or SCRAM with SASL_PLAINTEXT or SASL_SSL.
    kafka_security_protocol: Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"] = "PLAINTEXT"
    kafka_sasl_mechanism: Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] = "PLAIN"
    kafka_sasl_username: str | None = None
    kafka_sasl_password: SecretStr | None = None
    kafka_ssl_cafile: Path | None = None
    kafka_ssl_certfile: Path | None = None
    kafka_ssl_keyfile: Path | None = None
    # Broker tuning; None keeps Faust's default.
    broker_session_timeout: float | None = None
    broker_heartbeat_interval: float | None = None
    broker_rebalance_timeout: float | None = None
    broker_commit_interval: float | None = None
    producer_max_batch_size: int | None = 512 * 1024  # bytes per partition batch; Faust's default is 16 KiB

    def kafka_bootstrap(self) -> str:
        """`host:port[,host:port]` for aiokafka, from Faust's `kafka://` URL form."""
        return ",".join(part.split("://", 1)[-1] for part in self.broker.split(";"))

    def broker_overrides(self) -> dict[str, Any]:
        """The Faust settings this profile changes."""
        names = ("broker_session_timeout", "broker_heartbeat_interval", "broker_rebalance_timeout",
                 "broker_commit_interval", "producer_max_batch_size")
        return {name: getattr(self, name) for name in names if getattr(self, name) is not None}


def dev_profile(settings: StreamSettings) -> StreamSettings:
    """The embedded Tansu broker's quirks (docs/streams.md), applied on top of `settings`.

    * Tansu delays the first group join by session_timeout/2: 2 s instead of Faust's 60 s.
    * One node: replication factor 1, no standby replicas.

    Its wrong end offset for a partition ending in a multi-record batch would make Faust's
    changelog recovery lose the tail; rather than `producer_max_batch_size=1` (one broker round
    trip per record), `streams.worker.batching.flush_views` ends every flush with a
    single-record batch, which works on Kafka and Tansu alike.
    """
    return settings.model_copy(update={
        "profile": "dev",
        "replication_factor": 1,
        "broker_session_timeout": 2.0,
        "broker_heartbeat_interval": 0.5,
        "broker_rebalance_timeout": 2.0,
        "idle_after": min(settings.idle_after, 2.0),
    })


def load_settings(profile: str = "production", **overrides: Any) -> StreamSettings:
    """Settings from the environment, then command-line overrides, then the profile."""
    settings = StreamSettings(**{k: v for k, v in overrides.items() if v is not None})
    return dev_profile(settings) if profile == "dev" or settings.profile == "dev" else settings
