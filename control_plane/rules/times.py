"""Times as the sidecar's answers and the Spark jobs' reports write them and as their users give them:
epoch milliseconds (a Kafka record's timestamp) to ISO-8601 UTC with milliseconds (``iso``), and epoch
milliseconds or an ISO-8601 date-time back to epoch milliseconds (``parse_time``).

Pure: a text that is no time raises a plain ``ValueError``; each caller says so in its own terms (the REST
layer a 400, a Spark job's command line its error line).
"""

from __future__ import annotations

from datetime import UTC, datetime


def iso(timestamp_ms: int | None) -> str | None:
    """``timestamp_ms`` as ISO-8601 in UTC, to the millisecond, with a ``Z`` (``2023-11-14T22:13:20.123Z``);
    None stays None."""
    if timestamp_ms is None:
        return None
    moment = datetime.fromtimestamp(timestamp_ms / 1000, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_time(text: str) -> int:
    """Epoch milliseconds, or an ISO-8601 date-time (UTC when it names no zone; ``Z`` or ``z`` for UTC), as
    epoch milliseconds; ``ValueError`` for anything else."""
    if text.lstrip("-").isdigit():
        return int(text)
    moment = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


__all__ = ["iso", "parse_time"]
