"""``control-plane plan -f PATH`` and ``control-plane apply PLAN``: a client of a sidecar's ``POST
/_sidecar/plan`` and ``POST /_sidecar/apply`` (``domain.plan``).

- ``plan -f PATH`` (a file or a folder of ``.json``, ``.yaml``, ``.yml`` files, each a connector or a list)
  prints the plan: per connector ``+`` create, ``~`` update, ``-`` delete (only with ``--prune``), ``=``
  unchanged, and each key's change (coloured when the terminal supports it and ``NO_COLOR`` is unset);
  ``--out FILE`` keeps the plan for ``apply``; ``--output json`` prints it as the sidecar answers it.
- ``apply PLAN`` carries out a plan ``plan --out`` kept (``-`` reads stdin); refused when the cluster
  changed since (409): make a new plan. ``--concurrency N`` steps at once, retried while the workers
  rebalance until ``--deadline-s``; ``--continue-on-error`` carries on after a step fails. It prints what
  was applied, what failed (Connect's error) and what was not tried; on a terminal, a counter of the steps
  the config topic already shows (``plan_progress``).

The sidecar: ``--url`` (default ``CONTROL_PLANE_URL``, else ``http://localhost:8084``); a bearer token with
``--token`` or ``CONTROL_PLANE_TOKEN``. Exit status: 0 done, 1 the sidecar refused (its message printed) or
a step failed or was not tried, 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, TextIO

import httpx

from . import plan_progress as progress
from .plan_files import FileError, documents_of_file, files_of

DEFAULT_URL = "http://localhost:8084"
DEFAULT_DEADLINE_S = 600.0  # the sidecar's apply_deadline_s by default
MARKS = {"create": "+", "update": "~", "delete": "-", "unchanged": "="}
DONE = {"create": "created", "update": "updated", "delete": "deleted"}
COLOURS = {"create": "32", "update": "33", "delete": "31", "unchanged": "2"}


def documents_of(path: Path) -> list[dict[str, Any]]:
    """Each document of each file under ``path`` (or of ``path`` itself), its scalars as the file writes
    them (``plan_files``), with the file's name as the source."""
    return [
        {"source": str(file), "document": document} for file in files_of(path) for document in documents_of_file(file)
    ]


def add_arguments(sub: Any) -> None:
    plan = sub.add_parser("plan", help="what the cluster needs to run the connectors of files (POST /_sidecar/plan)")
    plan.add_argument("-f", "--filename", required=True, type=Path, help="a file or folder of connectors")
    plan.add_argument("--prune", action="store_true", help="delete the connectors no file names")
    plan.add_argument("--prune-matching", default=".*", help="prune only the connectors whose whole name this matches")
    plan.add_argument("--out", type=Path, help="keep the plan in this file, for apply")
    apply = sub.add_parser("apply", help="carry out a plan kept by plan --out (POST /_sidecar/apply)")
    apply.add_argument("plan", help="the plan's file, or - for stdin")
    apply.add_argument("--concurrency", type=int, help="steps carried out at once (default: the sidecar's setting)")
    apply.add_argument("--deadline-s", type=float, help="how long the apply may retry (default: the sidecar's)")
    apply.add_argument("--continue-on-error", action="store_true", help="carry on with the other steps after one fails")
    for each in (plan, apply):
        add_connection_arguments(each, timeout_s=120.0 if each is plan else None)


def add_connection_arguments(parser: Any, timeout_s: float | None = 120.0) -> None:
    """The sidecar to ask and how, and how to print its answer: every client command takes these
    (``timeout_s`` None: the command works out its own default)."""
    parser.add_argument("--url", default=os.environ.get("CONTROL_PLANE_URL", DEFAULT_URL), help="the sidecar")
    parser.add_argument("--token", default=os.environ.get("CONTROL_PLANE_TOKEN"), help="a bearer token")
    parser.add_argument("--output", choices=["text", "json"], default="text")
    parser.add_argument("--timeout-s", type=float, default=timeout_s, help="how long to wait for the answer")


def posted(args: argparse.Namespace, path: str, body: Any) -> dict[str, Any] | None:
    """``body`` posted to the sidecar's ``path``: its JSON answer, or None once the failure is printed
    (the sidecar unreachable, or its answer not a 200 with a JSON object)."""
    headers = {"authorization": f"Bearer {args.token}"} if args.token else {}
    try:
        answer = httpx.post(f"{args.url.rstrip('/')}{path}", json=body, headers=headers, timeout=args.timeout_s)
    except httpx.HTTPError as err:
        print(f"control-plane {args.command}: {args.url}: {err}", file=sys.stderr)
        return None
    result = answer.json() if answer.headers.get("content-type", "").startswith("application/json") else None
    if answer.status_code != 200 or not isinstance(result, dict):
        message = result.get("message") if isinstance(result, dict) else answer.text
        print(f"control-plane {args.command}: {answer.status_code}: {message}", file=sys.stderr)
        return None
    return result


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    try:
        if args.command == "plan":
            body: Any = {
                "documents": documents_of(args.filename),
                "prune": args.prune,
                "prune_matching": args.prune_matching,
            }
        else:
            text = sys.stdin.read() if args.plan == "-" else Path(args.plan).read_text()
            body = json.loads(text)
            if not isinstance(body, dict):
                raise ValueError("a plan is a JSON object, as plan --out keeps it")
            body.update(apply_options(args))
    except (FileError, OSError, ValueError) as err:
        print(f"control-plane {args.command}: {err}", file=sys.stderr)
        return 2
    headers = {"authorization": f"Bearer {args.token}"} if args.token else {}
    timeout = args.timeout_s if args.timeout_s is not None else (args.deadline_s or DEFAULT_DEADLINE_S) + 60
    shown = progress.shown(body, args.url, headers) if args.command == "apply" and sys.stderr.isatty() else None
    try:
        answer = httpx.post(
            f"{args.url.rstrip('/')}/_sidecar/{args.command}", json=body, headers=headers, timeout=timeout
        )
    except httpx.HTTPError as err:
        print(f"control-plane {args.command}: {args.url}: {err}", file=sys.stderr)
        return 1
    finally:
        if shown is not None:
            shown.stop()
    result = answer.json() if answer.headers.get("content-type", "").startswith("application/json") else None
    if args.command == "apply" and isinstance(result, dict) and "applied" in result:
        # an apply that ran: what was applied, what failed and what was not tried, whatever its status
        print(json.dumps(result, indent=2) if args.output == "json" else render_apply(result), file=out)
        return 0 if answer.status_code == 200 else 1
    if answer.status_code != 200 or not isinstance(result, dict):
        message = result.get("message") if isinstance(result, dict) else answer.text
        print(f"control-plane {args.command}: {answer.status_code}: {message}", file=sys.stderr)
        return 1
    if args.command == "plan" and args.out is not None:
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    if args.output == "json":
        print(json.dumps(result, indent=2), file=out)
    else:
        print(render_plan(result, colour=colour_for(out)), file=out)
    return 0


def apply_options(args: argparse.Namespace) -> dict[str, Any]:
    """The apply's options as the body carries them beside the plan (only those given)."""
    options: dict[str, Any] = {"continue_on_error": args.continue_on_error}
    if args.concurrency is not None:
        options["concurrency"] = args.concurrency
    if args.deadline_s is not None:
        options["deadline_s"] = args.deadline_s
    return options


def colour_for(out: TextIO) -> bool:
    return out.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


def render_plan(plan: dict[str, Any], *, colour: bool = False) -> str:
    """A plan as a person reads it at a glance: one line per connector, one per key changed."""

    def paint(code: str, text: str) -> str:
        return f"\033[{code}m{text}\033[0m" if colour else text

    lines = []
    unchanged = [step["name"] for step in plan["connectors"] if step["action"] == "unchanged"]
    for step in plan["connectors"]:
        action = step["action"]
        if action == "unchanged":  # listed together below: a plan over hundreds stays readable
            continue
        lines.append(paint(COLOURS[action], f"{MARKS[action]} {step['name']} ({action})"))
        for change in step["changes"] if action != "unchanged" else []:
            name, op = change["name"], change["op"]
            if op == "added":
                lines.append(paint("32", f"    + {name} = {change['after']}"))
            elif op == "removed":
                lines.append(paint("31", f"    - {name} = {change['before']}"))
            else:
                lines.append(paint("33", f"    ~ {name}: {change['before']} -> {change['after']}"))
        topics = step.get("topics") or {}
        for topic in topics.get("topics", []) if topics.get("creates_topics") else []:
            made = topic.get("created_with")
            if made is not None and not topic.get("exists"):
                shape = f"{made['partitions']} partition(s), replication factor {made['replication_factor']}"
                lines.append(f"    creates topic {topic['topic']} ({shape})")
        for plugin in (step.get("plugins") or {}).get("plugins", []):
            if plugin.get("requested"):
                chosen = plugin.get("selected") or plugin.get("error") or "?"
                lines.append(f"    {plugin['version_key']} {plugin['requested']} -> {chosen}")
        for error in step.get("errors") or []:
            lines.append(paint("31;1", f"    ! {error}"))
    if unchanged:
        lines.append(paint(COLOURS["unchanged"], f"= {len(unchanged)} unchanged: {', '.join(unchanged)}"))
    summary = plan["summary"]
    lines.append(
        f"Plan: {summary['create']} to create, {summary['update']} to update, {summary['delete']} to delete, "
        f"{summary['unchanged']} unchanged."
    )
    if any(step.get("errors") for step in plan["connectors"]):
        lines.append(paint("31;1", "The worker finds some configs invalid: apply will refuse this plan."))
    return "\n".join(lines)


def render_apply(result: dict[str, Any]) -> str:
    """What an apply did: a line per step applied, one per step failed with Connect's error, the steps not
    tried on one line, then the counts."""
    done, failed, left = result["applied"], result.get("failed", []), result.get("not_tried", [])
    lines = [f"{MARKS[d['action']]} {d['name']} ({DONE[d['action']]})" for d in done]
    for f in failed:
        lines.append(f"! {f['name']} ({f['action']} failed: {f['error_code']} {f['message']})")
    if left:
        lines.append(f"Not tried: {len(left)}: {', '.join(d['name'] for d in left)}")
    if failed or left:
        lines.append(f"Applied: {len(done)} change(s); {len(failed)} failed; {len(left)} not tried.")
    else:
        lines.append(f"Applied: {len(done)} change(s).")
    return "\n".join(lines)


__all__ = ["add_arguments", "add_connection_arguments", "documents_of", "posted", "render_apply", "render_plan", "run"]
