"""Logger levels, every way: ``PUT /admin/loggers/{l}`` bodies read as Connect 4.4.0's ``LoggingResource``
reads them (log4j 2: the level trimmed and in any case, an empty one a 500), on workers that read them as
log4j 1 did before 4.0 (``domain/newer/logger_requests.py``); worker scope and cluster scope (KIP-976, emulated
before 3.7). Each way sets levels on loggers of its own; the level each shows is compared, not the time it
was set (``last_modified``)."""

from __future__ import annotations

from typing import Any

from tests.support.parity import Way, run_every_way

BODIES: list[tuple[str, Any]] = [
    ("no level", {}),
    ("another key", {"lvl": "DEBUG"}),
    ("a null level", {"level": None}),
    ("an empty level", {"level": ""}),
    ("blanks", {"level": "  "}),
    ("not a level", {"level": "NOTICE"}),
    ("a capital dotted I", {"level": "İNFO"}),
    ("a number", {"level": 5}),
    ("an array", []),
    ("null", None),
    ("an object value", {"level": {"x": 1}}),
]


async def refused_then_set(w: Way) -> None:
    worker_scope, cluster_scope = w.name("parity.loggers.w"), w.name("parity.loggers.c")
    for namespace, query in ((worker_scope, ""), (cluster_scope, "?scope=cluster")):
        for what, body in BODIES:
            await w.call("PUT", f"/admin/loggers/{namespace}{query}", json=body, label=f"PUT {query} {what}")
        await w.call("PUT", f"/admin/loggers/{namespace}{query}", json={"level": "\tdebug\n"}, label=f"PUT {query}")
        await w.until(
            f"/admin/loggers/{namespace}",
            lambda r: r.status_code == 200 and r.json()["level"] == "DEBUG",
            f"{namespace} at DEBUG",
        )
        shown = (await w.call("GET", f"/admin/loggers/{namespace}", record=False)).json()
        w.note(f"{query} level shown", {k: v for k, v in shown.items() if k != "last_modified"})
        listed = (await w.call("GET", "/admin/loggers", record=False)).json()
        w.note(f"{query} level listed", listed[namespace]["level"])


async def test_logger_levels_read_as_4_4_0_reads_them(ways: list[Way]) -> None:
    await run_every_way(ways, refused_then_set)
