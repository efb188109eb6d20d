"""Bench (by hand) of `sunset scan --gitlab`: N projects on the GitLab stand-in, sharing template
projects and a versioned component, with a fixed latency per request; a cold run (empty blob cache)
then a warm one (same cache). Prints projects/s and the scan process's peak RSS for each.

    .venv/bin/python bench/instance.py --projects 500
    .venv/bin/python bench/instance.py --projects 10000 --latency 0.02

The stand-in runs in its own process so the numbers are the scan's alone. Each scan runs in a fresh
child process (`--child`), which reports its own wall time and peak RSS.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

CS = 'variables:\n  CS_DISABLE_DEPENDENCY_LIST: "true"\n'
LICENSE = "spec:\n  inputs: {}\n---\nlicense:\n  script: [scan]\n  artifacts:\n    reports:\n" \
          "      license_scanning: gl-license-scanning-report.json\n"


def build(projects: int, templates: int, latency: float) -> object:
    from gitlab_standin import Instance

    inst = Instance(latency=latency)
    for t in range(templates):
        inst.add(f"bench/shared/tpl-{t}", {"build.yml": f"# template {t}\n" + CS + "build:\n  script: [make]\n",
                                           "deploy.yml": f"# template {t}\ndeploy:\n  script: [ship]\n"})
    inst.add("bench/shared/components", refs={"main": {}, "1.0.0": {"templates/scan.yml": LICENSE},
                                              "1.1.0": {"templates/scan.yml": LICENSE + "# 1.1\n"}},
             releases=["1.0.0", "1.1.0"])
    for i in range(projects):
        t = i % templates
        ci = (f"include:\n  - project: bench/shared/tpl-{t}\n    file: [build.yml, deploy.yml]\n"
              + ("  - component: $CI_SERVER_FQDN/bench/shared/components/scan@~latest\n" if i % 3 == 0 else "")
              + ("  - local: ci/test.yml\n" if i % 2 == 0 else "")
              + f"app-{i}:\n  script: [echo {i}]\n")
        files = {".gitlab-ci.yml": ci}
        if i % 2 == 0:
            files["ci/test.yml"] = f'test-{i}:\n  variables:\n    DAST_USE_AJAX_SPIDER: "true"\n  script: [t]\n'
        inst.add(f"bench/apps/g{i // 100}/app-{i:05d}", files)
    return inst


def serve(projects: int, templates: int, latency: float, port: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    from gitlab_standin import StandIn

    server = StandIn(build(projects, templates, latency))  # type: ignore[arg-type]
    port.put(server.url)
    server.server.serve_forever()


def child(url: str, cache: str, concurrency: int) -> None:
    """One scan, in this process; prints its numbers as JSON."""
    from gitlab_standin import TOKEN

    from scanner.commands.scan import default_target, load
    from scanner.core.versions import Version
    from scanner.engine.scan import ScanOptions
    from scanner.instance.run import InstanceOptions, Stats, scan_instance

    policies = load(None)
    stats = Stats()
    start = time.perf_counter()
    report = scan_instance(policies, ScanOptions(target=Version.parse(default_target(policies))),
                           InstanceOptions(url, "bench", token=TOKEN, concurrency=concurrency,
                                           cache_dir=Path(cache)), stats)
    seconds = time.perf_counter() - start
    print(json.dumps({"seconds": seconds, "projects": stats.projects, "findings": len(report.findings),
                      "errors": len(report.errors), "downloads": stats.downloads, "cache_hits": stats.cache_hits,
                      "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--projects", type=int, default=500)
    ap.add_argument("--templates", type=int, default=5)
    ap.add_argument("--latency", type=float, default=0.02)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--child", nargs=2, metavar=("URL", "CACHE"))
    args = ap.parse_args()
    if args.child:
        child(args.child[0], args.child[1], args.concurrency)
        return
    queue: multiprocessing.Queue = multiprocessing.Queue()  # type: ignore[type-arg]
    server = multiprocessing.Process(target=serve, args=(args.projects, args.templates, args.latency, queue),
                                     daemon=True)
    server.start()
    url = queue.get(timeout=120)
    print(f"# {os.cpu_count()} CPU, load {os.getloadavg()[0]:.2f}, Python {platform.python_version()}; "
          f"{args.projects} projects, {args.templates} template projects + 1 component, "
          f"{args.latency * 1000:.0f} ms per request, concurrency {args.concurrency}")
    with tempfile.TemporaryDirectory() as cache:
        for label in ("cold cache", "warm cache"):
            out = subprocess.run([sys.executable, __file__, "--concurrency", str(args.concurrency), "--child", url,
                                  cache], capture_output=True, text=True, check=True, cwd=ROOT)
            r = json.loads(out.stdout)
            print(f"{label}: {r['projects']} projects in {r['seconds']:.1f} s = "
                  f"{r['projects'] / r['seconds']:.1f} projects/s; peak RSS {r['peak_rss_mib']:.0f} MiB; "
                  f"{r['downloads']} blobs downloaded, {r['cache_hits']} from the cache; "
                  f"{r['findings']} findings, {r['errors']} errors")
    server.terminate()


if __name__ == "__main__":
    main()
