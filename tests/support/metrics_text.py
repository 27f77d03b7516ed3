"""Reading Prometheus' text format as a scraper does, for tests of ``/metrics``."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families


def samples(text: str, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    """The samples of ``name`` in ``text``: their labels, sorted, to their value."""
    return {
        tuple(sorted(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == name
    }


__all__ = ["samples"]
