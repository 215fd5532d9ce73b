"""`repute serve` on a fresh embedded store in a subprocess, for the benchmarks that go through real HTTP."""

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from service.testing.live import free_port


@dataclass(frozen=True)
class Served:
    base_url: str
    key: str
    pid: int

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}


def _wait_ready(process: subprocess.Popen, port: int) -> None:
    for _ in range(600):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("server did not start")


@contextmanager
def served() -> Iterator[Served]:
    with tempfile.TemporaryDirectory() as directory:
        data_dir, port = Path(directory), free_port()
        process = subprocess.Popen(
            [sys.executable, "-m", "service", "serve", "--port", str(port)],
            env={**os.environ, "REPUTE_DATA_DIR": str(data_dir)},
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            _wait_ready(process, port)
            key = (data_dir / "admin.key").read_text().strip()
            yield Served(f"http://127.0.0.1:{port}", key, process.pid)
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (all its threads), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load_average() -> str:
    return "load average (1/5/15 min) " + " / ".join(f"{value:.1f}" for value in os.getloadavg())
