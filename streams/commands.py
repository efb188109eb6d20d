"""What `sunset stream …` runs. Heavy imports (Faust, aiokafka, aiohttp) happen per command."""

from __future__ import annotations

import argparse
import io
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from streams.host import Host
from streams.settings import DetectorSettings, StreamSettings, load_settings

EXIT_OK, EXIT_USAGE = 0, 2
MAX_TOKEN_BYTES = 4096  # a verification token is one line; a device or a FIFO named instead is refused


class StreamUsageError(Exception):
    """Bad input the user must fix (exit 2)."""


class BrokerError(Exception):
    """The broker could not be reached or refused what a command asked (exit 2, one line)."""


def _detector_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The detector settings given on the command line: a flag's destination is its field's name."""
    return {name: getattr(args, name, None) for name in DetectorSettings.model_fields}


def settings_from(args: argparse.Namespace, **extra: Any) -> StreamSettings:
    """Environment (`SUNSET_*`), then the command line, then the profile."""
    overrides = {**_detector_overrides(args), "broker": getattr(args, "broker", None),
                 "partitions": getattr(args, "partitions", None), **extra}
    return load_settings(getattr(args, "profile", None) or "production", **overrides)


def _cmd_replay(args: argparse.Namespace, host: Host) -> int:
    from streams.events import load_snapshot
    from streams.replay import bounded_lines, replay_file, replay_lines, write_json, write_text

    overrides = {k: v for k, v in _detector_overrides(args).items() if v is not None}
    limits = DetectorSettings(**overrides)
    path = Path(args.file)
    if args.file != "-":
        regular_file(path)
    seed = load_snapshot(Path(args.allowlist_snapshot)) if args.allowlist_snapshot else []
    if args.file == "-":
        doc = replay_lines(bounded_lines(sys.stdin.buffer), limits, seed)
    else:
        doc = replay_file(path, limits, seed)
    write = write_json if args.format == "json" else write_text
    if not args.output:
        write(doc, sys.stdout)
        return EXIT_OK
    text = io.StringIO()
    write(doc, text)
    reason = host.write_file(Path(args.output), text.getvalue())
    if reason is not None:  # as `sunset scan -o` says it
        raise StreamUsageError(f"cannot write {args.format} report to {args.output}: {reason}")
    return EXIT_OK


def regular_file(path: Path, option: str = "") -> Path:
    """`path`, when it names a regular file: a device, a FIFO or a folder would be read without end
    or not at all."""
    said = f"{option} {path}" if option else str(path)
    if not path.exists():
        raise StreamUsageError(f"{said}: no such file")
    if not path.is_file():
        raise StreamUsageError(f"{said}: not a regular file")
    return path


def read_token(path: Path) -> str:
    """The verification token in `path`: a regular file of at most `MAX_TOKEN_BYTES`, UTF-8, one line."""
    with regular_file(path, "--token-file").open("rb") as handle:
        data = handle.read(MAX_TOKEN_BYTES + 1)
    if len(data) > MAX_TOKEN_BYTES:
        raise StreamUsageError(f"--token-file {path}: larger than {MAX_TOKEN_BYTES} bytes; a token is one line")
    try:
        return data.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise StreamUsageError(f"--token-file {path}: not UTF-8 text") from None


def _cmd_worker(args: argparse.Namespace, host: Host) -> int:
    from streams.worker.app import run_worker

    settings = settings_from(args, web_host=args.web_host, web_port=args.web_port,
                             data_dir=Path(args.data_dir) if args.data_dir else None)
    if settings.store == "rocksdb://":
        import rocksdict  # noqa: F401 - said before Faust starts, with the extra that brings it (`run`)
    return run_worker(settings, loglevel=args.loglevel)


def _cmd_receive(args: argparse.Namespace, host: Host) -> int:
    from streams.receiver import serve

    token = read_token(Path(args.token_file)) if args.token_file else None
    settings = settings_from(args, receiver_host=args.host, receiver_port=args.port, token=token)
    if settings.token is None or not settings.token.get_secret_value():
        raise StreamUsageError("the receiver needs a verification token: --token-file FILE or $SUNSET_TOKEN")
    serve(settings)
    return EXIT_OK


def _cmd_publish(args: argparse.Namespace, host: Host) -> int:
    from streams.kafka import publish_files

    if not args.file and not args.allowlist_snapshot:
        raise StreamUsageError("nothing to publish: give FILE and/or --allowlist-snapshot FILE")
    settings = settings_from(args)
    events = regular_file(Path(args.file)) if args.file else None
    snapshot = Path(args.allowlist_snapshot) if args.allowlist_snapshot else None
    sent = _with_broker(settings, lambda: publish_files(settings, events, snapshot))
    sys.stdout.write(f"published {sent} messages\n")
    return EXIT_OK


def _cmd_findings(args: argparse.Namespace, host: Host) -> int:
    from streams.kafka import run_findings

    def write(line: bytes) -> None:
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()

    settings = settings_from(args)
    _with_broker(settings, lambda: run_findings(settings, write, args.follow))  # SIGINT or SIGTERM ends --follow
    return EXIT_OK


def _with_broker(settings: StreamSettings, call: Callable[[], int]) -> int:
    """`call()`, with a Kafka client's failure said in one line (`BrokerError`); the clients' own
    log lines about it (one per connection attempt) are not shown. A connection error's own text
    only repeats the address, without its scheme (`user:password@host`, which no redactor can tell
    from other text): the line names the error's kind after the address, as the user gave it."""
    from aiokafka.errors import KafkaConnectionError, KafkaError

    logging.getLogger("aiokafka").setLevel(logging.CRITICAL)
    try:
        return call()
    except KafkaError as exc:
        detail = type(exc).__name__ if isinstance(exc, KafkaConnectionError) else str(exc)
        raise BrokerError(f"cannot reach the broker at {settings.broker} ({detail})") from None


def _cmd_dev(args: argparse.Namespace, host: Host) -> int:
    from streams.dev import run_dev

    load = regular_file(Path(args.load), "--load") if args.load else None
    return run_dev(args.port, args.web_port, args.broker_port, load)


EXTRAS = {"rocksdict": "rocksdb"}  # modules of an extra other than `stream` (which brings the rest)
Command = Callable[[argparse.Namespace, Host], int]
COMMANDS: dict[str, Command] = {"replay": _cmd_replay, "worker": _cmd_worker, "receive": _cmd_receive,
            "publish": _cmd_publish, "findings": _cmd_findings, "dev": _cmd_dev}


def run(args: argparse.Namespace, host: Host) -> int:
    """Run one `sunset stream` subcommand; usage problems exit 2 with one line on stderr, masked by
    `host.redact` (a file name or a broker URL the user gave may hold a secret)."""
    from streams.events import SnapshotError

    def say(message: str, prose: bool = False) -> int:
        line = host.redact(message.replace(os.linesep, " "), prose)
        sys.stderr.write(f"sunset stream {args.stream_command}: {line}\n")
        return EXIT_USAGE

    try:
        return COMMANDS[args.stream_command](args, host)
    except BrokenPipeError:  # `sunset stream replay | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error when Python flushes
        return EXIT_OK
    except BrokerError as exc:
        return say(str(exc))
    except ModuleNotFoundError as exc:
        extra = EXTRAS.get(exc.name or "", "stream")
        sys.stderr.write(f"sunset stream: {exc.name} is missing; install the extra: "
                         f"pip install 'gitlab-sunset[{extra}]'\n")
        return EXIT_USAGE
    except StreamUsageError as exc:  # a sentence of sunset's around the values it quotes
        return say(str(exc), prose=True)
    except (SnapshotError, ValidationError) as exc:
        return say(str(exc))
    # Any other error (an OSError no check foresaw, a bug) goes up to `sunset`'s own handler: one line, masked.
