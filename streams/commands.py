"""What `sunset stream …` runs. Heavy imports (Faust, aiokafka, aiohttp) happen per command."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from streams.settings import DetectorSettings, StreamSettings, load_settings

EXIT_OK, EXIT_USAGE = 0, 2


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


def _cmd_replay(args: argparse.Namespace) -> int:
    from streams.events import load_snapshot
    from streams.replay import bounded_lines, replay_file, replay_lines, write_json, write_text

    overrides = {k: v for k, v in _detector_overrides(args).items() if v is not None}
    limits = DetectorSettings(**overrides)
    path = Path(args.file)
    if args.file != "-" and not path.is_file():
        raise StreamUsageError(f"{path}: no such file")
    seed = load_snapshot(Path(args.allowlist_snapshot)) if args.allowlist_snapshot else []
    if args.file == "-":
        doc = replay_lines(bounded_lines(sys.stdin.buffer), limits, seed)
    else:
        doc = replay_file(path, limits, seed)
    write = write_json if args.format == "json" else write_text
    if args.output:
        with open(args.output, "w", encoding="utf-8") as out:
            write(doc, out)
    else:
        write(doc, sys.stdout)
    return EXIT_OK


def _cmd_worker(args: argparse.Namespace) -> int:
    from streams.worker.app import run_worker

    settings = settings_from(args, web_host=args.web_host, web_port=args.web_port,
                             data_dir=Path(args.data_dir) if args.data_dir else None)
    if settings.store == "rocksdb://":
        import rocksdict  # noqa: F401 - said before Faust starts, with the extra that brings it (`run`)
    return run_worker(settings, loglevel=args.loglevel)


def _cmd_receive(args: argparse.Namespace) -> int:
    from streams.receiver import serve

    token = Path(args.token_file).read_text(encoding="utf-8").strip() if args.token_file else None
    settings = settings_from(args, receiver_host=args.host, receiver_port=args.port, token=token)
    if settings.token is None or not settings.token.get_secret_value():
        raise StreamUsageError("the receiver needs a verification token: --token-file FILE or $SUNSET_TOKEN")
    serve(settings)
    return EXIT_OK


def _cmd_publish(args: argparse.Namespace) -> int:
    from streams.kafka import publish_files

    if not args.file and not args.allowlist_snapshot:
        raise StreamUsageError("nothing to publish: give FILE and/or --allowlist-snapshot FILE")
    settings = settings_from(args)
    events = Path(args.file) if args.file else None
    snapshot = Path(args.allowlist_snapshot) if args.allowlist_snapshot else None
    sent = _with_broker(settings, lambda: publish_files(settings, events, snapshot))
    sys.stdout.write(f"published {sent} messages\n")
    return EXIT_OK


def _cmd_findings(args: argparse.Namespace) -> int:
    from streams.kafka import run_findings

    def write(line: bytes) -> None:
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()

    settings = settings_from(args)
    _with_broker(settings, lambda: run_findings(settings, write, args.follow))  # SIGINT or SIGTERM ends --follow
    return EXIT_OK


def _with_broker(settings: StreamSettings, call: Callable[[], int]) -> int:
    """`call()`, with a Kafka client's failure said in one line (`BrokerError`); the clients' own
    log lines about it (one per connection attempt) are not shown."""
    from aiokafka.errors import KafkaError

    logging.getLogger("aiokafka").setLevel(logging.CRITICAL)
    try:
        return call()
    except KafkaError as exc:
        raise BrokerError(f"cannot reach the broker at {settings.broker} ({exc})") from None


def _cmd_dev(args: argparse.Namespace) -> int:
    from streams.dev import run_dev

    return run_dev(args.port, args.web_port, args.broker_port, Path(args.load) if args.load else None)


EXTRAS = {"rocksdict": "rocksdb"}  # modules of an extra other than `stream` (which brings the rest)
COMMANDS = {"replay": _cmd_replay, "worker": _cmd_worker, "receive": _cmd_receive,
            "publish": _cmd_publish, "findings": _cmd_findings, "dev": _cmd_dev}


def run(args: argparse.Namespace) -> int:
    """Run one `sunset stream` subcommand; usage problems exit 2 with one line on stderr."""
    from streams.events import SnapshotError

    try:
        return COMMANDS[args.stream_command](args)
    except BrokenPipeError:  # `sunset stream replay | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error when Python flushes
        return EXIT_OK
    except BrokerError as exc:
        sys.stderr.write(f"sunset stream {args.stream_command}: {exc}\n")
        return EXIT_USAGE
    except ModuleNotFoundError as exc:
        extra = EXTRAS.get(exc.name or "", "stream")
        sys.stderr.write(f"sunset stream: {exc.name} is missing; install the extra: "
                         f"pip install 'gitlab-sunset[{extra}]'\n")
        return EXIT_USAGE
    except (StreamUsageError, SnapshotError, ValidationError, OSError) as exc:
        message = str(exc).replace(os.linesep, " ")
        sys.stderr.write(f"sunset stream {args.stream_command}: {message}\n")
        return EXIT_USAGE
