"""The long form of the fault campaign (``make chaos``): ``python -m tests.chaos --duration-s 600 --seed 1``,
once per Connect release given (the newest and the old one by default); a summary per release on stdout,
the histories as JSON under ``--out``, and with a violation the processes' logs beside them (the broker's,
the worker's, each sidecar's); exit status 1 when any check found a violation."""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
from pathlib import Path

from tests.support.deploy_local import local_stack
from tests.support.paths import ROOT

from .campaign import Plan, run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.chaos", description=__doc__)
    parser.add_argument("--versions", nargs="+", default=[local_stack.NEW_VERSION, local_stack.OLD_VERSION])
    parser.add_argument("--duration-s", type=float, default=600.0, help="how long faults and workload run, per release")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "chaos")
    args = parser.parse_args(argv)
    failed = False
    for version in args.versions:
        with tempfile.TemporaryDirectory(prefix=f"chaos-{version}-") as home:
            plan = Plan(version, args.duration_s, args.seed, Path(home), clients=args.clients)
            result = asyncio.run(run(plan))
            if result.violations:
                logs = args.out / f"logs-{version}-{args.seed}"
                shutil.rmtree(logs, ignore_errors=True)
                shutil.copytree(home, logs, ignore=shutil.ignore_patterns("*.jar"))
                print(f"logs: {logs}", file=sys.stderr)
        print(result.report())
        print(f"history: {result.save(args.out)}", file=sys.stderr)
        failed = failed or bool(result.violations)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
