"""`sunset instance worker` and `sunset instance publish`: the instance scan on the stream's Faust app
(docs/instance-scan.md, "Distributed").

`worker` runs `sunset stream worker`'s app with the instance scan added (`scanner.instance.distributed`:
the topic `<app id>-instance-projects`, the agent `instance-scan`, the table `instance-findings`, the
view `/instance-findings`). `publish` puts every project of a group on that topic, keyed by project id
(run it from cron for a periodic rescan). Broker, app id and partitions are the stream's settings
(`--broker`, `--profile`, `--partitions`, `SUNSET_*`). Faust and aiokafka load only when these run.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from scanner.core.exits import EXIT_OK, EXIT_USAGE, UsageError


def configure(sub: Any) -> None:
    inst = sub.add_parser("instance", help="the instance scan as work on the stream's Faust app (Kafka)")
    actions = inst.add_subparsers(dest="instance_command", required=True)
    worker = actions.add_parser("worker", help="a Faust worker that scans the projects put on the topic")
    publish = actions.add_parser("publish", help="put every project of a group on the topic")
    for parser in (worker, publish):
        parser.add_argument("--gitlab", metavar="URL", help="the GitLab instance (default: $CI_SERVER_URL)")
        parser.add_argument("--broker", help="kafka://host:port (default: $SUNSET_BROKER or kafka://localhost:9092)")
        parser.add_argument("--profile", choices=("production", "dev"),
                            help="dev: settings for the embedded single-node broker (default: production)")
        parser.add_argument("--partitions", type=int, help="partitions of the topic and table (default 8)")
    worker.add_argument("--ref", help="read every project at this ref (default: each project's default branch)")
    worker.add_argument("--fetch-remote", action="store_true", help="fetch `include: remote:` URLs")
    worker.add_argument("--cache-dir", metavar="DIR", help="file cache by blob id (default ~/.cache/sunset/blobs)")
    worker.add_argument("--target", help="the GitLab release you upgrade to (default: the newest any policy names)")
    worker.add_argument("--policies", action="append", metavar="DIR", help="also load policies from DIR")
    worker.add_argument("--web-host", help="bind address of the views (default 127.0.0.1)")
    worker.add_argument("--web-port", type=int, help="port of the views (default 6066)")
    worker.add_argument("--data-dir", help="Faust's data directory (default .sunset-stream)")
    worker.add_argument("--loglevel", default="warning", choices=("debug", "info", "warning", "error"))
    publish.add_argument("--group", required=True, metavar="PATH", help="the group (full path), subgroups included")
    publish.add_argument("--include-archived", action="store_true", help="also publish archived projects")
    inst.set_defaults(func=run)


def _gitlab(args: argparse.Namespace) -> tuple[str, str | None, str | None]:
    url = args.gitlab or os.environ.get("CI_SERVER_URL", "")
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"--gitlab: `{url}` is not an http(s) URL" if url else
                         "--gitlab URL is needed (inside a GitLab CI job, CI_SERVER_URL is used)")
    token = os.environ.get("SUNSET_GITLAB_TOKEN") or None
    return url, token, None if token else os.environ.get("CI_JOB_TOKEN") or None


def _worker(args: argparse.Namespace, settings: Any) -> int:
    from scanner.commands.instance import default_cache
    from scanner.commands.scan import default_target, load, release
    from scanner.core.versions import Version
    from scanner.engine.scan import ScanOptions
    from scanner.instance.distributed import Worker, register
    from scanner.instance.run import InstanceOptions
    from streams.worker.app import run_worker

    url, token, job_token = _gitlab(args)
    policies = load(args.policies)
    try:
        target = Version.parse(release(args.target or default_target(policies)))
    except ValueError as exc:
        raise UsageError(f"--target: {exc}") from None
    inst = InstanceOptions(url, "", token=token, job_token=job_token, ref=args.ref, fetch_remote=args.fetch_remote,
                           cache_dir=Path(args.cache_dir) if args.cache_dir else default_cache())
    worker = Worker(policies, ScanOptions(target=target), inst)
    return run_worker(settings, args.loglevel, extend=lambda app: register(app, worker, settings.partitions))


def _publish(args: argparse.Namespace, settings: Any) -> int:
    import asyncio

    from scanner.instance.api import Api, ApiError
    from scanner.instance.distributed import feed, topic_name

    url, token, job_token = _gitlab(args)
    try:
        messages = list(feed(Api(url, token, job_token), args.group.strip("/"), args.include_archived))
    except ApiError as exc:
        raise UsageError(f"--gitlab: {exc}") from None
    asyncio.run(_send(settings, topic_name(settings.app_id), messages))
    sys.stdout.write(f"published {len(messages)} projects to {topic_name(settings.app_id)}\n")
    return EXIT_OK


async def _send(settings: Any, topic: str, messages: list[tuple[bytes, bytes]]) -> None:
    """Create the topic as the worker would (the stream's partitions), then send and wait for the
    broker; every client with the stream's Kafka security settings (TLS, SASL)."""
    import asyncio

    from streams.kafka import ensure_topics, new_producer

    await ensure_topics(settings, [topic])
    producer = new_producer(settings)
    await producer.start()
    try:
        await asyncio.gather(*[await producer.send(topic, value, key=key) for key, value in messages])
    finally:
        await producer.stop()


def run(args: argparse.Namespace) -> int:
    try:
        from streams.commands import settings_from
    except ModuleNotFoundError as exc:
        sys.stderr.write(f"sunset instance: {exc.name} is missing; install the extra: "
                         "pip install 'gitlab-sunset[stream]'\n")
        return EXIT_USAGE
    extra = {"web_host": args.web_host, "web_port": args.web_port,
             "data_dir": Path(args.data_dir) if args.data_dir else None} if args.instance_command == "worker" else {}
    try:
        settings = settings_from(args, **extra)
    except ValueError as exc:  # pydantic's ValidationError: a bad --partitions or SUNSET_* value
        raise UsageError(str(exc).replace(os.linesep, " ")) from None
    return (_worker if args.instance_command == "worker" else _publish)(args, settings)
