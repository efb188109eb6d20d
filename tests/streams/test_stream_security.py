"""Kafka TLS and SASL settings from the environment reach every client: aiokafka's producer,
consumer and admin options, and Faust's broker credentials."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
import threading
from collections.abc import Callable

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


def first_bytes_of_a_client(connect: Callable[[str], object]) -> bytes:
    """What a client sends first to a listener on 127.0.0.1 that answers nothing and closes."""
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    got: list[bytes] = []

    def accept() -> None:
        connection, _ = server.accept()
        with connection:
            connection.settimeout(10)
            got.append(connection.recv(5))

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        with contextlib.suppress(Exception):  # the listener is no broker: the client fails, after its first words
            connect(f"kafka://127.0.0.1:{port}")
        thread.join(timeout=30)
    finally:
        server.close()
    return got[0] if got else b""


def test_instance_publish_speaks_tls_to_the_broker(monkeypatch: pytest.MonkeyPatch) -> None:
    """`sunset instance publish` creates its topic and sends with the stream's security settings:
    with SUNSET_KAFKA_SECURITY_PROTOCOL=SSL its first bytes are a TLS handshake record (0x16), not
    a plaintext Kafka request (it used plain aiokafka options for its admin client)."""
    from scanner.commands.distribute import _send

    monkeypatch.setenv("SUNSET_KAFKA_SECURITY_PROTOCOL", "SSL")

    def publish(url: str) -> None:
        asyncio.run(asyncio.wait_for(_send(load_settings(broker=url), "t", [(b"1", b"{}")]), timeout=20))

    assert first_bytes_of_a_client(publish)[:1] == b"\x16"
    monkeypatch.setenv("SUNSET_KAFKA_SECURITY_PROTOCOL", "PLAINTEXT")
    assert first_bytes_of_a_client(publish)[:1] == b"\x00"  # a Kafka request: a 4-byte length first
