"""Kafka TLS and SASL settings from the environment reach every client: aiokafka's producer,
consumer and admin options, and Faust's broker credentials."""

from __future__ import annotations

import ssl

import faust
import pytest

from streams.kafka import producer_options, security_options
from streams.settings import load_settings
from streams.worker.app import _faust_config
from streams.worker.ingest import consumer_options


def test_plaintext_by_default_adds_nothing() -> None:
    settings = load_settings()
    assert security_options(settings) == {}
    assert "security_protocol" not in producer_options(settings)
    assert _faust_config(settings)["broker_credentials"] is None


def test_sasl_scram_over_tls_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {"KAFKA_SECURITY_PROTOCOL": "SASL_SSL", "KAFKA_SASL_MECHANISM": "SCRAM-SHA-512",
                        "KAFKA_SASL_USERNAME": "sunset", "KAFKA_SASL_PASSWORD": "pw-123"}.items():
        monkeypatch.setenv(f"SUNSET_{name}", value)
    settings = load_settings()
    for options in (producer_options(settings), consumer_options(settings)):
        assert {k: options[k] for k in ("security_protocol", "sasl_mechanism", "sasl_plain_username",
                                        "sasl_plain_password")} == {
            "security_protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512", "sasl_plain_username": "sunset",
            "sasl_plain_password": "pw-123"}
        assert isinstance(options["ssl_context"], ssl.SSLContext)
        assert options["ssl_context"].verify_mode == ssl.CERT_REQUIRED
    credentials = _faust_config(settings)["broker_credentials"]
    assert isinstance(credentials, faust.SASLCredentials)
    assert (str(credentials.protocol.value), str(credentials.mechanism.value), credentials.username,
            credentials.password) == ("SASL_SSL", "SCRAM-SHA-512", "sunset", "pw-123")
    assert "pw-123" not in repr(settings)  # a secret in the settings object


def test_tls_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUNSET_KAFKA_SECURITY_PROTOCOL", "SSL")
    settings = load_settings()
    options = security_options(settings)
    assert sorted(options) == ["security_protocol", "ssl_context"]
    assert isinstance(_faust_config(settings)["broker_credentials"], faust.SSLCredentials)
