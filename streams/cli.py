"""`sunset stream …`: the argument parser only.

This module is imported by `sunset`'s parser on every run, so it imports nothing but argparse;
Faust, aiokafka and aiohttp are imported by `streams.commands` when a stream command runs.

The program that registers the commands (`scanner.cli`) lends them its redactor and file writer
(`streams.host.Host`), so their errors are masked and their files written as `sunset scan`'s are.
"""

from __future__ import annotations

import argparse
import functools
import sys
from typing import Any

from streams.host import Host

PROFILES = ("production", "dev")


def _detector_options(parser: argparse.ArgumentParser) -> None:
    """Flags for `streams.settings.DetectorSettings` fields; each flag's destination is its field's name."""
    parser.add_argument("--mass-download-projects", type=int, metavar="N", help="alert above N distinct projects")
    parser.add_argument("--mass-download-window", type=float, metavar="SECONDS", help="… within this window")
    parser.add_argument("--mass-download-allow", action="append", metavar="USER", dest="mass_download_allowlist",
                        help="user id or name never alerted (repeatable)")
    parser.add_argument("--correlation-window", type=float, metavar="SECONDS",
                        help="job-token login to access, at most (default 5)")
    parser.add_argument("--allowed-lateness", type=float, metavar="SECONDS",
                        help="event time an event may arrive behind the watermark and still be applied in order "
                             "(default 60)")


def _broker_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--broker", help="kafka://host:port (default: $SUNSET_BROKER or kafka://localhost:9092)")
    parser.add_argument("--profile", choices=PROFILES,
                        help="dev: settings for the embedded single-node broker (default: production)")
    parser.add_argument("--partitions", type=int, help="partitions of the internal topics (default 8)")


def register(sub: Any, host: Host) -> None:
    """Add `stream` and its subcommands to sunset's subparsers; they run with `host`'s redactor and writer."""
    stream = sub.add_parser("stream", help="the GitLab audit-event stream processor (Faust on Kafka)")
    actions = stream.add_subparsers(dest="stream_command", required=True)

    replay = actions.add_parser("replay", help="run the detectors offline over a JSONL file")
    replay.add_argument("file", help="one audit event, or a JSON array of them, per line (`-`: standard input)")
    replay.add_argument("--format", choices=("text", "json"), default="text",
                        help="text (the default, as for `sunset scan`): a summary to read; json: the document, "
                             "the contract for scripts")
    replay.add_argument("--allowlist-snapshot", metavar="FILE", help="job-token allowlists from the REST API")
    replay.add_argument("--output", "-o", help="write the document to FILE instead of stdout")
    _detector_options(replay)

    _kafka_commands(actions)
    stream.set_defaults(func=functools.partial(_run, host))


def _kafka_commands(actions: Any) -> None:
    """The subcommands that talk to Kafka."""
    worker = actions.add_parser("worker", help="the Faust worker: detectors over the Kafka topics")
    _broker_options(worker)
    _detector_options(worker)
    worker.add_argument("--web-host", help="bind address of the views (default 127.0.0.1)")
    worker.add_argument("--web-port", type=int, help="port of the views (default 6066)")
    worker.add_argument("--data-dir", help="Faust's data directory (default .sunset-stream)")
    worker.add_argument("--loglevel", default="warning", choices=("debug", "info", "warning", "error"))

    receive = actions.add_parser("receive", help="the HTTP receiver for GitLab's audit-event streaming")
    _broker_options(receive)
    receive.add_argument("--host", help="bind address (default 127.0.0.1)")
    receive.add_argument("--port", type=int, help="port (default 8080)")
    receive.add_argument("--token-file", help="file holding the verification token (or set $SUNSET_TOKEN)")

    publish = actions.add_parser("publish", help="send a JSONL file (and an allowlist snapshot) to the input topic")
    publish.add_argument("file", nargs="?", help="one audit event, or a JSON array of them, per line")
    publish.add_argument("--allowlist-snapshot", metavar="FILE", help="job-token allowlists from the REST API")
    _broker_options(publish)

    findings = actions.add_parser("findings", help="the findings topic: each finding's latest state, a JSON line each")
    findings.add_argument("--follow", "-f", action="store_true", help="then print each new state as it is published")
    _broker_options(findings)

    dev = actions.add_parser("dev", help="embedded broker + worker + receiver on 127.0.0.1, no Kafka needed")
    dev.add_argument("--port", type=int, default=8080, help="receiver port (default 8080)")
    dev.add_argument("--web-port", type=int, default=6066, help="worker views port (default 6066)")
    dev.add_argument("--broker-port", type=int, default=0, help="broker port (default: a free one)")
    dev.add_argument("--load", metavar="FILE", help="publish this JSONL file, then start the worker")


def _run(host: Host, args: argparse.Namespace) -> int:
    try:
        from streams import commands
    except ModuleNotFoundError as exc:
        sys.stderr.write(f"sunset stream: {exc.name} is missing; install the extra: "
                         "pip install 'gitlab-sunset[stream]'\n")
        return 2
    return commands.run(args, host)
