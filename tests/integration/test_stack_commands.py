"""The stack commands themselves: a second ``up`` changes nothing; ``run`` starts the three
processes in the foreground and Ctrl-C (SIGINT) stops all of them."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from tests.support.paths import ROOT
from tests.support.stack import ENV_FILE, STACK_SCRIPT, Stack


def test_second_stack_up_changes_nothing(stack: Stack) -> None:
    before = ENV_FILE.read_text()
    result = subprocess.run([sys.executable, str(STACK_SCRIPT), "up"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0
    assert "already running" in result.stdout
    assert ENV_FILE.read_text() == before


def test_run_serves_and_ctrl_c_stops_all_three(tmp_path: Path) -> None:
    env = {**os.environ, "STACK_DIR": str(tmp_path / "stack"), "STACK_CACHE_DIR": str(ROOT / ".stack" / "cache")}
    proc = subprocess.Popen(
        [sys.executable, str(STACK_SCRIPT), "run"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        start_new_session=True,
    )
    assert proc.stdout is not None
    lines: list[str] = []
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            if "Ctrl-C stops" in line:
                break
        banner = "".join(lines)
        match = re.search(r"Sidecar\s+(http://127\.0\.0\.1:\d+)", banner)
        assert match, banner
        with urllib.request.urlopen(match.group(1) + "/connectors", timeout=10) as answer:
            assert answer.status == 200
            assert answer.read() == b"[]"
        pids = [int(p) for p in re.findall(r'"pid": (\d+)', (tmp_path / "stack" / "pids.json").read_text())]
        assert len(pids) == 3
        os.killpg(proc.pid, signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0, banner + out
        assert "stopped" in out
        for pid in pids:
            assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split(")")[-1][:3]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            subprocess.run([sys.executable, str(STACK_SCRIPT), "down"], env=env, check=False)
