"""``control-plane bulk ACTION --SELECTOR...``: a client of a sidecar's ``POST /_sidecar/bulk``
(``domain.bulk``): one action on every connector the selector picks, or with ``--dry-run`` the list of
them. Prints a line per connector (``=`` selected, ``+`` done, ``!`` refused or failed, with Connect's
message) and the counts; ``--output json`` prints the answer as the sidecar gives it.

Actions: ``pause``, ``resume``, ``stop``, ``restart`` (``--include-tasks``, ``--only-failed``), ``delete``,
``auto-restart-on``, ``auto-restart-off``. Selector (every option given holds; a repeated one holds when
any of its values does): ``--name``, ``--pattern`` (the whole name), ``--state``, ``--task-state``,
``--class``, ``--type``, ``--topic``.

The sidecar: ``--url`` and ``--token`` as ``plan`` takes them. Exit status: 0 every connector done (or
listed, in a dry run), 1 the sidecar refused the request or some connector was refused or failed, 2 bad
input.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from .plan_cli import add_connection_arguments, posted

ACTIONS = ("pause", "resume", "stop", "restart", "delete", "auto-restart-on", "auto-restart-off")
MARKS = {"selected": "=", "done": "+", "refused": "!", "failed": "!"}
# option -> the selector's key, and whether it is a list
SELECTOR_OPTIONS = {
    "name": ("names", True),
    "pattern": ("pattern", False),
    "state": ("states", True),
    "task_state": ("task_states", True),
    "connector_class": ("classes", True),
    "type": ("types", True),
    "topic": ("topic", False),
}


def add_arguments(sub: Any) -> None:
    bulk = sub.add_parser("bulk", help="one action on every connector a selector picks (POST /_sidecar/bulk)")
    bulk.add_argument("action", choices=ACTIONS)
    bulk.add_argument("--name", action="append", help="a connector's name (repeatable)")
    bulk.add_argument("--pattern", help="a regular expression the whole name matches")
    bulk.add_argument("--state", action="append", help="the connector's state, e.g. FAILED (repeatable)")
    bulk.add_argument("--task-state", action="append", help="any of its tasks in this state (repeatable)")
    bulk.add_argument("--class", dest="connector_class", action="append", help="connector.class or its simple name")
    bulk.add_argument("--type", action="append", choices=["source", "sink"])
    bulk.add_argument("--topic", help="a topic the connector reads or writes")
    bulk.add_argument("--dry-run", action="store_true", help="list what would be acted on, act on nothing")
    bulk.add_argument("--include-tasks", action="store_true", help="restart: also the tasks")
    bulk.add_argument("--only-failed", action="store_true", help="restart: only failed instances")
    add_connection_arguments(bulk)


def body_of(args: argparse.Namespace) -> dict[str, Any]:
    selector = {
        key: getattr(args, option) for option, (key, _) in SELECTOR_OPTIONS.items() if getattr(args, option) is not None
    }
    body: dict[str, Any] = {"action": args.action, "selector": selector, "dry_run": args.dry_run}
    if args.include_tasks or args.only_failed:
        body.update(include_tasks=args.include_tasks, only_failed=args.only_failed)
    return body


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    body = body_of(args)
    if not body["selector"]:
        print("control-plane bulk: give a selector (--pattern '.*' for every connector)", file=sys.stderr)
        return 2
    result = posted(args, "/_sidecar/bulk", body)
    if result is None:
        return 1
    print(json.dumps(result, indent=2) if args.output == "json" else render_bulk(result), file=out)
    counts = result.get("counts", {})
    return 1 if counts.get("refused") or counts.get("failed") else 0


def render_bulk(result: dict[str, Any]) -> str:
    lines = []
    for item in result["connectors"]:
        line = f"{MARKS[item['result']]} {item['name']} ({item['result']}"
        line += f" {item['status']})" if "status" in item and item["status"] is not None else ")"
        if item.get("error"):
            line += f": {item['error'].get('message')}"
        lines.append(line)
    counts = result["counts"]
    what = "would be acted on (dry run)" if result["dry_run"] else f"{counts['done']} done"
    lines.append(
        f"Bulk {result['action']}: {counts['selected']} selected, {what}, {counts['refused']} refused, "
        f"{counts['failed']} failed."
    )
    return "\n".join(lines)


__all__ = ["add_arguments", "body_of", "render_bulk", "run"]
