"""Progress lines on stderr: ``[2/6] reading Kafka ... (0.4s)``; each step says how long the previous took."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    def __init__(self, job: str, steps: int, stream: TextIO | None = None) -> None:
        self.job, self.steps = job, steps
        self.stream = stream or sys.stderr
        self.step_no = 0
        self.started = time.monotonic()
        self._step_started = self.started

    def step(self, message: str) -> None:
        self.step_no += 1
        self._step_started = time.monotonic()
        print(f"{self.job}: [{self.step_no}/{self.steps}] {message}", file=self.stream, flush=True)

    def note(self, message: str) -> None:
        elapsed = time.monotonic() - self._step_started
        print(f"{self.job}:       {message} ({elapsed:.1f}s)", file=self.stream, flush=True)

    @property
    def elapsed_s(self) -> float:
        return time.monotonic() - self.started
