"""Acknowledged means done, every way: a FileStreamSource whose file keeps growing while it is stopped,
altered, reset and resumed. An alter or reset sent right after the stop holds (the tasks' last offset
commits land before it, never after: on 3.5+ the request waits behind the rebalance that stops them,
the sidecar waits for them to stop before 3.5), and the records produced after the resume begin exactly
where the offsets say, one line after the other (read from the topic)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.support.parity import Way, appending, line, position_of, replay, run_every_way

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
ALTERED_TO = 500  # the line an alter sends the source back to

pytestmark = pytest.mark.timeout(300)


async def busy_source(w: Way, base: str) -> tuple[str, str, Any]:
    name, topic = w.connector(base), w.name(f"{base}-lines")
    source = w.home / f"{base}.txt"
    config = {"connector.class": FILE_SOURCE, "tasks.max": "1", "file": str(source), "topic": topic}
    return name, topic, (source, config)


def reset_read_back(answer: httpx.Response) -> bool:
    """A read that lists no partition with a null offset (once the worker consumed the reset's tombstone)."""
    listed = answer.json().get("offsets") if answer.status_code == 200 else None
    return isinstance(listed, list) and all(e.get("offset") is not None for e in listed)


async def stopped_busy(w: Way, base: str, change: str) -> None:
    """Create, let it read, stop; at once ``change`` the offsets (alter, reset, or none); resume; the
    records after the resume start where the offsets say and follow each other."""
    name, topic, (source, config) = await busy_source(w, base)
    async with appending(source):
        await w.call("PUT", w.path(name, "/config"), json=config)
        await w.until_states(name, "RUNNING", ["RUNNING"])
        await w.values_at_least(topic, 1000)  # the first lines are read; more keep coming

        await w.call("PUT", w.path(name, "/stop"))
        partition = {"filename": str(source)}
        if change == "alter":
            body = {"offsets": [{"partition": partition, "offset": {"position": position_of(ALTERED_TO)}}]}
            await w.call("PATCH", w.path(name, "/offsets"), json=body, label="PATCH right after the stop")
            await w.call("GET", w.path(name, "/offsets"))
        elif change == "reset":
            await w.call("DELETE", w.path(name, "/offsets"), label="DELETE right after the stop")
            # a 4.3.1 worker may list the reset partition with a null offset for a moment, as it does for a
            # key it cannot find: Worker.sourceConnectorOffsets takes the partitions it knows before its
            # reader reads the offsets topic to its end (the sidecar on 4.3.1 forwards the worker's answer)
            await w.until(w.path(name, "/offsets"), reset_read_back, "the reset partition no longer listed")
            await w.call("GET", w.path(name, "/offsets"))
        await w.until_states(name, "STOPPED", [])
        if change != "none":  # no late commit of a stopping task replaced the new offsets
            await w.call("GET", w.path(name, "/offsets"), label="GET offsets once stopped")
        before = await w.values(topic)  # the tasks are down: nothing more comes until the resume

        await w.call("PUT", w.path(name, "/resume"))
        await w.until_states(name, "RUNNING", ["RUNNING"])
        values = await w.values_at_least(topic, len(before) + 500)
    after = replay(values, len(before))
    if change == "none":  # it goes on one line after the last it produced, nothing replayed or lost
        after["follows"] = after["first_line"] == int(before[-1].split()[1]) + 1
        after["first_line"] = "<next>"
    w.note("records after the resume", after)
    w.note("records before the stop", replay(before, 0))
    await w.call("DELETE", w.path(name))


async def test_an_alter_right_after_stopping_a_busy_source_holds_and_the_source_resumes_from_it(
    ways: list[Way],
) -> None:
    async def scenario(w: Way) -> None:
        await stopped_busy(w, "busy-alter", "alter")

    await run_every_way(ways, scenario)


async def test_a_reset_right_after_stopping_a_busy_source_holds_and_the_source_starts_over(ways: list[Way]) -> None:
    async def scenario(w: Way) -> None:
        await stopped_busy(w, "busy-reset", "reset")

    await run_every_way(ways, scenario)


async def test_a_busy_source_stopped_and_resumed_goes_on_where_it_stopped(ways: list[Way]) -> None:
    async def scenario(w: Way) -> None:
        await stopped_busy(w, "busy-plain", "none")

    await run_every_way(ways, scenario)


def test_positions_are_where_the_lines_start() -> None:
    text = "".join(f"{line(i)}\n" for i in range(ALTERED_TO + 1))
    assert text[position_of(ALTERED_TO) :] == f"{line(ALTERED_TO)}\n"
