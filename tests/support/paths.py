"""Where the checkout is, for the tests and benchmarks that read its files or start its scripts."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
